// The sublayers of the one forward pass (attention.cpp): self-attention and cross-attention, from their input rows to
// their output rows, with the head interventions and the trace recorded on the way. forward.cpp wraps them in their
// norms and residual sums. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pass.hpp"

namespace attnscope {
namespace model {

/// A layer's slices of run_stack()'s buffers (StackBuffers).
struct Scratch {
    float* qkv;            ///< [rows, qkv_cols]
    float* context;        ///< [rows, q_cols]
    float* scores;         ///< per worker: a block of rows × keys, then as much again for a position bias
    std::size_t worker_scores;  ///< floats per worker in `scores`
    float* cross_q;        ///< [rows, cross q_cols]
    std::uint8_t* blocked; ///< [rows, keys]: 1 = the key is hidden from the query
    float* panels;         ///< every K/V head's packed keys, then their packed values
    const float* cos;      ///< [rows, dims / 2] of this layer's rotary positions, or null
    const float* sin;
};

/// out [rows, width] = the self-attention of layer `l` of stack `stack` over `in` [rows, width] (its normed input),
/// its keys and values joining the step's caches. Returns true when it recorded the step's trace (the pass ends).
bool self_attention(const Transformer::Impl& m, std::size_t stack, std::size_t l, const StackStep& s, const float* in,
                    const Scratch& b, float* out);

/// out [rows, width] = the cross-attention of layer `l` of stack `stack` from `in` over the step's memory.
bool cross_attention(const Transformer::Impl& m, std::size_t stack, std::size_t l, const StackStep& s, const float* in,
                     const Scratch& b, float* out);

/// y = x·B (+ bias) for `rows` rows.
void apply(const Matrix& m, const float* x, std::size_t rows, float* y);
/// The same with x's rows `lda` floats apart.
void apply(const Matrix& m, const float* x, std::size_t lda, std::size_t rows, float* y);

}  // namespace model
}  // namespace attnscope
