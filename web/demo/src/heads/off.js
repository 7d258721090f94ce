// Heads switched off, as the URL writes them (`1.2,0.3`) and in the order the page lists them. Shared by the state
// (state.js) and the opened model's URL keys (open/hash.js), which state.js imports: here, neither imports the other.

/** Heads switched off, sorted and without repeats: layer and head as written in the hash (`1.2,0.3`), at most 63 each. */
export function parseAblate(text) {
  const seen = new Set();
  for (const x of String(text).split(',')) {
    if (/^\d{1,2}\.\d{1,2}$/.test(x) && seen.size < 256) seen.add(x.split('.').map(Number).join('.'));
  }
  return sortHeads([...seen].map((x) => { const [layer, head] = x.split('.').map(Number); return { layer, head }; }).filter((x) => x.layer < 64 && x.head < 64));
}

/** Heads in layer order, then head order. */
export const sortHeads = (heads) => [...heads].sort((a, b) => a.layer - b.layer || a.head - b.head);

