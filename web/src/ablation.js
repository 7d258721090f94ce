// Head ablation for the model API: `{ ablate: [{ layer, head }] }` converted into what the core takes. Our models'
// binding takes each stack's heads as they are given and checks them against the model (cpp/bindings/marshal.cpp
// `head_flags`); the Hugging Face models take the per-layer head flags (one 0/1 per head of every layer).
import { describe } from './runtime.js';
import { integerOption, numberOption } from './tensor.js';

/**
 * The entries of `ablate` with their stack: `names` are the stacks' names (`['self']` for a language model, whose
 * entries need no `attn`; with several an entry names one). Other properties are ignored, so the entries of a
 * model's `namedHeads` can be passed as they are. Types only: layer and head are numbers, not yet in range.
 */
function entries(ablate, name, names) {
  if (ablate === undefined) return [];
  if (!Array.isArray(ablate)) throw new TypeError(`${name}: expected an array of heads such as { layer: 0, head: 1 }, got ${describe(ablate)}`);
  return ablate.map((entry, i) => {
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
    return { at, stack, layer: numberOption(entry.layer, `${at}.layer`), head: numberOption(entry.head, `${at}.head`) };
  });
}

/**
 * Per stack, its heads as `[index in ablate, layer, head, …]` for our models' binding, which checks layer and head
 * against the model and names `ablate[index]` in its message. Repeated heads are allowed.
 * @returns {Record<string, number[]>}
 */
export function headLists(ablate, name, names) {
  const lists = Object.fromEntries(names.map((stack) => [stack, []]));
  entries(ablate, name, names).forEach(({ stack, layer, head }, i) => lists[stack].push(i, layer, head));
  return lists;
}

/**
 * Flags for every stack of attention from a list of heads to switch off (the Hugging Face models' form).
 * `stacks` maps each stack's name to its layer count, e.g. `{ self: 12 }`.
 * @returns {Record<string, number[]>} per stack, `layers × heads` flags (empty when nothing in it is ablated)
 */
export function headMasks(ablate, name, stacks, heads) {
  const masks = Object.fromEntries(Object.keys(stacks).map((stack) => [stack, []]));
  for (const { at, stack, layer: l, head: h } of entries(ablate, name, Object.keys(stacks))) {
    const layer = integerOption(l, `${at}.layer`, { min: 0, max: stacks[stack] - 1 });
    const head = integerOption(h, `${at}.head`, { min: 0, max: heads - 1 });
    if (masks[stack].length === 0) masks[stack] = new Array(stacks[stack] * heads).fill(0);
    masks[stack][layer * heads + head] = 1;
  }
  return masks;
}
