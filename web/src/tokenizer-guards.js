// Takes over the parts of an @huggingface/tokenizers Tokenizer that run tokenizer.json's patterns: Split, and Replace
// (normalizer, pre-tokenizer, decoder). They then find matches as Hugging Face's tokenizers does (Oniguruma's
// find_iter: an empty match right after a match is skipped), split by every SplitDelimiterBehavior (the library
// treats all but Removed as Isolated), replace with the content as written (the library's replaceAll reads $&), and
// stop with a RangeError past a time or length budget. A known pattern runs on the library's own RegExp; any other
// runs in re2js (linear-regex.js), imported only then.

/**
 * What one encode or decode call may spend: the deadline of a pattern outside the known ones, the text's growth, and
 * the steps of the two searches whose cost per character a file sets (the added-token splitter's walk, WordPiece's
 * longest match).
 */
export class TokenizerBudget {
  /** Milliseconds that matching patterns outside the known ones may take in one call. */
  static MATCH_MS = 1000;
  /**
   * Characters each of the added-token splitter and WordPiece may visit in one call: about half a second in V8. On
   * real text the splitter visits one or two a character, and WordPiece a few tens (a word's pieces are tried from
   * the longest entry's length down); a hostile file makes either visit up to its longest added token or word per
   * character.
   */
  static SEARCH_STEPS = 2 ** 24;
  deadline = Infinity;
  caller = '';
  /** Characters a normalizer or a Replace may make of one text (set from the text limit). */
  maxChars = 2 ** 24;
  /** Steps of each search in this call, by search. */
  steps = {};

  start(caller) {
    this.caller = caller;
    this.deadline = performance.now() + TokenizerBudget.MATCH_MS;
    this.steps = {};
  }

  /** Counts `n` steps of `search`; past SEARCH_STEPS of it in one call, `refuse()`'s RangeError. */
  spend(search, n, refuse) {
    const steps = (this.steps[search] ?? 0) + n;
    this.steps[search] = steps;
    if (steps > TokenizerBudget.SEARCH_STEPS) throw refuse();
  }
}

/** Milliseconds redos-detector may take over all the unknown patterns of one file. */
const CHECKS_MS = 1000;

// A pattern no text matches: what the library compiles in place of a pattern that goes to re2js, so that its own
// constructor (which normalizes the added tokens) never runs that pattern in the backtracking engine.
const NEVER = '(?!)';

/** A copy of the component sections of `json` with every Regex that is not known replaced by NEVER. */
export function withPlaceholders(json, isKnown) {
  const swap = (node) => {
    if (Array.isArray(node)) return node.map(swap);
    if (node === null || typeof node !== 'object') return node;
    if (typeof node.Regex === 'string' && Object.keys(node).length === 1) return isKnown(node.Regex) ? node : { Regex: NEVER };
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, swap(v)]));
  };
  return { ...json, normalizer: swap(json.normalizer), pre_tokenizer: swap(json.pre_tokenizer), decoder: swap(json.decoder) };
}

/**
 * re2js matchers for the regexes of `sites` ({ path, pattern } of tokenizer-json.js) that are not known, by path.
 * `lib` is @huggingface/tokenizers: its Split compiles a pattern (without running it) into the JavaScript form
 * the library would run, which re2js then reads. A pattern re2js cannot run is a TypeError naming its field.
 */
export async function linearMatchers(sites, lib, prefix, excerpt) {
  const unknown = sites.filter((s) => !s.known);
  const out = new Map();
  if (!unknown.length) return out;
  let compileLinear;
  try {
    ({ compileLinear } = await import('./linear-regex.js')); // re2js and redos-detector, for such a file only
  } catch (cause) {
    throw new Error(`${prefix}: ${unknown[0].path} is not one of the known patterns, and checking and running it needs the packages re2js and `
      + `redos-detector, which could not be imported (${cause.message}); without a bundler, map them in the page as @huggingface/tokenizers is `
      + '(docs/huggingface.md)', { cause });
  }
  const checksEnd = performance.now() + CHECKS_MS;
  for (const { path, pattern } of unknown) {
    const refuse = (why) => new TypeError(`${prefix}: ${path}: expected one of the known pre-tokenizer patterns (docs/huggingface.md) or a pattern a `
      + `linear-time engine runs, got ${excerpt(pattern)}: ${why}`);
    let source;
    try {
      source = new lib.SplitPreTokenizer({ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: true }).pattern.source;
    } catch (cause) {
      throw Object.assign(refuse(`JavaScript cannot read it (${cause.message})`), { cause });
    }
    try {
      out.set(path, compileLinear(source, Math.max(1, checksEnd - performance.now())));
    } catch (cause) {
      throw Object.assign(refuse(cause.message), { cause });
    }
  }
  return out;
}

/** The matches of a global RegExp, as [start, end) pairs. */
function* regexpMatches(regexp, text) {
  for (const m of text.matchAll(regexp)) yield [m.index, m.index + m[0].length];
}

/** Oniguruma's rule, which Hugging Face's find_iter keeps: an empty match where the last match ended is skipped. */
function* onigRule(matches) {
  let lastEnd = -1;
  for (const [start, end] of matches) {
    if (start === end && start === lastEnd) continue;
    lastEnd = end;
    yield [start, end];
  }
}

