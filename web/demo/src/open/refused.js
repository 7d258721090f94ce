// A load refused for memory: the core's refusals name WebAssembly memory and its limit (cpp/bindings: Loader::plan,
// Loader::allocate, and marshal.cpp when memory cannot grow). The page says such a refusal in words of its own; the
// model Worker, when an earlier model still holds its share of that memory, frees it and tries once more.
export const refusedForMemory = (error) => /WebAssembly memory/.test(String(error?.message ?? ''));
