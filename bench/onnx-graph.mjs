// Writes the ONNX graph the onnxruntime-web peer runs: multi-head self-attention with the per-head weights as a
// second output. The protobuf is encoded by hand (a few dozen lines) so no ONNX or protobuf package is needed.
//
//   node bench/onnx-graph.mjs 64 256 4   → build/bench/mha_L64_E256_H4.onnx (seeded weights, as the benchmark uses)
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, makeCase } from './common.mjs';

// --- a minimal protobuf writer: varints, length-delimited fields, fixed32 floats ---------------------------------
class Writer {
  constructor() {
    this.parts = [];
  }
  varint(v) {
    let n = BigInt(v);
    if (n < 0n) n += 1n << 64n; // int64 two's complement
    const bytes = [];
    do {
      let b = Number(n & 0x7fn);
      n >>= 7n;
      if (n) b |= 0x80;
      bytes.push(b);
    } while (n);
    this.parts.push(Uint8Array.from(bytes));
    return this;
  }
  tag(field, wire) {
    return this.varint((field << 3) | wire);
  }
  int(field, v) {
    return this.tag(field, 0).varint(v);
  }
  bytes(field, u8) {
    this.tag(field, 2).varint(u8.length);
    this.parts.push(u8);
    return this;
  }
  string(field, s) {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  message(field, w) {
    return this.bytes(field, w.finish());
  }
  float(field, f) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    this.tag(field, 5);
    this.parts.push(b);
    return this;
  }
  finish() {
    const n = this.parts.reduce((a, p) => a + p.length, 0);
    const out = new Uint8Array(n);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

// --- onnx.proto field numbers (IR version 8) ------------------------------------------------------------------
const FLOAT = 1, INT64 = 7; // TensorProto.DataType
const ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_INTS = 7; // AttributeProto.AttributeType

function tensor(name, dataType, dims, raw) {
  const w = new Writer();
  for (const d of dims) w.int(1, d); // dims
  w.int(2, dataType); // data_type
  w.string(8, name); // name
  w.bytes(9, new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)); // raw_data (little-endian)
  return w;
}

function attribute(name, value) {
  const w = new Writer().string(1, name);
  if (Array.isArray(value)) {
    for (const v of value) w.int(8, v); // ints
    w.int(20, ATTR_INTS);
  } else if (Number.isInteger(value)) {
    w.int(3, value).int(20, ATTR_INT);
  } else {
    w.float(2, value).int(20, ATTR_FLOAT);
  }
  return w;
}

function node(opType, inputs, outputs, attrs = {}) {
  const w = new Writer();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  w.string(3, outputs[0] + '_node');
  w.string(4, opType);
  for (const [k, v] of Object.entries(attrs)) w.message(5, attribute(k, v));
  return w;
}

function valueInfo(name, dims) {
  const shape = new Writer();
  for (const d of dims) shape.message(1, typeof d === 'string' ? new Writer().string(2, d) : new Writer().int(1, d));
  const tensorType = new Writer().int(1, FLOAT).message(2, shape);
  return new Writer().string(1, name).message(2, new Writer().message(1, tensorType));
}

/**
 * The ONNX model of torch.nn.MultiheadAttention self-attention for one batch element, as a fair user would write it:
 * one Gemm for q, k and v (transB, bias fused), the 1/√head_dim scale folded into the q rows of the weights at
 * build time, batched MatMuls over the heads, Softmax on the last axis, one Gemm for the output projection.
 * Input "x" [1, L, E] (L symbolic); outputs "output" [1, L, E] and, when `withWeights`, "weights" [1, H, L, L].
 */
export function buildMhaModel({ E, H, state, withWeights = true }) {
  const hd = E / H;
  const scale = 1 / Math.sqrt(hd);
  const wIn = Float32Array.from(state.in_proj_weight.data); // [3E, E]
  const bIn = Float32Array.from(state.in_proj_bias.data);
  for (let i = 0; i < E * E; i++) wIn[i] *= scale; // q rows: softmax((s·q)·kᵀ) = softmax(s·(q·kᵀ))
  for (let i = 0; i < E; i++) bIn[i] *= scale;
  const i64 = (a) => BigInt64Array.from(a.map(BigInt));

  const g = new Writer();
  const nodes = [
    node('Reshape', ['x', 'shape_LE'], ['x2']), // [L, E]
    node('Gemm', ['x2', 'in_proj_weight', 'in_proj_bias'], ['qkv'], { transB: 1 }), // [L, 3E]
    node('Reshape', ['qkv', 'shape_L3Hd'], ['qkv4']), // [L, 3, H, hd]
    node('Transpose', ['qkv4'], ['qkvT'], { perm: [1, 2, 0, 3] }), // [3, H, L, hd]
    node('Split', ['qkvT'], ['q', 'k', 'v'], { axis: 0 }), // each [1, H, L, hd]
    node('Transpose', ['k'], ['kT'], { perm: [0, 1, 3, 2] }), // [1, H, hd, L]
    node('MatMul', ['q', 'kT'], ['scores']), // [1, H, L, L]
    node('Softmax', ['scores'], [withWeights ? 'weights' : 'probs'], { axis: -1 }),
    node('MatMul', [withWeights ? 'weights' : 'probs', 'v'], ['ctx']), // [1, H, L, hd]
    node('Transpose', ['ctx'], ['ctxT'], { perm: [0, 2, 1, 3] }), // [1, L, H, hd]
    node('Reshape', ['ctxT', 'shape_LE'], ['ctx2']), // [L, E]
    node('Gemm', ['ctx2', 'out_proj.weight', 'out_proj.bias'], ['out2'], { transB: 1 }),
    node('Reshape', ['out2', 'shape_1LE'], ['output']),
  ];
  for (const n of nodes) g.message(1, n);
  g.string(2, 'attnscope_bench_mha');
  const inits = [
    tensor('in_proj_weight', FLOAT, [3 * E, E], wIn),
    tensor('in_proj_bias', FLOAT, [3 * E], bIn),
    tensor('out_proj.weight', FLOAT, [E, E], state['out_proj.weight'].data),
    tensor('out_proj.bias', FLOAT, [E], state['out_proj.bias'].data),
    tensor('shape_LE', INT64, [2], i64([-1, E])),
    tensor('shape_L3Hd', INT64, [4], i64([-1, 3, H, hd])),
    tensor('shape_1LE', INT64, [3], i64([1, -1, E])),
  ];
  for (const t of inits) g.message(5, t);
  g.message(11, valueInfo('x', [1, 'L', E]));
  g.message(12, valueInfo('output', [1, 'L', E]));
  if (withWeights) g.message(12, valueInfo('weights', [1, H, 'L', 'L']));

  const model = new Writer();
  model.int(1, 8); // ir_version
  model.string(2, 'attnscope-bench');
  model.message(7, g);
  model.message(8, new Writer().string(1, '').int(2, 17)); // opset_import: default domain, opset 17
  return model.finish();
}

/** Builds the model for (L, E, H) with the benchmark's seeded weights and writes it under build/bench/. */
export function writeMhaModel(L, E, H, withWeights = true) {
  const { state } = makeCase(L, E, H);
  const bytes = buildMhaModel({ E, H, state, withWeights });
  const dir = path.join(ROOT, 'build', 'bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `mha_L${L}_E${E}_H${H}${withWeights ? '' : '_noweights'}.onnx`);
  fs.writeFileSync(file, bytes);
  return file;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [L, E, H] = process.argv.slice(2).map(Number);
  if (!L || !E || !H) {
    console.error('usage: node bench/onnx-graph.mjs SEQ EMBED HEADS');
    process.exit(2);
  }
  console.log(writeMhaModel(L, E, H));
}
