// An UNTRAINED stand-in for the two GRU dates models, used only while their files are not in the build: random
// weights (a fixed seed), the shape of RnnSeq2SeqModel.translate's result, and `standIn: true` so the page says so.

import { mulberry32 } from '../models/random.js';

const HIDDEN = 64;
const EMB = 32;
const BUCKETS = 256;
const TARGET = [...'0123456789-'];
const EOS = TARGET.length;
const STEPS = 11; // YYYY-MM-DD and the end

const matrix = (r, rows, cols, scale) => Float32Array.from({ length: rows * cols }, () => (r() * 2 - 1) * scale);

/** As the dates models' source tokeniser (words_ascii_lower): lower case, split on anything but a–z and 0–9. */
export const sourceWords = (text) => String(text).toLowerCase().match(/[a-z0-9]+/g) ?? [];

function hashWord(w) {
  let h = 0x811c9dc5;
  for (const ch of w) h = Math.imul(h ^ ch.codePointAt(0), 0x01000193);
  return (h >>> 0) % BUCKETS;
}

/** h' = tanh(W x + U h): a plain recurrent cell (the stand-in needs the shape of a GRU's output, not its gates). */
function cell(W, U, x, h) {
  const out = new Float32Array(HIDDEN);
  for (let i = 0; i < HIDDEN; i++) {
    let s = 0;
    for (let k = 0; k < x.length; k++) s += W[i * x.length + k] * x[k];
    for (let k = 0; k < HIDDEN; k++) s += U[i * HIDDEN + k] * h[k];
    out[i] = Math.tanh(s);
  }
  return out;
}

/**
 * A stand-in model: `attention` false is the bottleneck (the decoder sees only the last encoder state), true adds
 * dot-product attention over every encoder state.
 */
export function createStandIn({ attention }) {
  const r = mulberry32(attention ? 2 : 1); // seeded: the stand-in is the same on every load
  const srcEmb = matrix(r, BUCKETS, EMB, 1);
  const tgtEmb = matrix(r, EOS + 1, EMB, 1);
  const We = matrix(r, HIDDEN, EMB, 0.5), Ue = matrix(r, HIDDEN, HIDDEN, 0.25);
  const Wd = matrix(r, HIDDEN, EMB, 0.5), Ud = matrix(r, HIDDEN, HIDDEN, 0.25);
  const Wo = matrix(r, EOS + 1, 2 * HIDDEN, 0.3);
  return {
    standIn: true,
    kind: 'rnn_seq2seq',
    config: { hidden: HIDDEN, attention: attention ? 'dot' : 'none', cell: 'stand-in' },
    tokenizeSource: (text) => ({ tokens: sourceWords(text) }),
    translate(text) {
      const words = sourceWords(text);
      const states = [];
      let h = new Float32Array(HIDDEN);
      for (const w of words) states.push(h = cell(We, Ue, srcEmb.subarray(hashWord(w) * EMB, (hashWord(w) + 1) * EMB), h));
      const context = Float32Array.from(h);
      const tokens = [], weights = [], queries = [];
      let prev = EOS;
      for (let t = 0; t < STEPS && words.length; t++) {
        h = cell(Wd, Ud, tgtEmb.subarray(prev * EMB, (prev + 1) * EMB), h);
        queries.push(h);
        const c = new Float32Array(HIDDEN);
        if (attention) {
          const s = states.map((hs) => hs.reduce((a, v, k) => a + v * h[k], 0));
          const m = Math.max(...s);
          const e = s.map((x) => Math.exp(x - m));
          const z = e.reduce((a, b) => a + b, 0);
          const w = e.map((x) => x / z);
          weights.push(w);
          states.forEach((hs, j) => { for (let k = 0; k < HIDDEN; k++) c[k] += w[j] * hs[k]; });
        }
        let best = 0, bestV = -Infinity;
        for (let o = 0; o < TARGET.length; o++) { // never the end before the last step: the answer has a date's shape
          let v = 0;
          for (let k = 0; k < HIDDEN; k++) v += Wo[o * 2 * HIDDEN + k] * c[k] + Wo[o * 2 * HIDDEN + HIDDEN + k] * h[k];
          if (v > bestV) { bestV = v; best = o; }
        }
        prev = t === STEPS - 1 ? EOS : best;
        tokens.push(prev === EOS ? '<eos>' : TARGET[prev]);
      }
      const tensor = (rows, width) => ({ data: Float32Array.from(rows.flatMap((r) => Array.from(r))), shape: [rows.length, width] });
      // RnnSeq2SeqModel.translate's fields (web/src/index.d.ts, RnnTranslation), ids left out.
      return {
        outputTokens: tokens,
        text: tokens.filter((x) => x !== '<eos>').join(''),
        sourceTokens: words,
        context,
        attention: attention && weights.length ? tensor(weights, words.length) : null,
        decoderStates: attention ? tensor(queries, HIDDEN) : null,
        encoderStates: tensor(states, HIDDEN),
      };
    },
  };
}
