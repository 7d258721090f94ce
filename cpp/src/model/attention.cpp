// The attention sublayers of the one forward pass: q|k|v, QK-norm and RoPE, the keys and values joining the cache,
// grouped-query attention read in place from it (causal, windowed, padded, with a relative-position bias or soft-capped
// scores as the plan says), the head interventions, the output projection; and cross-attention over an encoder's
// output. Records what trace() shows when asked.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../attend.hpp"
#include "../kernels/gemm.hpp"
#include "../parallel.hpp"
#include "heads.hpp"
#include "steps.hpp"

namespace attnscope {
namespace model {
namespace {

using arch = xsimd::default_arch;

void copy_rows(Tensor& out, Shape shape, const float* src, std::size_t ld, std::size_t rows, std::size_t cols)
{
    out = Tensor(std::move(shape));
    for (std::size_t r = 0; r < rows; ++r) std::memcpy(out.data.data() + r * cols, src + r * ld, cols * sizeof(float));
}

// Mean ablation: every row of one head's context (row stride ld) becomes their mean over the real positions, in
// double so that the mean of a long input does not drift.
void mean_rows(float* context, std::size_t ld, std::size_t T, std::size_t hd, const std::uint8_t* real)
{
    std::vector<double> sum(hd, 0.0);
    std::size_t count = 0;
    for (std::size_t t = 0; t < T; ++t) {
        if (real && real[t] == 0) continue;
        for (std::size_t k = 0; k < hd; ++k) sum[k] += context[t * ld + k];
        ++count;
    }
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t k = 0; k < hd; ++k) context[t * ld + k] = count ? float(sum[k] / double(count)) : 0.f;
}

// Mean ablation and patching replace every row of a head, so they wait for all its blocks; then the contexts are kept.
// The call's T rows sit at positions first..first + T - 1 of patch_from's first + T (a patched pass runs to the end).
void intervene(const plan::Attention& a, const Heads& h, std::size_t l, std::size_t T, std::size_t first, const std::uint8_t* real,
               float* ctx)
{
    const std::size_t H = a.heads, hd = a.head_dim, q_cols = a.q_width(), positions = first + T;
    const std::uint8_t* ablate = h.ablate && !h.ablate->empty() ? h.ablate->data() + l * H : nullptr;
    const std::uint8_t* patch = h.patch && !h.patch->empty() ? h.patch->data() + l * H : nullptr;
    for (std::size_t head = 0; head < H; ++head) {
        if (ablate && ablate[head] && h.ablation == Ablation::mean) mean_rows(ctx + head * hd, q_cols, T, hd, real);
        if (patch && patch[head])
            for (std::size_t t = 0; t < T; ++t)
                if (!h.patch_at || h.patch_at[first + t])
                    std::memcpy(ctx + t * q_cols + head * hd, h.patch_from + (l * positions + first + t) * q_cols + head * hd, hd * sizeof(float));
    }
    if (h.kept) std::memcpy(h.kept + l * T * q_cols, ctx, T * q_cols * sizeof(float));
}

// The heads zeroed in the pass itself (zero ablation) of layer l, or null.
const std::uint8_t* zeroed(const Heads& h, std::size_t l, std::size_t H)
{
    if (!h.ablate || h.ablate->empty() || h.ablation != Ablation::zero) return nullptr;
    return h.ablate->data() + l * H;
}

// The rest of a trace once the context is known: the head's share of the output projection, and the sublayer's
// output at the query (every head through the projection, with its bias: the row the residual stream receives).
void finish_trace(AttentionTrace& t, const Matrix& o, const float* ctx, std::size_t q_cols, std::size_t hd, std::size_t query,
                  std::size_t width, const float* out)
{
    const float* context = ctx + query * q_cols + t.head * hd;
    copy_rows(t.context, {hd}, context, 0, 1, hd);
    t.head_output = Tensor({width});
    steps::row_product(hd, context, o, t.head * hd, t.head_output.data.data());
    copy_rows(t.attention_output, {width}, out + query * width, 0, 1, width);
}

AttentionTrace* traced(const StackStep& s, std::size_t l, bool cross)
{
    return s.sink && s.sink->cross == cross && s.sink->trace->layer == l ? s.sink->trace : nullptr;
}

}  // namespace

void apply(const Matrix& m, const float* x, std::size_t rows, float* y) { apply(m, x, m.in, rows, y); }

void apply(const Matrix& m, const float* x, std::size_t lda, std::size_t rows, float* y)
{
    const float* bias = m.bias.empty() ? nullptr : m.bias.data();
    if (m.type == kernels::PanelType::f32) return detail::matmul_packed(rows, m.out, m.in, x, lda, m.packed.data(), y, m.out, bias);
    detail::matmul_packed(rows, m.out, m.in, x, lda, m.half.data(), m.type == kernels::PanelType::bf16, y, m.out, bias);
}

bool apply_columns(const Matrix& m, std::size_t first, std::size_t cols, const float* x, std::size_t rows, float* y, std::size_t ldy)
{
    const std::size_t width = detail::matmul_panel_width();
    if (first % width || first + cols > m.out) return false;
    const std::size_t skipped = first / width * m.in * width;  // the panels of the columns before `first`
    const float* bias = m.bias.empty() ? nullptr : m.bias.data() + first;
    if (m.type == kernels::PanelType::f32) detail::matmul_packed(rows, cols, m.in, x, m.in, m.packed.data() + skipped, y, ldy, bias);
    else detail::matmul_packed(rows, cols, m.in, x, m.in, m.half.data() + skipped, m.type == kernels::PanelType::bf16, y, ldy, bias);
    return true;
}

bool self_attention(const Transformer::Impl& m, std::size_t si, std::size_t l, const StackStep& s, const float* in,
                    const Scratch& b, float* out)
{
    const plan::Stack& stack = m.plan.stacks[si];
    const plan::Attention& a = stack.layer(l).self;
    const LayerWeights& lw = m.weights.stacks[si].layers[l];
    const std::size_t T = s.rows, H = a.heads, hd = a.head_dim, width = stack.width();
    const std::size_t q_cols = a.q_width(), kv_cols = a.kv_width(), qkv_cols = q_cols + 2 * kv_cols;
    const std::size_t Lk = s.first_position + T, half = a.rotary.dims / 2;
    AttentionTrace* trace = traced(s, l, false);
    const std::size_t query = trace ? trace->query - s.first_position : 0;  // the trace's row in this call
    if (trace) copy_rows(trace->attention_input, {T, width}, in, width, T, width);
    apply(lw.qkv, in, T, b.qkv);
    if (s.qkv) std::memcpy(s.qkv + l * T * qkv_cols, b.qkv, T * qkv_cols * sizeof(float));
    if (trace) {
        copy_rows(trace->query_raw, {hd}, b.qkv + query * qkv_cols + trace->head * hd, 0, 1, hd);
        copy_rows(trace->keys_raw, {T, hd}, b.qkv + q_cols + trace->kv_head * hd, qkv_cols, T, hd);
        copy_rows(trace->values, {T, hd}, b.qkv + q_cols + kv_cols + trace->kv_head * hd, qkv_cols, T, hd);
    }
    // Row by row, the rows split between the threads: QK-norm and RoPE, the new keys and values joining the cache,
    // and which keys the row's query sees: earlier ones (causal), the last `window` of them, and no padding (the
    // same for every head, so built once per layer: T × Lk bytes).
    detail::parallel_ranges(T, 1, double(qkv_cols + Lk), [&](std::size_t t0, std::size_t t1) {
        for (std::size_t t = t0; t < t1; ++t) {
            float* row = b.qkv + t * qkv_cols;
            steps::qk_norm_and_rope(a, lw, row, a.rope ? b.cos + t * half : nullptr, a.rope ? b.sin + t * half : nullptr);
            const std::size_t q = s.first_position + t;
            std::memcpy(s.key_cache + (l * s.capacity + q) * kv_cols, row + q_cols, kv_cols * sizeof(float));
            std::memcpy(s.value_cache + (l * s.capacity + q) * kv_cols, row + q_cols + kv_cols, kv_cols * sizeof(float));
            for (std::size_t j = 0; j < Lk; ++j) {
                const bool visible = (!a.causal || j <= q) && (a.window == 0 || q < j + a.window) && (!s.key_mask || s.key_mask[j] != 0);
                b.blocked[t * Lk + j] = visible ? 0 : 1;
            }
        }
    });
    const float* keys = s.key_cache + l * s.capacity * kv_cols;
    const float* values = s.value_cache + l * s.capacity * kv_cols;
    if (trace) {
        copy_rows(trace->query_final, {hd}, b.qkv + query * qkv_cols + trace->head * hd, 0, 1, hd);
        copy_rows(trace->keys_final, {Lk, hd}, keys + trace->kv_head * hd, kv_cols, Lk, hd);
    }
    if (trace) {
        trace->visible.resize(Lk);
        for (std::size_t j = 0; j < Lk; ++j) trace->visible[j] = b.blocked[query * Lk + j] ? 0 : 1;
    }
    const bool bias = a.relative_bias && stack.relative.buckets;
    const HeadAttention core{a, T, Lk, s.first_position, b.qkv, qkv_cols, keys, values, kv_cols,
                    {MaskKind::boolean, b.blocked, Lk}, &stack.relative,
                    bias ? m.weights.stacks[si].relative_bias.data.data() : nullptr,
                    s.attention ? s.attention + l * H * T * Lk : nullptr, zeroed(s.self, l, H), trace};
    attend_heads(core, b, b.context, q_cols);
    intervene(a, s.self, l, T, s.first_position, s.key_mask ? s.key_mask + s.first_position : nullptr, b.context);
    apply(lw.o, b.context, T, out);
    if (!trace) return false;
    finish_trace(*trace, lw.o, b.context, q_cols, hd, query, width, out);
    return true;  // nothing after this attention reaches the trace: a trace of layer l costs l + 1 layers
}

bool cross_attention(const Transformer::Impl& m, std::size_t si, std::size_t l, const StackStep& s, const float* in,
                     const Scratch& b, float* out)
{
    const plan::Stack& stack = m.plan.stacks[si];
    const plan::Attention& a = stack.layer(l).cross;
    const LayerWeights& lw = m.weights.stacks[si].layers[l];
    const std::size_t T = s.rows, S = s.memory_rows, H = a.heads, hd = a.head_dim, width = stack.width();
    const std::size_t q_cols = a.q_width(), kv_cols = a.kv_width();
    float* kv = s.cross_kv + l * S * 2 * kv_cols;  // each row k | v
    if (!s.cross_ready) apply(lw.cross_kv, s.memory, S, kv);  // depend only on the source: once per translate()
    apply(lw.cross_q, in, T, b.cross_q);
    AttentionTrace* trace = traced(s, l, true);
    const std::size_t query = trace ? trace->query - s.first_position : 0;
    if (trace) {
        copy_rows(trace->attention_input, {T, width}, in, width, T, width);
        copy_rows(trace->key_input, {S, a.input_width}, s.memory, a.input_width, S, a.input_width);
        copy_rows(trace->query_raw, {hd}, b.cross_q + query * q_cols + trace->head * hd, 0, 1, hd);
        trace->query_final = trace->query_raw;
        copy_rows(trace->keys_raw, {S, hd}, kv + trace->kv_head * hd, 2 * kv_cols, S, hd);
        trace->keys_final = trace->keys_raw;
        copy_rows(trace->values, {S, hd}, kv + kv_cols + trace->kv_head * hd, 2 * kv_cols, S, hd);
        trace->visible.assign(S, 1);
        if (s.memory_mask)
            for (std::size_t j = 0; j < S; ++j) trace->visible[j] = s.memory_mask[j] != 0;
    }
    // The source's padding, the same row for every query (row stride 0): b.blocked holds one row of S flags.
    detail::MaskRows mask{MaskKind::boolean, nullptr, 0};
    if (s.memory_mask) {
        for (std::size_t j = 0; j < S; ++j) b.blocked[j] = s.memory_mask[j] ? 0 : 1;
        mask.base = b.blocked;
    }
    const HeadAttention core{a, T, S, s.first_position, b.cross_q, q_cols, kv, kv + kv_cols, 2 * kv_cols, mask, nullptr, nullptr,
                    s.cross_attention ? s.cross_attention + l * H * T * S : nullptr, zeroed(s.cross, l, H), trace};
    attend_heads(core, b, b.context, q_cols);
    intervene(a, s.cross, l, T, s.first_position, nullptr, b.context);
    apply(lw.cross_o, b.context, T, out);
    if (!trace) return false;
    finish_trace(*trace, lw.cross_o, b.context, q_cols, hd, query, width, out);
    return true;
}

}  // namespace model
}  // namespace attnscope
