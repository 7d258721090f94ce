// patch_each()'s runs of one patched layer in one pass: each run resumes from the kept unpatched pass at that layer
// and at its first patched position's query block (the rows before it see nothing the patch changes), and the runs'
// rows go through every projection, norm and MLP together, so each weight is read once per layer for all of them
// instead of once per run. Attention, RoPE and the keys and values stay per run. The products compute every element
// the same way whatever the number of rows (kernels/gemm.hpp), and the norms and element-wise steps act on each row
// alone, so each run gets the bits of its own pass.
#include "patch_runs.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <xsimd/xsimd.hpp>

#include "../json.hpp"
#include "../parallel.hpp"
#include "../sizes.hpp"
#include "heads.hpp"
#include "steps.hpp"
#include "sublayers.hpp"

namespace attnscope {
namespace model {
namespace {

// Floats per SIMD vector of the element-wise kernels (kernels/elementwise.hpp).
constexpr std::size_t lanes = xsimd::batch<float, xsimd::default_arch>::size;
// The batch's rows at most (beyond one run's): its buffers hold about 24 of a layer's widths per row, and past a few
// hundred rows a product gains nothing from more.
constexpr std::size_t batch_rows = 512;

std::size_t checked(std::uint64_t n, const char* call, const char* what)
{
    if (n > std::uint64_t(SIZE_MAX / sizeof(float)))
        throw std::length_error(json::join({call, ": ", what, ": too large to address"}));
    return std::size_t(n);
}

// The heads zeroed in the pass itself (zero ablation) of layer l, or null (attention.cpp's).
const std::uint8_t* zeroed(const Transformer::Request& r, std::size_t l, std::size_t H)
{
    if (r.ablate.empty() || r.ablation != Ablation::zero) return nullptr;
    return r.ablate.data() + l * H;
}

// One batch of runs of one layer: rows [offset[i], offset[i + 1]) of the batch are run i's positions first[i]..T − 1.
void run_batch(const Transformer::Impl& m, const KeptPass& kept, const Transformer::Request& r, std::size_t layer,
               const Transformer::PatchRun* const* runs, std::size_t R, float* last)
{
    const plan::Stack& s = m.plan.main();
    const StackWeights& sw = m.weights.stacks[0];
    const plan::Attention& a0 = s.layer(0).self;
    const std::size_t T = r.tokens.size(), d = s.width(), L = s.layers(), H = a0.heads, hd = a0.head_dim;
    const std::size_t q_cols = a0.q_width(), kv_cols = a0.kv_width(), qkv_cols = q_cols + 2 * kv_cols;
    std::vector<std::size_t> first(R), offset(R + 1, 0);
    for (std::size_t i = 0; i < R; ++i) {
        const std::vector<std::int32_t>& at = runs[i]->positions;
        first[i] = at.empty() ? 0 : std::size_t(*std::min_element(at.begin(), at.end())) / query_block * query_block;
        offset[i + 1] = offset[i] + T - first[i];
    }
    const std::size_t N = offset[R];
    // One run's attention scratch (as run_stack's for T rows), and the batch's rows.
    const StackBuffers one = stack_buffers(s, T, T, 0), all = stack_buffers(s, N, T, 0);
    const char* call = r.call;
    const std::size_t n_rows = checked(all.residual, call, "the runs' residual stream"), n_qkv = checked(all.qkv, call, "q|k|v");
    const std::size_t n_ctx = checked(all.context, call, "the heads' contexts"), n_mlp = checked(all.mlp, call, "the MLP's workspace");
    const std::size_t n_scores = checked(one.scores, call, "the attention scores"), n_panels = checked(one.panels, call, "the packed keys");
    const std::size_t n_rope = checked(one.rope, call, "the rotary angles"), n_kv = checked(std::uint64_t(T) * kv_cols, call, "the keys");
    std::vector<float> work;
    resize_floats(work, checked(std::uint64_t(n_rows) + n_qkv + n_ctx + n_mlp + n_scores + n_panels + n_rope + 2 * std::uint64_t(n_kv) + 1,
                                call, "the runs' workspace"),
                  call, "the runs' workspace");
    std::vector<std::uint8_t> blocked(std::size_t(one.blocked_bytes));
    float* next = work.data();
    const auto take = [&](std::size_t n) {
        float* at = next;
        next += n;
        return at;
    };
    float *x = take(n_rows), *h = x + N * d, *att = h + N * d, *f = att + N * d;
    float *qkv = take(n_qkv), *ctx = take(n_ctx), *u = take(n_mlp), *scores = take(n_scores), *panels = take(n_panels);
    float *rope = take(n_rope), *keys = take(n_kv), *values = take(n_kv);
    StackStep positions;  // every position's angles, position t at row t
    positions.rows = T;
    const std::vector<std::size_t> rope_at = rope_tables(s, positions, rope);
    const std::size_t worker_scores = n_scores / std::max<std::size_t>(1, detail::worker_count());

    for (std::size_t i = 0; i < R; ++i)
        std::memcpy(x + offset[i] * d, kept.layer_inputs + (layer * T + first[i]) * d, (T - first[i]) * d * sizeof(float));
    for (std::size_t l = layer; l < L; ++l) {
        const plan::Layer& kind = s.layer(l);
        const plan::Attention& a = kind.self;
        const LayerWeights& lw = sw.layers[l];
        const std::size_t k = s.kind_of[l], half = a.rotary.dims / 2;
        const float* cos = a.rope ? rope + rope_at[k] : nullptr;
        const float* sin = a.rope ? rope + rope_at[k] + T * half : nullptr;
        const plan::Norms& an = kind.attn_norms;
        apply(lw.qkv, sublayer_input(an.in, lw.attn_in, x, N, d, h), N, qkv);
        for (std::size_t i = 0; i < R; ++i) {
            const std::size_t c = first[i], n = T - c;
            float* q = qkv + offset[i] * qkv_cols;
            // The kept keys and values before c, then this run's.
            std::memcpy(keys, kept.keys + l * kept.capacity * kv_cols, c * kv_cols * sizeof(float));
            std::memcpy(values, kept.values + l * kept.capacity * kv_cols, c * kv_cols * sizeof(float));
            for (std::size_t t = 0; t < n; ++t) {
                float* row = q + t * qkv_cols;
                steps::qk_norm_and_rope(a, lw, row, a.rope ? cos + (c + t) * half : nullptr, a.rope ? sin + (c + t) * half : nullptr);
                std::memcpy(keys + (c + t) * kv_cols, row + q_cols, kv_cols * sizeof(float));
                std::memcpy(values + (c + t) * kv_cols, row + q_cols + kv_cols, kv_cols * sizeof(float));
            }
            for (std::size_t t = 0; t < n; ++t)  // as self_attention's mask
                for (std::size_t j = 0; j < T; ++j) {
                    const std::size_t p = c + t;
                    const bool visible = (!a.causal || j <= p) && (a.window == 0 || p < j + a.window) &&
                                         (r.attention_mask.empty() || r.attention_mask[j] != 0);
                    blocked[t * T + j] = visible ? 0 : 1;
                }
            const Scratch b{qkv, ctx, scores, worker_scores, nullptr, blocked.data(), panels, nullptr, nullptr};
            const bool bias = a.relative_bias && s.relative.buckets;
            const HeadAttention core{a, n, T, c, q, qkv_cols, keys, values, kv_cols, {MaskKind::boolean, blocked.data(), T}, &s.relative,
                                     bias ? sw.relative_bias.data.data() : nullptr, nullptr, zeroed(r, l, H), nullptr};
            float* context = ctx + offset[i] * q_cols;
            attend_heads(core, b, context, q_cols);
            if (l != layer) continue;
            const std::size_t head = runs[i]->head;
            std::vector<std::uint8_t> at(T, runs[i]->positions.empty() ? 1 : 0);
            for (const std::int32_t p : runs[i]->positions) at[std::size_t(p)] = 1;
            for (std::size_t t = 0; t < n; ++t)
                if (at[c + t])
                    std::memcpy(context + t * q_cols + head * hd, r.patch_from->data.data() + (l * T + c + t) * q_cols + head * hd, hd * sizeof(float));
        }
        apply(lw.o, ctx, N, att);
        if (kind.parallel) {  // the MLP reads the layer's input too, and both outputs join it together
            mlp(kind.mlp, lw, sublayer_input(kind.mlp_norms.in, lw.mlp_in, x, N, d, h), N, u, f);
            steps::add(att, N * d, f);
            residual(an, lw.attn_out, lw.attn_after, x, att, N, d);
            continue;
        }
        residual(an, lw.attn_out, lw.attn_after, x, att, N, d);
        const plan::Norms& mn = kind.mlp_norms;
        mlp(kind.mlp, lw, sublayer_input(mn.in, lw.mlp_in, x, N, d, h), N, u, att);
        residual(mn, lw.mlp_out, lw.mlp_after, x, att, N, d);
    }
    for (std::size_t i = 0; i < R; ++i) {
        const float* row = x + (offset[i + 1] - 1) * d;
        if (s.final_norm.present()) steps::norm_rows(s.final_norm, sw.final_norm, row, 1, d, last + i * d);
        else std::memcpy(last + i * d, row, d * sizeof(float));
    }
}

}  // namespace

bool batchable(const Transformer::Impl& m, const Transformer::Request& r)
{
    if (!r.ablate.empty() && r.ablation == Ablation::mean) return false;
    const plan::Stack& s = m.plan.main();
    if (s.width() % lanes) return false;
    for (const plan::Layer& kind : s.kinds)
        if (kind.mlp.inner % lanes || kind.has_cross) return false;
    return true;
}

void patch_runs(const Transformer::Impl& m, const KeptPass& kept, const Transformer::Request& r, std::size_t layer,
                const std::vector<const Transformer::PatchRun*>& runs, float* last)
{
    const std::size_t T = r.tokens.size(), d = m.plan.main().width();
    // Batches of whole runs, up to batch_rows rows (or one run).
    for (std::size_t i = 0; i < runs.size();) {
        std::size_t rows = 0, j = i;
        for (; j < runs.size(); ++j) {
            const std::vector<std::int32_t>& at = runs[j]->positions;
            const std::size_t n = T - (at.empty() ? 0 : std::size_t(*std::min_element(at.begin(), at.end())) / query_block * query_block);
            if (j > i && rows + n > std::max(batch_rows, T)) break;
            rows += n;
        }
        run_batch(m, kept, r, layer, runs.data() + i, j - i, last + i * d);
        i = j;
    }
}

}  // namespace model
}  // namespace attnscope
