// Records what a library really loads: the bytes of every WebAssembly module compiled in this process and every
// WebAssembly.Memory it uses, so .wasm size and peak heap are measured, not guessed from file names.
// Import this before the library under test.

const modules = []; // { bytes }
const memories = new Set();

function recordSource(src) {
  if (src instanceof ArrayBuffer || ArrayBuffer.isView(src)) modules.push({ bytes: src.byteLength });
}

const W = WebAssembly;
const origInstantiate = W.instantiate.bind(W);
const origCompile = W.compile.bind(W);
const OrigMemory = W.Memory;
const OrigModule = W.Module;
const OrigInstance = W.Instance;

// Compared against the original class: memories a module creates itself are not instances of the subclass below.
function recordExports(instance) {
  for (const v of Object.values(instance?.exports ?? {})) if (v instanceof OrigMemory) memories.add(v);
}

W.instantiate = async (src, imports) => {
  recordSource(src);
  for (const ns of Object.values(imports ?? {}))
    for (const v of Object.values(ns ?? {})) if (v instanceof OrigMemory) memories.add(v);
  const result = await origInstantiate(src, imports);
  recordExports(result instanceof OrigInstance ? result : result.instance);
  return result;
};
W.compile = async (src) => {
  recordSource(src);
  return origCompile(src);
};
if (W.instantiateStreaming) {
  // Streaming compilation hides the byte count: read the response and compile it the ordinary way.
  W.instantiateStreaming = async (source, imports) => W.instantiate(await (await source).arrayBuffer(), imports);
}
W.Module = class extends OrigModule {
  constructor(src) {
    super(src);
    recordSource(src);
  }
};
W.Instance = class extends OrigInstance {
  constructor(module, imports) {
    super(module, imports);
    recordExports(this);
  }
};
W.Memory = class extends OrigMemory {
  constructor(desc) {
    super(desc);
    memories.add(this);
  }
};

/** Bytes of the largest module compiled so far (the library's own .wasm; feature probes are tiny). */
export function wasmModuleBytes() {
  return modules.reduce((m, x) => Math.max(m, x.bytes), 0) || null;
}

/** Current total size of every WebAssembly memory seen. Memories never shrink, so this is also the peak. */
export function wasmMemoryBytes() {
  let total = 0;
  for (const m of memories) total += m.buffer.byteLength;
  return total || null;
}
