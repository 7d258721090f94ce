/// Process-wide settings of the kernels that change their speed, never their results.
#pragma once

#include <cstddef>

namespace attnscope {

/// The rows of the matrix products' register tile from now on: 4, this build's own (6 in the relaxed-SIMD
/// WebAssembly builds, 4 elsewhere), or, in the builds whose own is taller than 4 over 4-lane vectors, 5: products by
/// F32 weights then read their input's rows packed in slivers of 5, attention's take 4 rows and those over 16-bit
/// weights the build's own. Any other value changes nothing. Returns
/// the rows in use. Every product gives the same bits at every height; the setting is for an engine whose code for
/// the taller tile is slow (Node 20's V8 spills its registers, docs/toolchain.md, "Relaxed SIMD: two builds"). Set it
/// before any computation starts.
std::size_t set_gemm_tile_rows(std::size_t rows);

/// How many matrix products have read their input's rows in slivers (set_gemm_tile_rows(5)) since the program
/// started; 0 in builds without them. A probe for the tests: every tile gives the same bits, so the results cannot
/// tell whether the slivers ran.
std::size_t gemm_sliver_products();

}  // namespace attnscope
