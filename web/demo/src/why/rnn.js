// The two GRU dates models of the "Why attention" section: the trained files when the build has them (fetched on
// first use), else the untrained stand-in (standin.js), and the last run of each, cached by sentence.
// RnnSeq2SeqModel is named here, not only checked by kind: the package says "sideEffects": false, and a bundle that
// never names the class leaves out the module that registers the kind with loadModel (the file then loads as a
// transformer Seq2SeqModel).
import { loadModel, RnnSeq2SeqModel } from 'attnscope';
import { createStandIn } from './standin.js';

// Vite lists models/dates-gru*.safetensors at build time: empty until the trained files are in models/, and then the
// files are assets of the build (so the service worker caches them) without a change here.
const FILES = import.meta.glob('../../../../models/dates-gru*.safetensors', { query: '?url', import: 'default', eager: true });

const entry = { status: 'idle', loaded: 0, total: 0, bottleneck: null, attention: null, standIn: false, error: null };

/** The models' entry as it is, without starting a download (for the test hooks). */
export const rnnEntry = () => entry;

/** Whether this build has the trained GRU files. */
export const hasTrainedFiles = () => Object.keys(FILES).length >= 2;

/**
 * The models: `{ status: 'loading' | 'ready' | 'error', bottleneck, attention, standIn }`. The first call starts the
 * downloads; `onChange` runs when they are done.
 */
export function rnnModels(onChange) {
  if (entry.status !== 'idle') return entry;
  if (!hasTrainedFiles()) {
    Object.assign(entry, { status: 'ready', standIn: true, bottleneck: createStandIn({ attention: false }), attention: createStandIn({ attention: true }) });
    return entry;
  }
  entry.status = 'loading';
  Promise.all(Object.values(FILES).map(async (url) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    return loadModel(new Uint8Array(await res.arrayBuffer()));
  }))
    .then((models) => {
      // Which is which: config.attention is 'none' for the bottleneck and 'dot' with attention.
      for (const m of models) {
        if (!(m instanceof RnnSeq2SeqModel)) throw new TypeError(`a dates-gru file loaded as '${m.kind}', not as an RnnSeq2SeqModel`);
        if (m.config.attention === 'none') entry.bottleneck = m;
        else entry.attention = m;
      }
      if (!entry.bottleneck || !entry.attention) throw new Error('expected one GRU model without attention and one with it');
      entry.status = 'ready';
    })
    .catch((err) => { entry.status = 'error'; entry.error = err; console.error(err); })
    .finally(onChange);
  return entry;
}

/** Rows of a [N, width] { data, shape } tensor (or an array of rows), or null. */
function rowsOf(att) {
  if (!att) return null;
  if (Array.isArray(att)) return att.map((row) => Float32Array.from(row));
  const [n, s] = att.shape;
  return [...Array(n).keys()].map((t) => att.data.slice(t * s, (t + 1) * s));
}

/** One model on `text`: RnnTranslation (web/src/index.d.ts) as the views want it, rows instead of flat tensors. */
function runOne(model, text) {
  const tr = model.translate(text);
  return {
    tokens: [...tr.outputTokens],
    text: tr.text,
    context: Float32Array.from(tr.context),
    weights: rowsOf(tr.attention),
    queries: rowsOf(tr.decoderStates),
    states: rowsOf(tr.encoderStates),
    sourceTokens: tr.sourceTokens,
  };
}

let last = { text: null, run: null };

/** Both models on `text` (cached: a change of step or language costs nothing). */
export function rnnRun(models, text) {
  if (last.text === text && last.models === models.attention) return last.run;
  // translate() refuses a source without words (a RangeError): that is the empty view, not an error.
  const words = models.attention.tokenizeSource(text).tokens;
  const run = !words.length ? { empty: true } : { bottleneck: runOne(models.bottleneck, text), attention: runOne(models.attention, text) };
  if (!run.empty) run.sourceTokens = run.attention.sourceTokens;
  last = { text, models: models.attention, run };
  return run;
}

/** The attention model's decoding length for `text`, if it has been run (the player needs it). */
export const lastSteps = () => last.run?.attention?.weights?.length ?? 0;

/** The last run of both models (for the test hooks). */
export const lastRun = () => last.run;
