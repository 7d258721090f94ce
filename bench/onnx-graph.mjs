// Writes the ONNX graphs the onnxruntime-web peer runs: multi-head self-attention with the per-head weights as a
// second output, as plain operators or around a fused attention operator. The protobuf is encoded by hand (a few
// dozen lines) so no ONNX or protobuf package is needed.
//
//   node bench/onnx-graph.mjs 64 256 4 [plain|attention|mha]   → build/bench/mha_<graph>_L64_E256_H4.onnx (seeded weights,
//   as the benchmark uses)
import { IN_NODE, makeCase } from './common.mjs';

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

function node(opType, inputs, outputs, attrs = {}, domain = '') {
  const w = new Writer();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  w.string(3, outputs[0] + '_node');
  w.string(4, opType);
  for (const [k, v] of Object.entries(attrs)) w.message(5, attribute(k, v));
  if (domain) w.string(7, domain);
  return w;
}

function valueInfo(name, dims) {
  const shape = new Writer();
  for (const d of dims) shape.message(1, typeof d === 'string' ? new Writer().string(2, d) : new Writer().int(1, d));
  const tensorType = new Writer().int(1, FLOAT).message(2, shape);
  return new Writer().string(1, name).message(2, new Writer().message(1, tensorType));
}

/**
 * The graphs the onnxruntime-web peer can run, by name. Each is torch.nn.MultiheadAttention self-attention for one
 * batch element, written the way a careful user would: input "x" [1, L, E] (L symbolic), outputs "output" [1, L, E]
 * and, when `withWeights`, "weights" [1, H, L, L].
 *
 * - `plain` (opset 17): one Gemm for q, k and v (transB, bias fused), the 1/√head_dim scale folded into the q rows
 *   of the weights at build time, batched MatMuls over the heads, Softmax on the last axis, one Gemm out.
 * - `attention` (opset 23): the same Gemms around the standard `Attention` operator, which takes q, k, v as
 *   [1, L, E] with `q_num_heads`/`kv_num_heads` and returns the softmax weights as its fourth output
 *   (`qk_matmul_output_mode` = 3, "after softmax").
 * - `mha` (contrib `com.microsoft.MultiHeadAttention`, what ORT's transformer fusions produce): the same Gemms
 *   around ORT's own fused attention kernel. It has no weights output, so it only serves `needWeights: false`.
 */
export const GRAPHS = ['plain', 'attention', 'mha'];

