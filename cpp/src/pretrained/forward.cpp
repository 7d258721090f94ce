// The one forward pass of every family, written from the parts the config picked: embeddings, then per layer the
// norm, q|k|v, QK-norm, RoPE, grouped-query attention read in place from the key/value cache, the output projection
// and the MLP, pre- or post-norm; then the final norm and the head. Records what trace() shows when asked.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "../attend.hpp"
#include "../kernels/elementwise.hpp"
#include "../kernels/gemm.hpp"
#include "../kernels/layer_norm.hpp"
#include "../kernels/rms_norm.hpp"
#include "../kernels/rope.hpp"
#include "../kernels/swiglu.hpp"
#include "../parallel.hpp"
#include "parts.hpp"

namespace attnscope {
namespace pretrained {
namespace {

using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;
constexpr std::size_t query_block = 32;
// Multiply-adds of q·kᵀ (over every head) below which the attention runs on the calling thread: about 3 µs of work,
// so the 64-token test models (and a generated token past ~100 positions) already use the helpers.
constexpr double attention_parallel_work = 1 << 16;

void norm_rows(const PretrainedConfig& c, const Norm& n, const float* x, std::size_t rows, std::size_t d, float* y)
{
    for (std::size_t r = 0; r < rows; ++r) {
        if (n.bias.empty()) kernels::rms_norm{}(arch{}, x + r * d, d, n.weight.data(), c.norm_eps, y + r * d);
        else kernels::layer_norm{}(arch{}, x + r * d, d, n.weight.data(), n.bias.data(), c.norm_eps, y + r * d);
    }
}

void apply(const Matrix& m, const float* x, std::size_t rows, float* y)
{
    detail::matmul_packed(rows, m.out, m.in, x, m.in, m.packed.data(), y, m.out, m.bias.empty() ? nullptr : m.bias.data());
}

void activate(MlpKind kind, float* u, std::size_t n)
{
    if (kind == MlpKind::gelu_erf) kernels::gelu_inplace{}(arch{}, u, n);
    else kernels::gelu_tanh_inplace{}(arch{}, u, n);
}

// HF's inverse frequencies (modeling_rope_utils.py): 1/theta^(2i/D), then the scaling's adjustment.
std::vector<float> inverse_frequencies(const PretrainedConfig& c)
{
    const std::size_t half = c.head_dim / 2;
    const RopeConfig& r = c.rope;
    std::vector<float> inv(half);
    for (std::size_t i = 0; i < half; ++i) {
        const float exponent = float(2 * i) / float(c.head_dim);  // computed in float32, as torch does
        double f = double(float(1.0 / std::pow(r.theta, double(exponent))));
        if (r.scaling == RopeScaling::linear) f /= r.factor;
        if (r.scaling == RopeScaling::llama3) {
            const double pi = 3.14159265358979323846, old = double(r.original_max_positions);
            const double low_wavelen = old / r.low_freq_factor, high_wavelen = old / r.high_freq_factor;
            const double wavelen = 2 * pi / f;
            if (wavelen > low_wavelen) {
                f /= r.factor;
            } else if (!(wavelen < high_wavelen)) {  // between the two: interpolated
                const double smooth = (old / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
                f = (1 - smooth) * f / r.factor + smooth * f;
            }
        }
        inv[i] = float(f);
    }
    return inv;
}

void copy_rows(Tensor& out, Shape shape, const float* src, std::size_t ld, std::size_t rows, std::size_t cols)
{
    out = Tensor(std::move(shape));
    for (std::size_t r = 0; r < rows; ++r) std::memcpy(out.data.data() + r * cols, src + r * ld, cols * sizeof(float));
}

// Mean ablation: every row of one head's context (row stride ld) becomes their mean over the real positions, in
// double so that the mean of a long input does not drift.
void mean_rows(float* context, std::size_t ld, std::size_t T, std::size_t hd, const std::uint8_t* key_mask)
{
    std::vector<double> sum(hd, 0.0);
    std::size_t count = 0;
    for (std::size_t t = 0; t < T; ++t) {
        if (key_mask && key_mask[t] == 0) continue;
        for (std::size_t k = 0; k < hd; ++k) sum[k] += context[t * ld + k];
        ++count;
    }
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t k = 0; k < hd; ++k) context[t * ld + k] = count ? float(sum[k] / double(count)) : 0.f;
}

}  // namespace

void run(const PretrainedModel::Impl& model, const Step& s)
{
    const PretrainedConfig& c = model.config;
    const Weights& w = model.weights;
    const std::size_t T = s.rows, d = c.hidden, H = c.heads, KV = c.kv_heads, hd = c.head_dim, I = c.intermediate;
    const std::size_t group = H / KV, q_cols = H * hd, kv_cols = KV * hd, qkv_cols = q_cols + 2 * kv_cols;
    const std::size_t Lk = s.first_position + T, half = hd / 2;
    using detail::checked_mul;
    std::vector<float> x(checked_mul(T, d, s.call)), h(x.size()), a(x.size());
    std::vector<float> qkv(checked_mul(T, qkv_cols, s.call)), ctx(checked_mul(T, q_cols, s.call));
    std::vector<float> u(checked_mul(T, I, s.call)), g(c.mlp == MlpKind::swiglu ? u.size() : 0);
    // Scores and mask for a block of query rows at a time, so a long input never holds a T × T matrix per head.
    // One block's scores per thread (tasks below), the mask of every row, every K/V head's packed panels.
    const std::size_t block = std::min<std::size_t>(T, query_block);
    std::vector<float> scores(checked_mul(checked_mul(block, Lk, s.call), detail::worker_count(), s.call));
    std::vector<std::uint8_t> blocked(checked_mul(T, Lk, s.call));
    const std::size_t key_panel_floats = detail::packed_floats(hd, Lk), value_panel_floats = detail::packed_floats(Lk, hd);
    std::vector<float> key_panels(checked_mul(key_panel_floats, KV, s.call)), value_panels(checked_mul(value_panel_floats, KV, s.call));
    PretrainedTrace* trace = s.sink ? s.sink->trace : nullptr;

    // Embeddings: token (read from the head's panels when tied), + learned position, + token type; BERT's norm.
    const bool tied = w.token_embedding.empty();
    for (std::size_t t = 0; t < T; ++t) {
        const std::size_t id = std::size_t(s.tokens[t]);
        float* row = x.data() + t * d;
        if (tied) {
            const float* panel = w.head.packed.data() + (id / NR) * d * NR + id % NR;
            for (std::size_t k = 0; k < d; ++k) row[k] = panel[k * NR];
        } else {
            std::memcpy(row, w.token_embedding.data() + id * d, d * sizeof(float));
        }
        if (c.positions == PositionKind::learned) {
            const float* p = w.position_embedding.data() + (s.first_position + t) * d;
            for (std::size_t k = 0; k < d; ++k) row[k] += p[k];
        }
        if (c.type_vocab) {
            const float* p = w.token_type_embedding.data() + std::size_t(s.token_types ? s.token_types[t] : 0) * d;
            for (std::size_t k = 0; k < d; ++k) row[k] += p[k];
        }
    }
    if (c.post_norm) norm_rows(c, w.embed_norm, x.data(), T, d, x.data());

    // cos and sin of every new position (HF: angle = position · inv_freq, and its cos and sin, all in float32).
    std::vector<float> cosines, sines;
    if (c.positions == PositionKind::rope) {
        const std::vector<float> inv = inverse_frequencies(c);
        cosines.resize(checked_mul(T, half, s.call));
        sines.resize(cosines.size());
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < half; ++i) {
                const float angle = float(s.first_position + t) * inv[i];
                cosines[t * half + i] = std::cos(angle);
                sines[t * half + i] = std::sin(angle);
            }
    }

