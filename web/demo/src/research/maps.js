// What an opened model's maps show: the attention weights forward returned, or a view of them: one key hidden and
// every row renormalised (the package's hideKeys), or value-weighted, α_ij·‖v_j‖ renormalised per row
// (valueWeighted, with the core's value norms). The session hands the views the maps chosen as the run's `attention`,
// so every map of the tab (the model view, the layer's heads, the enlarged map, the head view) follows the choice,
// and keeps the model's own run beside it for what must read the model (the steps panel's check).
import { hideKeys, valueWeighted, sinkMass } from 'attnscope';

/** One layer `l` of view `shows` of `attention`, written into `out` (the whole maps' size). */
function viewLayer(attention, shows, key, valueNorms, l, out) {
  const [, H, T, S] = attention.shape;
  const per = H * T * S;
  const maps = { data: attention.data.subarray(l * per, (l + 1) * per), shape: [1, H, T, S] };
  const view = shows === 'hidden' ? hideKeys(maps, key)
    : valueWeighted(maps, { data: valueNorms.data.subarray(l * H * S, (l + 1) * H * S), shape: [1, H, S] });
  out.set(view.data, l * per);
}

/**
 * The maps `[L, H, T, T]` of view `shows` ('hidden' with key position `key`, or 'value' with `valueNorms`
 * `[L, H, T]`), computed one layer at a time (the package's calls on one layer's maps each).
 */
export function viewMaps(attention, shows, key, valueNorms) {
  const out = new Float32Array(attention.data.length);
  for (let l = 0; l < attention.shape[0]; l++) viewLayer(attention, shows, key, valueNorms, l, out);
  return { data: out, shape: [...attention.shape] };
}

/**
 * Maps up to this many weights are viewed at once, in the pass that asks (GPT-2 small at 64 tokens: about 10 ms);
 * larger ones a layer per task, so that a key pressed meanwhile is not kept waiting (at 512 tokens the whole view
 * took 280–330 ms of CPU, a layer 25).
 */
export const AT_ONCE = 2 ** 20;

// The view last computed (kept while nothing changes: the views cache their pictures by the run object), and the one
// being computed a layer per task.
let kept = { run: null, id: '', norms: null, shown: null };
let job = null;

/**
 * What the maps show for the opened model's `run` under the page's choice `o` (state.open): `{ run, view }`, `run` the
 * forward run with its `attention` replaced by the view's maps (the same object while nothing changed: the views
 * cache their pictures by it), `view` null for the weights, else `{ shows, key, token, waiting }` for the marks.
 * `valueNorms` are the run's, null while the Worker computes them. Until a view is ready (the norms, or large maps
 * computed a layer per task, after which `ready` is called) the maps are the weights, and `waiting` says why:
 * 'norms' or 'view'.
 */
export function mapsShown(o, run, valueNorms, ready = () => {}) {
  const T = run.ids.length;
  const shows = o.shows;
  // A view no longer asked for stops computing (its run's maps may go back to the model Worker: open/session.js).
  if (shows !== 'hidden' && shows !== 'value') { job = null; return { run, view: null }; }
  const key = shownKey(o.key, T);
  const view = { shows, key, token: run.tokens?.[key] ?? `#${run.ids[key]}`, waiting: false };
  if (shows === 'value' && !valueNorms) { job = null; return { run, view: { ...view, waiting: 'norms' } }; }
  const id = `${shows}|${shows === 'hidden' ? key : ''}`;
  const norms = shows === 'value' ? valueNorms : null;
  const same = (x) => x && x.run === run && x.id === id && x.norms === norms;
  if (same(kept)) return { run: kept.shown, view };
  if (run.attention.data.length <= AT_ONCE) {
    job = null;
    kept = { run, id, norms, shown: { ...run, attention: viewMaps(run.attention, shows, key, norms) } };
    return { run: kept.shown, view };
  }
  if (!same(job)) {
    const out = new Float32Array(run.attention.data.length);
    const mine = job = { run, id, norms };
    const step = (l) => {
      // Another view or run was asked for meanwhile, or the maps went back to the Worker (length 0 once transferred).
      if (job !== mine || run.attention.data.length === 0) return;
      viewLayer(run.attention, shows, key, norms, l, out);
      if (l + 1 < run.attention.shape[0]) { setTimeout(() => step(l + 1), 0); return; }
      job = null;
      kept = { run, id, norms, shown: { ...run, attention: { data: out, shape: [...run.attention.shape] } } };
      ready();
    };
    setTimeout(() => step(0), 0);
  }
  return { run, view: { ...view, waiting: 'view' } };
}

/** The key the page uses: the one picked, or the first token when the input has become shorter than it. */
export const shownKey = (key, T) => (key >= 0 && key < T ? key : 0);

/**
 * The queries a sink's mass is averaged over: every query of an encoder; in a causal model the queries that can see
 * the key, and not query 0, whose one key is the first token (weight 1 whatever the head does).
 */
export const sinkFrom = (key, T, causal) => (causal ? Math.min(Math.max(key, 1), T - 1) : 0);

/** Per head `[layers × heads]`, the mean weight on key `key` (sinkMass), over the queries sinkFrom names. */
export const sinkMassOf = (attention, key, causal) => sinkMass(attention, { key, fromQuery: sinkFrom(key, attention.shape[2], causal) }).data;

/**
 * One head's row at query `qi` four ways, for the sink table: the weights α, the weights with key `key` hidden and the
 * row renormalised, ‖v_j‖ (null without the norms) and value-weighted α·‖v‖ renormalised (null without the norms).
 */
export function rowViews(attention, layer, head, qi, key, valueNorms) {
  const [, H, T, S] = attention.shape;
  const at = ((layer * H + head) * T + qi) * S;
  const row = { data: attention.data.slice(at, at + S), shape: [1, 1, 1, S] };
  const norms = valueNorms ? valueNorms.data.slice((layer * H + head) * S, (layer * H + head + 1) * S) : null;
  return {
    weights: row.data,
    hidden: hideKeys(row, key).data,
    norms,
    value: norms ? valueWeighted(row, { data: norms, shape: [1, 1, S] }).data : null,
  };
}
