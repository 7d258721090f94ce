/// Process-wide settings of the kernels that change their speed, never their results.
#pragma once

#include <cstddef>

namespace attnscope {

/// The rows of the matrix products' register tile from now on: 4, or this build's own (6 in the relaxed-SIMD
/// WebAssembly builds, 4 elsewhere); any other value changes nothing. Returns the rows in use. Every product gives
/// the same bits at either height; the setting is for an engine whose code for the taller tile is slow (Node 20's
/// V8 spills its registers, docs/toolchain.md, "Relaxed SIMD: two builds"). Set it before any computation starts.
std::size_t set_gemm_tile_rows(std::size_t rows);

}  // namespace attnscope
