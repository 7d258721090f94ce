// The forward-pass comparison at one thread count, shared by the Node child (bench/forward.mjs) and the browser page
// (bench/browser/page.html): every library loaded at that thread count, then each configuration timed side by side.
import { Unavailable, flops, makeCase, maxAbsDiff, timeInterleaved } from './common.mjs';
import { startBusy } from './busy.mjs';
import { importPeer } from './peers/index.mjs';

/** Plain JS is skipped above this sequence length: about 17 s a run at (2048, 768, 12), 30–40× attnscope's time. */
export const PLAIN_MAX_SEQ = 512;

const firstLine = (e) => String(e?.message ?? e).split('\n')[0].slice(0, 200);

/**
 * `busy` threads spin beside the libraries throughout (bench/busy.mjs). Returns { threads, busy, peers: { [id]:
 * { name, unavailable?, error? } }, rows: [...] }, one row per configuration and library: the fastest variant's
 * { ms, bestMs, reps, gflops, variant, others: [{ variant, ms }], diffOutput, diffWeights } against attnscope (or
 * { unavailable } / { error } / { skipped }).
 */
export async function runForward({ ids, configs, threads, busy = 0, allVariants = false, quick = false, progress = () => {} }) {
  // quick (the smoke mode): one warm-up and one timed call each, to show that every path runs and agrees.
  const timing = quick ? { warmup: 1, minReps: 1, slowReps: 1, minMs: 0, maxReps: 1 } : {};
  const peers = {};
  for (const id of ids) {
    const peer = await importPeer(id);
    peers[id] = { name: peer.name, peer };
    try {
      peers[id].lib = await peer.load({ threads });
    } catch (e) {
      if (e instanceof Unavailable) peers[id].unavailable = e.message;
      else peers[id].error = firstLine(e);
      progress(`${peer.name} at ${threads} thread(s): ${peers[id].unavailable ? 'n/a' : 'failed'}: ${peers[id].unavailable ?? peers[id].error}`);
    }
  }

  // Started once every library is loaded (its thread pool made), stopped after the last configuration.
  const stopBusy = await startBusy(busy);
  if (busy) progress(`${busy} busy neighbour thread(s) spinning beside the libraries`);
  const rows = [];
  for (const [L, E, H] of configs) {
    const c = makeCase(L, E, H);
    const byId = {};
    const layers = {}; // "id variant" → layer
    for (const id of ids) {
      const p = peers[id];
      if (p.unavailable || p.error) {
        byId[id] = { id, L, E, H, unavailable: p.unavailable, error: p.error };
        continue;
      }
      if (id === 'plain' && L > PLAIN_MAX_SEQ) {
        byId[id] = { id, L, E, H, skipped: `above ${PLAIN_MAX_SEQ} tokens (tens of seconds a run)` };
        continue;
      }
      const variants = (!allVariants && p.peer.variantsFor?.({ L, E, H })) || p.peer.variants || [null];
      for (const variant of variants) {
        try {
          layers[`${id} ${variant}`] = await p.peer.create(p.lib, { E, H, state: c.state, needWeights: true, variant });
        } catch (e) {
          byId[id] ??= { id, L, E, H, error: firstLine(e) };
        }
      }
    }
    progress(`${threads} thread(s), (${L}, ${E}, ${H}) with weights: ${Object.keys(layers).map((k) => k.replace(/ null$/, '')).join(', ')}`);
    const fns = Object.fromEntries(Object.entries(layers).map(([key, mha]) => [key, () => mha.forward(c.x, L, true)]));
    let timings = {};
    try {
      timings = await timeInterleaved(fns, timing);
    } catch {
      // One library throwing must not hide the others: time them one by one to find and report it.
      for (const [key, fn] of Object.entries(fns)) {
        try {
          timings[key] = (await timeInterleaved({ [key]: fn }, timing))[key];
        } catch (err) {
          timings[key] = { error: firstLine(err) };
        }
      }
    }
    for (const mha of Object.values(layers)) await mha.dispose();

    // Every path is checked against attnscope's fresh-array result; per library, the fastest path (by median) stands
    // for it and the others are listed beside it; attnscope's `out` path is checked against the same result.
    const refLast = timings['attnscope fresh']?.last;
    const brief = ({ variant, ms, error, diffOutput, diffWeights }) => ({ variant, ms, error, diffOutput, diffWeights });
    for (const [key, t] of Object.entries(timings)) {
      const [id, variant] = key.split(' ');
      const v = variant === 'null' ? null : variant;
      const entry = t.error ? { id, L, E, H, variant: v, error: t.error } : { id, L, E, H, variant: v, ...t, gflops: flops(L, E) / (t.ms * 1e6) };
      if (refLast && t.last && key !== 'attnscope fresh') {
        entry.diffOutput = maxAbsDiff(t.last.output, refLast.output);
        entry.diffWeights = maxAbsDiff(t.last.weights, refLast.weights);
      }
      const cur = byId[id];
      if (!cur || (cur.error && !entry.error) || (entry.ms && cur.ms && entry.ms < cur.ms)) {
        entry.others = [...(cur?.others ?? []), ...(cur?.variant !== undefined ? [brief(cur)] : [])];
        byId[id] = entry;
      } else {
        cur.others = [...(cur.others ?? []), brief(entry)];
      }
    }
    const ref = byId.attnscope?.ms ? byId.attnscope : null;
    for (const id of ids) if (ref && byId[id].ms) byId[id].ratio = byId[id].ms / ref.ms;
    for (const id of ids) {
      delete byId[id].last;
      rows.push(byId[id]);
    }
  }
  await stopBusy();
  return {
    threads,
    busy,
    peers: Object.fromEntries(Object.entries(peers).map(([id, p]) => [id, { name: p.name, unavailable: p.unavailable, error: p.error }])),
    rows,
  };
}
