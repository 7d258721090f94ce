// A probability as the page's lists print it: whole percents from 10 % to 99 %, one decimal outside them (so 99.7 %
// does not read as certain), "<0.1%" for what would print as 0.0 % (over GPT-2's 50,257 tokens most of a top ten is
// far below 0.05 %), and "100%" only when it rounds there. One owner for every list: next token, heads off, decoding,
// the logit lens.
export const percent = (p) => (p >= 0.9995 ? '100%' : p < 0.001 ? '<0.1%' : `${(p * 100).toFixed(p > 0.99 || p < 0.1 ? 1 : 0)}%`);
