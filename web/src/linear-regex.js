// A tokenizer.json regex outside the known patterns: accepted only if redos-detector finds that a backtracking engine
// cannot backtrack without bound on it (Hugging Face's tokenizers runs it in Oniguruma, which backtracks: a real
// checkpoint has no such pattern), and then run in re2js, a linear-time engine (RE2's automata in pure JavaScript), so
// that one search costs time proportional to the text where JavaScript's RegExp could take exponential time and
// cannot be stopped. Imported only for a checkpoint with such a pattern.
import { RE2JS } from 're2js';
import { isSafePattern } from 'redos-detector';

// @huggingface/tokenizers rewrites Oniguruma's syntax into JavaScript's (its rewrite_oniguruma_to_js): \s becomes
// \p{White_Space}, (?i:…) ASCII classes, ^ and $ line anchors written as lookarounds. The anchors go back to the RE2
// forms that mean the same (lookahead has no linear-time form); the rest of its output is RE2 syntax once
// translateRegExp has turned \u{…} into \x{…}.
const ANCHORS = [
  ['(?:(?<![\\s\\S])|(?<=\\n))', '(?m:^)'],
  ['(?:(?=\\n)|(?![\\s\\S]))', '(?m:$)'],
  ['(?<![\\s\\S])', '\\A'],
  ['(?![\\s\\S])', '\\z'],
];

/** Most steps one position of the text may cost (RE2's program size): a bound on the time of one search. */
export const MAX_PROGRAM_SIZE = 10_000;
/** redos-detector's limits: its default score and steps; a check that needs longer is not a proof. */
const REDOS = { maxScore: 200, maxSteps: 20_000, timeout: 2000 };

/**
 * Compiles `source`, a JavaScript pattern as @huggingface/tokenizers compiled it, for re2js. Returns
 * `{ matches(text) }` (the [start, end) of every match, in UTF-16 units) or throws a SyntaxError saying why re2js
 * cannot run it (lookahead, backreferences, a repeat over 1,000, a program over MAX_PROGRAM_SIZE).
 */
export function compileLinear(source) {
  const check = isSafePattern(source, { unicode: true, ...REDOS });
  if (!check.safe) {
    const score = check.score.infinite ? 'without bound' : `${check.score.value} ways`;
    const why = check.error === 'timedOut' || check.error === 'hitMaxSteps' ? `its check did not finish within ${check.error === 'timedOut' ? `${REDOS.timeout} ms` : `${REDOS.maxSteps} steps`}`
      : `a backtracking engine can match it ${score} (redos-detector)`;
    throw new SyntaxError(`${why}, as catastrophic backtracking does`);
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