export function buildMhaModel({ E, H, state, withWeights = true, graph = 'plain' }) {
  if (!GRAPHS.includes(graph)) throw new Error(`buildMhaModel: graph must be one of ${GRAPHS.join(', ')}, got '${graph}'`);
  if (graph === 'mha' && withWeights) throw new Error('buildMhaModel: the mha graph has no weights output');
  const hd = E / H;
  const wIn = Float32Array.from(state.in_proj_weight.data); // [3E, E]
  const bIn = Float32Array.from(state.in_proj_bias.data);
  if (graph === 'plain') {
    // The fused operators scale inside; the plain graph folds the scale into the q rows:
    // softmax((s·q)·kᵀ) = softmax(s·(q·kᵀ)).
    const scale = 1 / Math.sqrt(hd);
    for (let i = 0; i < E * E; i++) wIn[i] *= scale;
    for (let i = 0; i < E; i++) bIn[i] *= scale;
  }
  const i64 = (a) => BigInt64Array.from(a.map(BigInt));
  const weightsName = withWeights ? 'weights' : 'probs';

  const nodes = [
    node('Reshape', ['x', 'shape_LE'], ['x2']), // [L, E]
    node('Gemm', ['x2', 'in_proj_weight', 'in_proj_bias'], ['qkv'], { transB: 1 }), // [L, 3E]
  ];
  if (graph === 'plain') {
    nodes.push(
      node('Reshape', ['qkv', 'shape_L3Hd'], ['qkv4']), // [L, 3, H, hd]
      node('Transpose', ['qkv4'], ['qkvT'], { perm: [1, 2, 0, 3] }), // [3, H, L, hd]
      node('Split', ['qkvT'], ['q', 'k', 'v'], { axis: 0 }), // each [1, H, L, hd]
      node('Transpose', ['k'], ['kT'], { perm: [0, 1, 3, 2] }), // [1, H, hd, L]
      node('MatMul', ['q', 'kT'], ['scores']), // [1, H, L, L]
      node('Softmax', ['scores'], [weightsName], { axis: -1 }),
      node('MatMul', [weightsName, 'v'], ['ctx']), // [1, H, L, hd]
      node('Transpose', ['ctx'], ['ctxT'], { perm: [0, 2, 1, 3] }), // [1, L, H, hd]
      node('Reshape', ['ctxT', 'shape_LE'], ['ctx2']), // [L, E]
    );
  } else {
    nodes.push(
      node('Reshape', ['qkv', 'shape_1L3E'], ['qkv3']), // [1, L, 3E]
      node('Split', ['qkv3', 'split_EEE'], ['q', 'k', 'v'], { axis: 2 }), // each [1, L, E]
      graph === 'attention'
        ? node('Attention', ['q', 'k', 'v'], withWeights ? ['ctx3', '', '', 'weights'] : ['ctx3'], {
            q_num_heads: H,
            kv_num_heads: H,
            ...(withWeights ? { qk_matmul_output_mode: 3 } : {}),
          })
        : node('MultiHeadAttention', ['q', 'k', 'v'], ['ctx3'], { num_heads: H }, 'com.microsoft'),
      node('Reshape', ['ctx3', 'shape_LE'], ['ctx2']), // [L, E]
    );
  }
  nodes.push(
    node('Gemm', ['ctx2', 'out_proj.weight', 'out_proj.bias'], ['out2'], { transB: 1 }),
    node('Reshape', ['out2', 'shape_1LE'], ['output']),
  );

  const g = new Writer();
  for (const n of nodes) g.message(1, n);
  g.string(2, `attnscope_bench_mha_${graph}`);
  const inits = [
    tensor('in_proj_weight', FLOAT, [3 * E, E], wIn),
    tensor('in_proj_bias', FLOAT, [3 * E], bIn),
    tensor('out_proj.weight', FLOAT, [E, E], state['out_proj.weight'].data),
    tensor('out_proj.bias', FLOAT, [E], state['out_proj.bias'].data),
    tensor('shape_LE', INT64, [2], i64([-1, E])),
    tensor('shape_L3Hd', INT64, [4], i64([-1, 3, H, hd])),
    tensor('shape_1L3E', INT64, [3], i64([1, -1, 3 * E])),
    tensor('shape_1LE', INT64, [3], i64([1, -1, E])),
    tensor('split_EEE', INT64, [3], i64([E, E, E])),
  ];
  for (const t of inits) g.message(5, t);
  g.message(11, valueInfo('x', [1, 'L', E]));
  g.message(12, valueInfo('output', [1, 'L', E]));
  if (withWeights) g.message(12, valueInfo('weights', [1, H, 'L', 'L']));

  const model = new Writer();
  // Opset 23 (Attention) needs IR version 11; the others stay at the IR 8 / opset 17 they were written for.
  model.int(1, graph === 'attention' ? 11 : 8); // ir_version
  model.string(2, 'attnscope-bench');
  model.message(7, g);
  model.message(8, new Writer().string(1, '').int(2, graph === 'attention' ? 23 : 17)); // opset_import
  if (graph === 'mha') model.message(8, new Writer().string(1, 'com.microsoft').int(2, 1));
  return model.finish();
}

/**
 * The no-weights path for long sequences in query blocks, as two models: `project` maps x [1, L, E] to q, k, v
 * (each [1, L, E]) with the one Gemm; `attend` maps a block of queries q [1, Lq, E] and all of k, v to that block's
 * output [1, Lq, E] through `com.microsoft.MultiHeadAttention` and the output Gemm. ORT's fused attention operators
 * hold every head's scores for the whole call (4·H·Lq·L bytes), and its size checks stop at 2³¹ bytes, so one call
 * over 16 384 tokens fails; blocks of queries keep each call's scores small.
 */