/** A text cut into pieces, each marked as a match or not; the pieces cover the text. */
function pieces(text, matches, invert) {
  const out = [];
  let prev = 0;
  for (const [start, end] of matches) {
    if (prev !== start) out.push([prev, start, invert]);
    out.push([start, end, !invert]);
    prev = end;
  }
  if (prev !== text.length) out.push([prev, text.length, invert]);
  return out;
}

/** NormalizedString::split of Hugging Face's tokenizers: the pieces each behavior keeps, empty ones left out. */
export function splitBy(text, matches, behavior, invert) {
  if (text.length === 0) return [];
  const marked = pieces(text, matches, invert);
  // Contiguous and the Merged behaviors fold a piece into the one before it (in reverse for MergedWithNext).
  const fold = (list, joins, join) => {
    const acc = [];
    let previous = false;
    for (const [s, e, isMatch] of list) {
      if (joins(isMatch, previous) && acc.length) acc[acc.length - 1] = join(acc[acc.length - 1], s, e);
      else acc.push([s, e, false]);
      previous = isMatch;
    }
    return acc;
  };
  const extendEnd = (last, s, e) => [last[0], e, false];
  let kept; // [start, end, removed]
  switch (behavior) {
    case 'Isolated': kept = marked.map(([s, e]) => [s, e, false]); break;
    case 'Removed': kept = marked; break;
    case 'Contiguous': kept = fold(marked, (m, p) => m === p, extendEnd); break;
    case 'MergedWithPrevious': kept = fold(marked, (m, p) => m && !p, extendEnd); break;
    case 'MergedWithNext': kept = fold([...marked].reverse(), (m, p) => m && !p, (last, s) => [s, last[1], false]).reverse(); break;
    default: throw new Error(`unknown Split behavior ${behavior}`); // tokenizer-json.js refused it before
  }
  return kept.filter(([s, e, removed]) => !removed && e > s).map(([s, e]) => text.slice(s, e));
}

/**
 * Points the components of `tokenizer` (an @huggingface/tokenizers Tokenizer built from `json`) that take a pattern
 * at these implementations. `linear` holds the re2js matchers by field path; `budget` bounds each call.
 */
export function guardComponents(tokenizer, json, linear, budget, prefix) {
  const matcher = (instance, node, path) => {
    const re2 = linear.get(`${path}.pattern.Regex`);
    if (!re2) return (text) => onigRule(regexpMatches(instance.pattern, text));
    const where = `${path}.pattern.Regex`;
    return function* timed(text) {
      for (const match of onigRule(re2.matches(text))) {
        if (performance.now() > budget.deadline) {
          throw new RangeError(`${budget.caller}: ${prefix}: ${where}: matching this pattern (not one of the known patterns, so run by re2js) over `
            + `${text.length.toLocaleString('en-US')} characters took over ${TokenizerBudget.MATCH_MS} ms: re2js is linear in each search, but the `
            + 'searches of one text can add up to the square of its length; shorten the text');
        }
        yield match;
      }
    };
  };
  // Replace as Hugging Face's: each match becomes `content`, as written; the text may not outgrow the budget.
  const replacer = (instance, node, path) => {
    const matches = matcher(instance, node, path);
    const content = node.content;
    return (text) => {
      let out = '';
      let prev = 0;
      for (const [start, end] of matches(text)) {
        out += text.slice(prev, start) + content;
        prev = end;
        if (out.length > budget.maxChars) {
          throw new RangeError(`${budget.caller}: ${prefix}: ${path}: this Replace made the text longer than ${budget.maxChars.toLocaleString('en-US')} characters`);
        }
      }
      return prev === 0 ? text : out + text.slice(prev);
    };
  };
  const visit = {
    normalizer: { Replace: (inst, node, path) => { const r = replacer(inst, node, path); inst.normalize = r; } },
    pre_tokenizer: {
      Replace: (inst, node, path) => { const r = replacer(inst, node, path); inst.pre_tokenize_text = (text) => [r(text)]; },
      Split: (inst, node, path) => {
        const matches = matcher(inst, node, path);
        inst.pre_tokenize_text = (text) => splitBy(text, [...matches(text)], node.behavior, node.invert);
      },
    },
    decoder: { Replace: (inst, node, path) => { const r = replacer(inst, node, path); inst.decode_chain = (tokens) => tokens.map(r); } },
  };
  // The library keeps a Sequence's parts under other names than the file does.
  const parts = { normalizer: ['normalizers', 'normalizers'], pre_tokenizer: ['pretokenizers', 'tokenizers'], decoder: ['decoders', 'decoders'] };
  const walk = (section, node, inst, path) => {
    if (!node || !inst) return;
    const [fileKey, libKey] = parts[section];
    if (node.type === 'Sequence') node[fileKey].forEach((part, i) => walk(section, part, inst[libKey][i], `${path}.${fileKey}[${i}]`));
    else visit[section][node.type]?.(inst, node, path);
  };
  walk('normalizer', json.normalizer, tokenizer.normalizer, 'normalizer');
  walk('pre_tokenizer', json.pre_tokenizer, tokenizer.pre_tokenizer, 'pre_tokenizer');
  walk('decoder', json.decoder, tokenizer.decoder, 'decoder');
}

