// The libraries the benchmark compares, by the short id the command line and the child processes use.
export const PEER_IDS = ['attnscope', 'tfjs', 'ort', 'plain'];

/** Imports a peer's adapter: { name, load(), create(lib, {E, H, state, needWeights}) }. */
export function importPeer(id) {
  if (!PEER_IDS.includes(id)) throw new Error(`unknown library '${id}' (one of ${PEER_IDS.join(', ')})`);
  return import(`./${id}.mjs`);
}
