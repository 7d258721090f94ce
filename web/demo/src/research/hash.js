// The research tools' part of the opened model's state and of the URL: whether the logit lens is shown and which of
// its cells is open, whether the two prompts are compared, the two prompts and answers, the head patched at each
// position, what the maps show (the weights, a key hidden, value-weighted) and the key, whether the sink mass and the
// circuits are shown, and the hook kinds chosen for a cache. A link reopens the same view (open/hash.js calls these).

/** What the maps can show: the model's weights, a view with one key hidden and rows renormalised, value-weighted. */
export const SHOWS = ['weights', 'hidden', 'value'];
/** The hook kinds of a cache (exportCache's, in TransformerLens's order), and their short names in the URL. */
export const HOOK_KINDS = ['hook_resid_pre', 'attn.hook_q', 'attn.hook_k', 'attn.hook_v', 'attn.hook_pattern', 'attn.hook_z',
  'hook_resid_mid', 'hook_resid_post', 'ln_final.hook_normalized'];
const short = (kind) => kind.replace(/^(attn\.)?hook_/, '').replace('ln_final.hook_normalized', 'ln_final');
const SHORT = new Map(HOOK_KINDS.map((k) => [short(k), k]));
/** The kinds a new cache starts with: the attention patterns. */
export const DEFAULT_HOOKS = ['attn.hook_pattern'];

export const defaultResearch = () => ({ lens: false, lensCell: null, compare: false, clean: '', corrupted: '', a: '', b: '', positions: null,
  shows: 'weights', key: 0, sinks: false, circuits: false, cache: null });

/** `l.p` (two whole numbers) as [l, p], else null. */
const pair = (v) => (/^\d{1,4}\.\d{1,5}$/.test(v ?? '') ? v.split('.').map(Number) : null);

/** Read the research keys of the hash `p` (URLSearchParams) into a copy of `o`. */
export function parseResearch(p, o) {
  const out = { ...o };
  out.lens = p.get('olens') === '1';
  const cell = pair(p.get('olcell'));
  out.lensCell = cell ? { layer: cell[0], position: cell[1] } : null;
  out.compare = p.get('ocmp') === '1';
  for (const [k, key] of [['clean', 'oclean'], ['corrupted', 'ocorrupt'], ['a', 'oa'], ['b', 'ob']]) if (p.has(key)) out[k] = p.get(key).slice(0, 2000);
  const head = pair(p.get('opos'));
  out.positions = head ? { layer: head[0], head: head[1] } : null;
  out.shows = SHOWS.includes(p.get('oshow')) ? p.get('oshow') : 'weights';
  out.key = /^\d{1,5}$/.test(p.get('okey') ?? '') ? Number(p.get('okey')) : 0;
  out.sinks = p.get('osink') === '1';
  out.circuits = p.get('ocirc') === '1';
  // A cache's kinds: the known short names, in the model's order; an empty value is a form with nothing chosen.
  const cache = p.get('ocache');
  out.cache = cache === null ? null : HOOK_KINDS.filter((k) => cache.split(',').some((s) => SHORT.get(s) === k));
  return out;
}

/** Write the research keys of `o` into `p`; the prompts only when a tool that reads them is on. */
export function writeResearch(p, o) {
  if (o.lens) p.set('olens', '1');
  if (o.lens && o.lensCell) p.set('olcell', `${o.lensCell.layer}.${o.lensCell.position}`);
  if (o.compare) p.set('ocmp', '1');
  if (o.positions) p.set('opos', `${o.positions.layer}.${o.positions.head}`);
  if (o.compare || o.positions) {
    p.set('oclean', o.clean);
    p.set('ocorrupt', o.corrupted);
    if (o.positions) { p.set('oa', o.a); p.set('ob', o.b); }
  }
  if (o.shows !== 'weights') p.set('oshow', o.shows);
  if (o.key) p.set('okey', o.key);
  if (o.sinks) p.set('osink', '1');
  if (o.circuits) p.set('ocirc', '1');
  if (o.cache) p.set('ocache', o.cache.map(short).join(','));
}