export function buildBlockedModels({ E, H, state }) {
  const i64 = (a) => BigInt64Array.from(a.map(BigInt));
  const model = (name, nodes, inits, inputs, outputs) => {
    const g = new Writer();
    for (const n of nodes) g.message(1, n);
    g.string(2, name);
    for (const t of inits) g.message(5, t);
    for (const [n, dims] of inputs) g.message(11, valueInfo(n, dims));
    for (const [n, dims] of outputs) g.message(12, valueInfo(n, dims));
    const m = new Writer().int(1, 8).string(2, 'attnscope-bench').message(7, g);
    m.message(8, new Writer().string(1, '').int(2, 17));
    m.message(8, new Writer().string(1, 'com.microsoft').int(2, 1));
    return m.finish();
  };
  const project = model(
    'attnscope_bench_project',
    [
      node('Reshape', ['x', 'shape_LE'], ['x2']),
      node('Gemm', ['x2', 'in_proj_weight', 'in_proj_bias'], ['qkv'], { transB: 1 }),
      node('Reshape', ['qkv', 'shape_1L3E'], ['qkv3']),
      node('Split', ['qkv3', 'split_EEE'], ['q', 'k', 'v'], { axis: 2 }),
    ],
    [
      tensor('in_proj_weight', FLOAT, [3 * E, E], state.in_proj_weight.data),
      tensor('in_proj_bias', FLOAT, [3 * E], state.in_proj_bias.data),
      tensor('shape_LE', INT64, [2], i64([-1, E])),
      tensor('shape_1L3E', INT64, [3], i64([1, -1, 3 * E])),
      tensor('split_EEE', INT64, [3], i64([E, E, E])),
    ],
    [['x', [1, 'L', E]]],
    [['q', [1, 'L', E]], ['k', [1, 'L', E]], ['v', [1, 'L', E]]],
  );
  const attend = model(
    'attnscope_bench_attend',
    [
      node('MultiHeadAttention', ['q', 'k', 'v'], ['ctx3'], { num_heads: H }, 'com.microsoft'),
      node('Reshape', ['ctx3', 'shape_LE'], ['ctx2']),
      node('Gemm', ['ctx2', 'out_proj.weight', 'out_proj.bias'], ['out2'], { transB: 1 }),
      node('Reshape', ['out2', 'shape_1LE'], ['output']),
    ],
    [
      tensor('out_proj.weight', FLOAT, [E, E], state['out_proj.weight'].data),
      tensor('out_proj.bias', FLOAT, [E], state['out_proj.bias'].data),
      tensor('shape_LE', INT64, [2], i64([-1, E])),
      tensor('shape_1LE', INT64, [3], i64([1, -1, E])),
    ],
    [['q', [1, 'Lq', E]], ['k', [1, 'L', E]], ['v', [1, 'L', E]]],
    [['output', [1, 'Lq', E]]],
  );
  return { project, attend };
}

/** Builds the model for (L, E, H) with the benchmark's seeded weights and writes it under build/bench/ (Node). */
export async function writeMhaModel(L, E, H, { withWeights = true, graph = 'plain' } = {}) {
  const [{ default: fs }, { default: path }, { ROOT }] = await Promise.all([
    import('node:fs'),
    import('node:path'),
    import('./node-paths.mjs'),
  ]);
  const { state } = makeCase(L, E, H);
  const bytes = buildMhaModel({ E, H, state, withWeights, graph });
  const dir = path.join(ROOT, 'build', 'bench');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `mha_${graph}_L${L}_E${E}_H${H}${withWeights ? '' : '_noweights'}.onnx`);
  fs.writeFileSync(file, bytes);
  return file;
}

if (IN_NODE && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  const { positionals } = (await import('node:util')).parseArgs({ allowPositionals: true });
  const [L, E, H] = positionals.slice(0, 3).map(Number);
  const graph = positionals[3] ?? 'plain';
  if (!L || !E || !H || !GRAPHS.includes(graph)) {
    console.error(`usage: node bench/onnx-graph.mjs SEQ EMBED HEADS [${GRAPHS.join('|')}]`);
    process.exit(2);
  }
  console.log(await writeMhaModel(L, E, H, { withWeights: graph !== 'mha', graph }));
}