    for (std::size_t l = 0; l < c.layers; ++l) {
        const LayerWeights& lw = w.layers[l];
        const bool tracing = trace && trace->layer == l;
        if (tracing) copy_rows(trace->layer_input, {T, d}, x.data(), d, T, d);
        const float* in = x.data();
        if (!c.post_norm) {
            norm_rows(c, lw.norm1, x.data(), T, d, h.data());
            in = h.data();
        }
        if (tracing) copy_rows(trace->attention_input, {T, d}, in, d, T, d);
        apply(lw.qkv, in, T, qkv.data());
        const std::size_t kv0 = q_cols;  // the k heads start after the q heads
        if (tracing) {
            const std::size_t kvh = trace->kv_head;
            copy_rows(trace->query_raw, {hd}, qkv.data() + trace->query * qkv_cols + trace->head * hd, 0, 1, hd);
            copy_rows(trace->keys_raw, {T, hd}, qkv.data() + kv0 + kvh * hd, qkv_cols, T, hd);
            copy_rows(trace->values, {T, hd}, qkv.data() + kv0 + kv_cols + kvh * hd, qkv_cols, T, hd);
        }
        for (std::size_t t = 0; t < T; ++t) {
            float* row = qkv.data() + t * qkv_cols;
            for (std::size_t head = 0; head < H + KV; ++head) {  // the q heads, then the k heads
                float* v = row + head * hd;
                if (c.qk_norm) {
                    const Norm& n = head < H ? lw.q_norm : lw.k_norm;
                    kernels::rms_norm{}(arch{}, v, hd, n.weight.data(), c.norm_eps, v);
                }
                if (c.positions == PositionKind::rope)
                    kernels::rope_rotate_half{}(arch{}, v, half, cosines.data() + t * half, sines.data() + t * half);
            }
            // The new keys and values join the cache.
            const std::size_t p = s.first_position + t;
            float* kc = s.key_cache + (l * s.capacity + p) * kv_cols;
            float* vc = s.value_cache + (l * s.capacity + p) * kv_cols;
            std::memcpy(kc, row + q_cols, kv_cols * sizeof(float));
            std::memcpy(vc, row + q_cols + kv_cols, kv_cols * sizeof(float));
        }
        const float* keys = s.key_cache + l * s.capacity * kv_cols;
        const float* values = s.value_cache + l * s.capacity * kv_cols;
        if (tracing) {
            copy_rows(trace->query_final, {hd}, qkv.data() + trace->query * qkv_cols + trace->head * hd, 0, 1, hd);
            copy_rows(trace->keys_final, {Lk, hd}, keys + trace->kv_head * hd, kv_cols, Lk, hd);
        }

        // Which keys each query row sees: earlier ones (causal), the last `window` of them, and no padding. The
        // same for every head, so built once per layer (T × Lk bytes).
        const std::size_t window = c.window[l];
        for (std::size_t t = 0; t < T; ++t) {
            const std::size_t q = s.first_position + t;
            for (std::size_t j = 0; j < Lk; ++j) {
                const bool visible = (!c.causal || j <= q) && (window == 0 || q - j < window) &&
                                     (!s.key_mask || s.key_mask[j] != 0);
                blocked[t * Lk + j] = visible ? 0 : 1;
            }
        }
        detail::AttendArgs args;
        args.scale = float(1.0 / std::sqrt(double(hd)) / (c.inverse_layer_scale ? double(l + 1) : 1.0));
        args.mask_count = 1;
        const std::uint8_t* ablate = s.ablate && !s.ablate->empty() ? s.ablate->data() + l * H : nullptr;
        const std::uint8_t* patch = s.patch && !s.patch->empty() ? s.patch->data() + l * H : nullptr;
        // Grouped-query attention: each K/V head is packed once and read by its group of query heads in place.
        for (std::size_t kvh = 0; kvh < KV; ++kvh)
            detail::pack_keys_and_values(Lk, hd, hd, {keys + kvh * hd, kv_cols}, {values + kvh * hd, kv_cols},
                                         {key_panels.data() + kvh * key_panel_floats, value_panels.data() + kvh * value_panel_floats});
        auto panels_of = [&](std::size_t head) {
            const std::size_t kvh = head / group;
            return detail::AttendScratch{key_panels.data() + kvh * key_panel_floats,
                                         value_panels.data() + kvh * value_panel_floats, Lk};
        };
        if (tracing) {  // q·k before scaling: the same product attend_rows starts with
            trace->scores = Tensor({Lk});
            kernels::gemm_packed{}(arch{}, 1, Lk, hd, qkv.data() + trace->query * qkv_cols + trace->head * hd, qkv_cols,
                                   panels_of(trace->head).key_panels, hd * NR, trace->scores.data.data(), Lk, nullptr, false);
        }
        // One task per head and block of query rows: its keys end at its last row's position when causal (the later
        // ones are all blocked, their weights zero), so the causal half of the scores is never computed. Each
        // task's result depends only on the task, so every thread count gives the same bits.
        const std::size_t blocks = (T + block - 1) / block;
        auto task = [&](std::size_t index, std::size_t worker) {
            const std::size_t head = index / blocks, r0 = index % blocks * block, rows = std::min(block, T - r0);
            const std::size_t keys_seen = c.causal ? std::min(Lk, s.first_position + r0 + rows) : Lk;
            float* sc = scores.data() + worker * block * Lk;
            const detail::MaskRows mask{MaskKind::boolean, blocked.data() + r0 * Lk, Lk};
            detail::AttendArgs task_args = args;
            task_args.masks = &mask;
            // Row 0 of this call is row r0 of the input: q, the context and the mask start there.
            const detail::Strided q{qkv.data() + r0 * qkv_cols + head * hd, qkv_cols};
            float* context = ctx.data() + r0 * q_cols + head * hd;
            detail::attend_rows(0, rows, keys_seen, hd, hd, q, task_args, panels_of(head), sc, context, q_cols);
            if (ablate && ablate[head] && s.ablation == Ablation::zero)
                for (std::size_t t = 0; t < rows; ++t) std::fill_n(context + t * q_cols, hd, 0.f);
            if (s.attention)
                for (std::size_t t = 0; t < rows; ++t) {
                    float* dst = s.attention + ((l * H + head) * T + r0 + t) * Lk;
                    std::memcpy(dst, sc + t * keys_seen, keys_seen * sizeof(float));
                    std::fill(dst + keys_seen, dst + Lk, 0.f);
                }
            if (tracing && head == trace->head && trace->query >= r0 && trace->query < r0 + rows) {
                const std::size_t row = trace->query - r0;
                trace->scale = args.scale;
                trace->weights = Tensor({Lk});
                std::copy(sc + row * keys_seen, sc + (row + 1) * keys_seen, trace->weights.data.data());
                trace->visible.resize(Lk);
                for (std::size_t j = 0; j < Lk; ++j) trace->visible[j] = blocked[trace->query * Lk + j] ? 0 : 1;
            }
        };
        // Short steps (a generated token) are not worth waking the helpers for.
        if (double(H) * double(T) * double(Lk) * double(hd) < attention_parallel_work)
            for (std::size_t i = 0; i < H * blocks; ++i) task(i, 0);
        else
            detail::parallel_for(H * blocks, task);
        // Mean ablation and patching replace every row of a head, so they wait for all its blocks.
        for (std::size_t head = 0; head < H; ++head) {
            if (ablate && ablate[head] && s.ablation == Ablation::mean) mean_rows(ctx.data() + head * hd, q_cols, T, hd, s.key_mask);
            if (patch && patch[head])
                for (std::size_t t = 0; t < T; ++t)
                    std::memcpy(ctx.data() + t * q_cols + head * hd, s.patch_from + (l * T + t) * q_cols + head * hd, hd * sizeof(float));
        }
        if (tracing) {
            const float* context = ctx.data() + trace->query * q_cols + trace->head * hd;
            copy_rows(trace->context, {hd}, context, 0, 1, hd);
            // The head's share of the output projection: its hd rows of the packed matrix, without bias.
            trace->head_output = Tensor({d});
            kernels::gemm_packed{}(arch{}, 1, d, hd, context, hd, lw.o.packed.data() + trace->head * hd * NR,
                                   lw.o.in * NR, trace->head_output.data.data(), d, nullptr, false);
            // The attention's output at the query: every head's context through the output projection, with its
            // bias (one row of what forward() adds to the residual stream).
            apply(lw.o, ctx.data(), T, a.data());
            copy_rows(trace->attention_output, {d}, a.data() + trace->query * d, 0, 1, d);
            // Nothing after this layer's attention reaches the trace: a trace of layer l costs l + 1 layers, not
            // the whole pass and its logits (the demo traces on every click).
            return;
        }
        if (s.kept) std::memcpy(s.kept + l * T * q_cols, ctx.data(), T * q_cols * sizeof(float));
        apply(lw.o, ctx.data(), T, a.data());
        kernels::add_inplace{}(arch{}, x.data(), T * d, a.data());
        if (c.post_norm) norm_rows(c, lw.norm1, x.data(), T, d, x.data());

        // The MLP: SwiGLU down(silu(gate(h))·up(h)), or down(act(up(h))).
        const float* mlp_in = x.data();
        if (!c.post_norm) {
            norm_rows(c, lw.norm2, x.data(), T, d, h.data());
            mlp_in = h.data();
        }
        apply(lw.up, mlp_in, T, u.data());
        if (c.mlp == MlpKind::swiglu) {
            apply(lw.gate, mlp_in, T, g.data());
            kernels::silu_mul{}(arch{}, g.data(), u.data(), g.size());
            apply(lw.down, g.data(), T, a.data());
        } else {
            activate(c.mlp, u.data(), u.size());
            apply(lw.down, u.data(), T, a.data());
        }
        kernels::add_inplace{}(arch{}, x.data(), T * d, a.data());
        if (c.post_norm) norm_rows(c, lw.norm2, x.data(), T, d, x.data());
    }

    if (c.post_norm) std::memcpy(s.hidden, x.data(), x.size() * sizeof(float));
    else norm_rows(c, w.final_norm, x.data(), T, d, s.hidden);
    if (!s.logits || !c.has_lm_head) return;
    const float* head_in = s.hidden;
    if (!w.mlm_dense.packed.empty()) {  // BERT's MLM transform: dense, activation, LayerNorm
        apply(w.mlm_dense, s.hidden, T, h.data());
        activate(c.mlp, h.data(), h.size());
        norm_rows(c, w.mlm_norm, h.data(), T, d, h.data());
        head_in = h.data();
    }
    // The head is the largest product of a pass (vocab × d per row): generate asks only for the row it reads.
    if (s.last_logits_only) apply(w.head, head_in + (T - 1) * d, 1, s.logits);
    else apply(w.head, head_in, T, s.logits);
}

}  // namespace pretrained
}  // namespace attnscope
