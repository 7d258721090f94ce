// Every head's attention of one sublayer over keys and values already projected (attention.cpp sets it up): the
// per-head rows of the pass, built -O3 like the kernels they call. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../attend.hpp"
#include "attnscope/plan.hpp"
#include "sublayers.hpp"

namespace attnscope {
namespace model {

/// Query positions per block of attend_heads' tasks, blocks starting at its multiples (the scores' workspace,
/// workspace.cpp, holds one block of rows per worker).
constexpr std::size_t query_block = 32;

// One multi-head attention over keys and values already projected: every query head attends with its K/V head's
// keys (grouped-query: each K/V head packed once, read by its group in place), scores kept when asked.
struct HeadAttention {
    const plan::Attention& a;
    std::size_t rows, keys, first_position;  // query t sits at position first_position + t; keys at 0..keys-1
    const float* q;                          // row t of this call at q + t·q_ld, head h at + h·head_dim
    std::size_t q_ld;
    const float* k;                          // key j at k + j·kv_ld, K/V head g at + g·head_dim
    const float* v;
    std::size_t kv_ld;
    detail::MaskRows mask;                   // boolean, rows × keys (row_stride keys) or one row for all (stride 0)
    const plan::RelativeBias* relative;      // with `bias` [buckets, heads]: added to the scores
    const float* bias;
    float* maps;                             // [heads, rows, keys] of this layer, or null
    const std::uint8_t* zeroed;              // heads whose context is zeroed (ablated), or null
    AttentionTrace* trace;                   // this head's weights are recorded, or null
};

/// context [rows, heads·head_dim] (row stride ctx_ld) = every head's attention, the maps and the trace's scores and
/// weights recorded when asked; the zeroed heads' contexts are zero.
void attend_heads(const HeadAttention& c, const Scratch& b, float* context, std::size_t ctx_ld);

}  // namespace model
}  // namespace attnscope
