/* Force-included by the relaxed-SIMD WebAssembly builds only (CMakeLists.txt, attnscope_relaxed_core).
   The GEMM's multiply-add (kernels/gemm.hpp, tile_multiply_add) becomes a call to an import that does nothing but
   mark the place: Emscripten 3.1.6's clang 14 cannot emit relaxed SIMD in the standard encoding, so after the link
   scripts/wasm-relaxed-madd.mjs replaces every call by f32x4.relaxed_madd and drops the import. Only the code that
   asks for it is fused; the norms, the softmax and every other multiply-add keep their roundings
   (docs/toolchain.md, "Relaxed SIMD: two builds"). `const`: the call reads and writes no memory, so LLVM optimises
   around it as around the instruction it stands for. */
#pragma once
#include <wasm_simd128.h>
#ifdef __cplusplus
extern "C"
#endif
v128_t attnscope_relaxed_madd(v128_t a, v128_t b, v128_t c)
  __attribute__((const, nothrow, import_module("env"), import_name("attnscope_relaxed_madd")));
/* a·b + c, on the kernels' SSE register type (xsimd 8.1 targets SSE4.1 under Emscripten). */
#define ATTNSCOPE_GEMM_MULTIPLY_ADD(a, b, c) attnscope_relaxed_madd((v128_t)(a), (v128_t)(b), (v128_t)(c))
