// Head ablation for the model API: `{ ablate: [{ layer, head }] }` checked and turned into the per-layer head
// flags the core takes (one 0/1 per head of every layer of a stack of attention layers).
import { describe } from './runtime.js';
import { integerOption } from './tensor.js';

/**
 * Flags for every stack of attention from a list of heads to switch off.
 * `stacks` maps each stack's name to its layer count, e.g. `{ enc_self: 2, dec_self: 2, dec_cross: 2 }`.
 * With one stack (a language model) an entry needs no `attn`; with several it names one. Other properties are
 * ignored, so the entries of a model's `namedHeads` can be passed as they are. Repeated heads are allowed.
 * @returns {Record<string, number[]>} per stack, `layers × heads` flags (empty when nothing in it is ablated)
 */
export function headMasks(ablate, name, stacks, heads) {
  const names = Object.keys(stacks);
  const masks = Object.fromEntries(names.map((stack) => [stack, []]));
  if (ablate === undefined) return masks;
  if (!Array.isArray(ablate)) throw new TypeError(`${name}: expected an array of heads such as { layer: 0, head: 1 }, got ${describe(ablate)}`);
  ablate.forEach((entry, i) => {
    const at = `${name}[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new TypeError(`${at}: expected a head such as { layer: 0, head: 1 }, got ${describe(entry)}`);
    }
    let stack = names[0];
    if (names.length > 1) {
      if (typeof entry.attn !== 'string') throw new TypeError(`${at}.attn: expected one of ${names.map((n) => `'${n}'`).join(', ')}, got ${describe(entry.attn)}`);
      if (!names.includes(entry.attn)) throw new RangeError(`${at}.attn: expected one of ${names.map((n) => `'${n}'`).join(', ')}, got '${entry.attn}'`);
      stack = entry.attn;
    }
    const layer = integerOption(entry.layer, `${at}.layer`, { min: 0, max: stacks[stack] - 1 });
    const head = integerOption(entry.head, `${at}.head`, { min: 0, max: heads - 1 });
    if (masks[stack].length === 0) masks[stack] = new Array(stacks[stack] * heads).fill(0);
    masks[stack][layer * heads + head] = 1;
  });
  return masks;
}
