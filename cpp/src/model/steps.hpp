// The element-wise steps of the one forward pass, each one function built -O3 (steps.cpp): the pass around them
// (forward.cpp, attention.cpp) is bookkeeping built for size, and xsimd's batches are fast only where they are
// inlined, so every kernel the pass calls is instantiated here, once. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnscope/plan.hpp"
#include "weights.hpp"

namespace attnscope {
namespace model {
namespace steps {

/// y = the norm of each of the `rows` rows of x [rows, d] (in place when y == x).
void norm_rows(const plan::Norm& n, const NormWeights& w, const float* x, std::size_t rows, std::size_t d, float* y);
/// x = act(x), n floats.
void activate(plan::Activation a, float* x, std::size_t n);
/// A gated MLP's rows [gate | up] of 2·inner floats each: gate = act(gate)·up.
void gate_rows(plan::Activation a, float* u, std::size_t rows, std::size_t inner);
/// x += a, n floats.
void add(float* x, std::size_t n, const float* a);
/// x *= s, n floats.
void scale(float* x, std::size_t n, float s);
/// x = cap·tanh(x / cap), n floats.
void softcap(float* x, std::size_t n, float cap);
/// softcap() of the n columns first.. of a row of `row` floats (x points at column first; `first` and n whole numbers
/// of SIMD vectors, or the columns end the row), each with the bits softcap() over the whole row gives it: the row's
/// last row % vector columns go through the scalar formula there, the others through the vector one.
void softcap_columns(float* x, std::size_t n, std::size_t first, std::size_t row, float cap);
/// ids [k] and probabilities [k]: the k most probable entries of a row of n logits and their softmax probabilities,
/// largest first, a tie keeping the lower id first (1 ≤ k ≤ n).
void top_k_softmax(const float* logits, std::size_t n, std::size_t k, std::int32_t* ids, float* probabilities);
/// One row of q|k|v [q heads | k heads | v heads]: QK-norm as the plan says, then the rotary positions of this row
/// (`cos`, `sin`: rotary dims / 2 each) on every q and k head.
void qk_norm_and_rope(const plan::Attention& a, const LayerWeights& lw, float* row, const float* cos, const float* sin);
/// y [n] = x [k] · the packed panels of a k × n matrix (panel stride `panel_stride` floats): one row, for traces.
void row_product(std::size_t n, std::size_t k, const float* x, const float* panels, std::size_t panel_stride, float* y);
/// y [m.out] = x [k] · rows [k0, k0 + k) of the packed matrix m (of any panel type): one row, for traces.
void row_product(std::size_t k, const float* x, const Matrix& m, std::size_t k0, float* y);

}  // namespace steps
}  // namespace model
}  // namespace attnscope
