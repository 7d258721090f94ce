// Head ablation for the model API: `{ ablate: [{ layer, head }] }` converted into what the core takes. Every model's
// binding takes each stack's heads as they are given and checks them against the model (cpp/bindings/marshal.cpp
// `head_flags`), so their ranges are written once, in C++.
import { describe } from './runtime.js';
import { numberOption } from './tensor.js';

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