/**
 * The added tokens marked `normalized` are looked up by their normalized text, which the library's constructor
 * worked out with the placeholders in place: worked out again here with the real patterns.
 */
export function renormalizeAddedTokens(tokenizer, stale) {
  if (tokenizer.normalizer === null) return;
  for (const [text, token] of stale) if (text !== token.content) tokenizer.added_tokens_map.delete(text);
  const normalized = [];
  for (const token of tokenizer.added_tokens) {
    if (!token.normalized) continue;
    const text = tokenizer.normalizer(token.content);
    normalized.push(text);
    tokenizer.added_tokens_map.set(text, token);
  }
  tokenizer.splitter_normalized = new tokenizer.splitter_normalized.constructor(normalized);
}

/** The normalized texts of the added tokens as the library's constructor found them (see renormalizeAddedTokens). */
export const normalizedAddedTokens = (tokenizer) => (tokenizer.normalizer === null ? []
  : tokenizer.added_tokens.filter((t) => t.normalized).map((t) => [tokenizer.normalizer(t.content), t]));

/**
 * The two searches of @huggingface/tokenizers whose cost per character tokenizer.json sets, as the library does them
 * (the same pieces, in the same order) but counted against `budget`:
 *   - the added-token splitter walks its trie from every position as far as the text follows an added token, so a
 *     token of 1,023 characters against a text of its first character costs 1,023 steps a character (3.5 s for 200k
 *     characters);
 *   - WordPiece tries every piece of a word from the longest down, and builds each, so a word of n characters
 *     against a vocabulary of single letters costs n³/6 (8 s for 512 words of 199 letters). The pieces it tries are
 *     cut to the longest vocabulary entry first: a longer one cannot be in the vocabulary, so the result is the same.
 * Call after renormalizeAddedTokens, which replaces a splitter.
 */
export function guardSearches(tokenizer, json, budget, prefix) {
  let longestAdded = 0; // a loop: a spread of 125,000 added tokens into Math.max overflows the stack
  for (const t of json.added_tokens ?? []) longestAdded = Math.max(longestAdded, t.content.length);
  const steps = TokenizerBudget.SEARCH_STEPS.toLocaleString('en-US');
  const refuseSplit = (text) => () => new RangeError(`${budget.caller}: ${prefix}: added_tokens: finding the added tokens in this text of `
    + `${text.length.toLocaleString('en-US')} characters took more than ${steps} steps (its added tokens have up to `
    + `${longestAdded.toLocaleString('en-US')} characters, and the text keeps repeating the beginning of one); shorten the text`);
  for (const splitter of [tokenizer.splitter_unnormalized, tokenizer.splitter_normalized]) {
    if (!splitter?.trie) continue;
    splitter.split = function split(text) {
      const refuse = refuseSplit(text);
      const out = [];
      const n = text.length;
      let start = 0;
      let i = 0;
      while (i < n) {
        let node = this.trie;
        let found = null;
        let j = i;
        while (j < n && (node = node[text[j]])) {
          if (node.end) found = node.end;
          ++j;
        }
        budget.spend('added_tokens', j - i + 1, refuse);
        if (found) {
          if (i > start) out.push(text.slice(start, i));
          out.push(found);
          i += found.length;
          start = i;
        } else {
          ++i;
        }
      }
      if (start < n) out.push(text.slice(start));
      return out;
    };
  }
  const model = tokenizer.model;
  if (json.model.type !== 'WordPiece' || !model?.tokens_to_ids) return;
  let longest = 1;
  for (const entry of model.tokens_to_ids.keys()) longest = Math.max(longest, [...entry].length);
  const refuseWords = () => new RangeError(`${budget.caller}: ${prefix}: model: WordPiece's longest-match search over the words of this text took `
    + `more than ${steps} steps (words of up to ${model.max_input_chars_per_word} characters, model.max_input_chars_per_word, against `
    + `entries of up to ${longest}); shorten the text`);
  model.encode = function encode(words) {
    const out = [];
    for (const word of words) {
      const chars = [...word];
      if (chars.length > this.max_input_chars_per_word) {
        out.push(this.unk_token);
        continue;
      }
      let unknown = false;
      let i = 0;
      const pieces = [];
      while (i < chars.length) {
        let end = Math.min(chars.length, i + longest);
        let piece = null;
        while (i < end) {
          budget.spend('model', end - i, refuseWords);
          let text = chars.slice(i, end).join('');
          if (i > 0) text = this.config.continuing_subword_prefix + text; // as the library reads it, unset or not
          if (this.tokens_to_ids.has(text)) {
            piece = text;
            break;
          }
          --end;
        }
        if (piece === null) {
          unknown = true;
          break;
        }
        pieces.push(piece);
        i = end;
      }
      if (unknown) out.push(this.unk_token);
      else out.push(...pieces);
    }
    return out;
  };
}
