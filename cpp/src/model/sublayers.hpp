// The sublayers of the one forward pass (attention.cpp): self-attention and cross-attention, from their input rows to
// their output rows, with the head interventions and the trace recorded on the way. forward.cpp wraps them in their
// norms and residual sums. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

// The steps of run_stack() (forward.cpp) between the attention sublayers, shared with the batched runs of
// patch_runs.cpp. Each acts on every row alone: a row's bits do not depend on how many rows are passed with it.

/// out = down(act(up(in))), or down(act(gate(in))·up(in)); `u` holds rows × (gate|)up columns.
void mlp(const plan::Mlp& p, const LayerWeights& lw, const float* in, std::size_t rows, float* u, float* out);
/// A sublayer's output `a` joins the residual stream x: its output norm, the sum, then the norm after it.
void residual(const plan::Norms& n, const NormWeights& out, const NormWeights& after, float* x, float* a, std::size_t rows, std::size_t d);
/// cos and sin of the step's positions for each kind of layer with rotary positions, into `rope` ([rows, dims / 2] of
/// cos, then as many of sin, per kind); returns where each kind's start.
std::vector<std::size_t> rope_tables(const plan::Stack& stack, const StackStep& s, float* rope);
/// A sublayer's input: x's rows through norm n into h, or x itself when the sublayer has none.
const float* sublayer_input(const plan::Norm& n, const NormWeights& w, const float* x, std::size_t rows, std::size_t d, float* h);

/// y = x·B (+ bias) for `rows` rows.
void apply(const Matrix& m, const float* x, std::size_t rows, float* y);
/// The same with x's rows `lda` floats apart.
void apply(const Matrix& m, const float* x, std::size_t lda, std::size_t rows, float* y);
/// Columns first..first + cols − 1 of x·B (+ their bias) for `rows` rows into y (rows `ldy` floats apart), the same
/// bits as those columns of apply(); false, with nothing computed, when `first` is not where a packed panel starts.
bool apply_columns(const Matrix& m, std::size_t first, std::size_t cols, const float* x, std::size_t rows, float* y, std::size_t ldy);

}  // namespace model
}  // namespace attnscope
