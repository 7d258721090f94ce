// The research tools' part of the opened model's state and of the URL: whether the logit lens is shown and which of
// its cells is open, whether the two prompts are compared, the two prompts and answers, and the head patched at
// each position. A link reopens the same view (open/hash.js calls these).

export const defaultResearch = () => ({ lens: false, lensCell: null, compare: false, clean: '', corrupted: '', a: '', b: '', positions: null });

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
}
