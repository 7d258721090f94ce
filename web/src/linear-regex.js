// A tokenizer.json regex outside the known patterns: accepted only if redos-detector finds that a backtracking engine
// matching it from one position cannot backtrack without bound (Hugging Face's tokenizers runs it in Oniguruma, which
// backtracks: a real checkpoint has no such pattern, and `(?:[\w\s]+)+!` is refused here), and then run in re2js, a
// linear-time engine (RE2's automata in pure JavaScript), so that one search costs time proportional to the text
// where JavaScript's RegExp could take exponential time and cannot be stopped. The searches from every position of
// a text can still add up to its square (`\p{L}*!|\p{L}`): tokenizer-guards.js bounds their time. Imported only for
// a checkpoint with such a pattern.
import { RE2JS } from 're2js';
import { isSafePattern } from 'redos-detector';

// @huggingface/tokenizers rewrites Oniguruma's syntax into JavaScript's (its rewrite_oniguruma_to_js): \s becomes
// \p{White_Space}, (?i:…) ASCII classes, ^ and $ line anchors written as lookarounds. The anchors go back to the RE2
// forms that mean the same (lookahead has no linear-time form); the rest of its output is RE2 syntax once
// translateRegExp has turned \u{…} into \x{…}.
// Each: the library's form, RE2's, and the multiline-mode anchor redos-detector checks in its place.
const ANCHORS = [
  ['(?:(?<![\\s\\S])|(?<=\\n))', '(?m:^)', '^'],
  ['(?:(?=\\n)|(?![\\s\\S]))', '(?m:$)', '$'],
  ['(?<![\\s\\S])', '\\A', '^'],
  ['(?![\\s\\S])', '\\z', '$'],
];

/** Most steps one position of the text may cost (RE2's program size): a bound on the time of one search. */
export const MAX_PROGRAM_SIZE = 10_000;
/** redos-detector's limits: its default score and steps, and a time; a check that needs longer is not a proof. */
export const REDOS = { maxScore: 200, maxSteps: 20_000, timeout: 400 };

/**
 * Checks `source` (a JavaScript pattern as @huggingface/tokenizers compiled it) with redos-detector, in at most
 * `timeout` ms, and compiles it for re2js. Returns
 * `{ matches(text) }` (the [start, end) of every match, in UTF-16 units) or throws a SyntaxError saying why re2js
 * cannot run it (lookahead, backreferences, a repeat over 1,000, a program over MAX_PROGRAM_SIZE).
 */
export function compileLinear(source, timeout = REDOS.timeout) {
  // Anchored: the backtracking of one search (across positions re2js and the guards' deadline take over). The
  // library's lookaround anchors are checked as the ^ and $ of multiline mode, which redos-detector reads.
  let checked = source;
  for (const [js, , anchor] of ANCHORS) checked = checked.split(js).join(anchor);
  const check = isSafePattern(`^(?:${checked})`, { unicode: true, multiLine: true, ...REDOS, timeout: Math.min(timeout, REDOS.timeout) });
  if (!check.safe) {
    if (check.error === 'timedOut' || check.error === 'hitMaxSteps') {
      throw new SyntaxError(`redos-detector could not show within ${check.error === 'timedOut' ? `${Math.round(timeout)} ms` : `${REDOS.maxSteps} steps`} that it cannot backtrack without bound`);
    }
    const ways = check.score.infinite ? 'without bound' : `${check.score.value} ways (over ${REDOS.maxScore})`;
    throw new SyntaxError(`redos-detector finds that a backtracking engine can match it ${ways}: catastrophic backtracking, on which Hugging Face's Oniguruma would hang too`);
  }
  let re2 = source;
  for (const [js, re] of ANCHORS) re2 = re2.split(js).join(re);
  re2 = re2.replace(/\\([pP])\{Script=([A-Za-z_]+)\}/g, '\\$1{$2}');
  let compiled;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(re2), RE2JS.LOOKBEHINDS);
  } catch (cause) {
    throw new SyntaxError(`re2js cannot run it (${cause.message})`, { cause });
  }
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) throw new SyntaxError(`its RE2 program has ${size.toLocaleString('en-US')} steps, over the ${MAX_PROGRAM_SIZE.toLocaleString('en-US')} allowed`);
  return {
    *matches(text) {
      for (const m of compiled.matchAll(text)) yield [m.index, m.index + m[0].length];
    },
  };
}
