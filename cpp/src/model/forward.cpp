// The one forward pass of every model, interpreting its plan: a stack's embeddings, then per layer its sublayers
// (attention.cpp) wrapped in their norms and residual sums, sequential or parallel, and the MLP; the final norm; and
// the head. Records the layer input of what trace() shows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "../attend.hpp"
#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "../parallel.hpp"
#include "../sizes.hpp"
#include "steps.hpp"
#include "sublayers.hpp"

namespace attnscope {
namespace model {
namespace {

using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;

// HF's inverse frequencies (modeling_rope_utils.py): 1/theta^(2i/D) over the D = dims rotated features, then the
// scaling's adjustment; `length` is the input's (longrope picks its factors by it).
std::vector<float> inverse_frequencies(const plan::Rope& r, std::size_t length)
{
    const std::size_t half = r.dims / 2;
    std::vector<float> inv(half);
    for (std::size_t i = 0; i < half; ++i) {
        const float exponent = float(2 * i) / float(r.dims);  // computed in float32, as torch does
        double f = double(float(1.0 / std::pow(r.theta, double(exponent))));
        if (r.scaling == plan::RopeScaling::linear) f /= r.factor;
        if (r.scaling == plan::RopeScaling::longrope)
            f = double(float(f / (length > r.original_max_positions ? r.long_factor[i] : r.short_factor[i])));
        if (r.scaling == plan::RopeScaling::llama3) {
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

// x = embedding(tokens)·scale + positions + token types, then the embeddings' norm. (Once per pass, not per layer:
// out of line, so that run_stack's layer loop stays small.)
[[gnu::noinline]] void embed(const Transformer::Impl& m, std::size_t si, const StackStep& s, float* x)
{
    const plan::Embedding& e = m.plan.stacks[si].embedding;
    const StackWeights& sw = m.weights.stacks[si];
    const std::size_t d = e.width;
    const bool tied = int(e.table) == m.weights.tied_table;
    for (std::size_t t = 0; t < s.rows; ++t) {
        const std::size_t id = std::size_t(s.tokens[t]);
        float* row = x + t * d;
        if (tied) {  // the table is the head's panels: column `id` of a d × vocab matrix
            const Matrix& head = m.weights.head;
            if (head.type == kernels::PanelType::f32) {
                const float* panel = head.packed.data() + (id / NR) * d * NR + id % NR;
                for (std::size_t k = 0; k < d; ++k) row[k] = panel[k * NR];
            } else {
                for (std::size_t k = 0; k < d; ++k) row[k] = head.at(k, id);
            }
        } else {
            std::memcpy(row, m.weights.tables[e.table].data.data() + id * d, d * sizeof(float));
        }
        if (e.scale != 1.f) steps::scale(row, d, e.scale);
        if (sw.positions.exists()) steps::add(row, d, sw.positions.data.data() + (e.position_offset + s.first_position + t) * d);
        if (e.type_vocab) steps::add(row, d, sw.types.data.data() + std::size_t(s.token_types ? s.token_types[t] : 0) * d);
    }
    if (e.norm.present()) steps::norm_rows(e.norm, sw.embed_norm, x, s.rows, d, x);
}

void copy_rows_into(Tensor& out, const float* x, std::size_t rows, std::size_t d)
{
    out = Tensor({rows, d});
    std::memcpy(out.data.data(), x, rows * d * sizeof(float));
}

// A buffer's size as size_t, or a RangeError naming the call and the buffer when it cannot be addressed (size_t is 32
// bits in WASM, where a long input's products wrap).
[[gnu::noinline]] std::size_t size_of(std::uint64_t floats, const StackStep& s, const char* what)
{
    if (floats > std::uint64_t(SIZE_MAX / sizeof(float)))
        throw std::length_error(json::join({s.call, ": ", what, " of ", json::Num(s.rows), " tokens needs ", json::Num(floats),
                                            " floats, more than the address space holds; pass fewer tokens"}));
    return std::size_t(floats);
}

}  // namespace

// out = down(act(up(x))), or down(act(gate(x))·up(x)) with gate|up one product ([rows, 2·inner]).
void mlp(const plan::Mlp& p, const LayerWeights& lw, const float* in, std::size_t rows, float* u, float* out)
{
    apply(lw.up, in, rows, u);
    if (!p.gated) {
        steps::activate(p.activation, u, rows * p.inner);
        return apply(lw.down, u, rows, out);
    }
    steps::gate_rows(p.activation, u, rows, p.inner);
    apply(lw.down, u, 2 * p.inner, rows, out);
}

// A sublayer's output `a` joins the residual stream x: its output norm first, then the sum, then the norm after it.
[[gnu::noinline]] void residual(const plan::Norms& n, const NormWeights& out, const NormWeights& after, float* x, float* a, std::size_t rows, std::size_t d)
{
    if (n.out.present()) steps::norm_rows(n.out, out, a, rows, d, a);
    steps::add(x, rows * d, a);
    if (n.after.present()) steps::norm_rows(n.after, after, x, rows, d, x);
}

// cos and sin of every new position for each kind of layer with rotary positions (HF: angle = position · inv_freq,
// and its cos and sin, all in float32), into `rope`; returns where each kind's start.
[[gnu::noinline]] std::vector<std::size_t> rope_tables(const plan::Stack& stack, const StackStep& s, float* rope)
{
    const std::size_t T = s.rows, Lk = s.first_position + T;
    std::vector<std::size_t> rope_at(stack.kinds.size(), 0);
    std::size_t used = 0;
    for (std::size_t k = 0; k < stack.kinds.size(); ++k) {
        const plan::Attention& att = stack.kinds[k].self;
        if (!att.rope) continue;
        const std::size_t half = att.rotary.dims / 2;
        const std::vector<float> inv = inverse_frequencies(att.rotary, Lk);
        const float factor = float(att.rotary.attention_factor);
        rope_at[k] = used;
        for (std::size_t t = 0; t < T; ++t)
            for (std::size_t i = 0; i < half; ++i) {
                const float angle = float(s.first_position + t) * inv[i];
                rope[used + t * half + i] = std::cos(angle) * factor;
                rope[used + T * half + t * half + i] = std::sin(angle) * factor;
            }
        used += 2 * T * half;
    }
    return rope_at;
}

// The input of a sublayer: its norm of x into h, or x itself.
const float* sublayer_input(const plan::Norm& n, const NormWeights& w, const float* x, std::size_t rows, std::size_t d, float* h)
{
    if (!n.present()) return x;
    steps::norm_rows(n, w, x, rows, d, h);
    return h;
}

void run_stack(const Transformer::Impl& m, std::size_t si, const StackStep& s)
{
    const plan::Stack& stack = m.plan.stacks[si];
    const StackWeights& sw = m.weights.stacks[si];
    const std::size_t T = s.rows, d = stack.width(), Lk = s.first_position + T;
    const StackBuffers sizes = stack_buffers(stack, T, Lk, s.memory_rows);
    // Every size is checked before the one allocation: the float buffers in one block (a generated token's pass makes
    // one allocation, not nine), the mask's bytes beside it.
    const std::size_t n_residual = size_of(sizes.residual, s, "the residual stream"), n_qkv = size_of(sizes.qkv, s, "q|k|v");
    const std::size_t n_context = size_of(sizes.context, s, "the heads' contexts"), n_mlp = size_of(sizes.mlp, s, "the MLP's workspace");
    const std::size_t n_scores = size_of(sizes.scores, s, "the attention scores"), n_panels = size_of(sizes.panels, s, "the packed keys and values");
    const std::size_t n_rope = size_of(sizes.rope, s, "the rotary angles"), n_cross = size_of(sizes.cross, s, "cross-attention's queries");
    const std::size_t n_blocked = size_of(sizes.blocked_bytes / sizeof(float) + 1, s, "the attention mask") ? std::size_t(sizes.blocked_bytes) : 0;
    const std::size_t total = size_of(std::uint64_t(n_residual) + n_qkv + n_context + n_mlp + n_scores + n_panels + n_rope + n_cross, s, "the workspace");
    // Not zeroed: every part is written before it is read (the packed panels' padding included), and zeroing it cost
    // a memset of the whole block per call.
    const std::unique_ptr<float[]> work(new float[std::max<std::size_t>(total, 1)]);
    std::vector<std::uint8_t> blocked(n_blocked);
    float* next = work.get();
    const auto take = [&](std::size_t n) {
        float* at = next;
        next += n;
        return at;
    };
    float *x = take(n_residual), *h = x + T * d, *a = h + T * d, *f = a + T * d;
    float *qkv = take(n_qkv), *context = take(n_context), *u = take(n_mlp), *scores = take(n_scores), *panels = take(n_panels);
    float *rope = take(n_rope), *cross_q = take(n_cross);

    if (s.resume) std::memcpy(x, s.resume, T * d * sizeof(float));
    else embed(m, si, s, x);
    const std::vector<std::size_t> rope_at = rope_tables(stack, s, rope);
    const std::size_t worker_scores = n_scores / std::max<std::size_t>(1, detail::worker_count());

    for (std::size_t l = s.first_layer; l < stack.layers(); ++l) {
        if (s.layer_inputs) std::memcpy(s.layer_inputs + (l * s.layer_input_rows + s.first_position) * d, x, T * d * sizeof(float));
        const plan::Layer& layer = stack.layer(l);
        const LayerWeights& lw = sw.layers[l];
        const std::size_t k = stack.kind_of[l], half = layer.self.rotary.dims / 2;
        const Scratch b{qkv, context, scores, worker_scores, cross_q, blocked.data(), panels,
                        layer.self.rope ? rope + rope_at[k] : nullptr, layer.self.rope ? rope + rope_at[k] + T * half : nullptr};
        AttentionTrace* trace = s.sink && s.sink->trace->layer == l ? s.sink->trace : nullptr;
        if (s.residual) std::memcpy(s.residual + l * T * d, x, T * d * sizeof(float));
        if (trace && !s.sink->cross) copy_rows_into(trace->layer_input, x, T, d);
        const plan::Norms& an = layer.attn_norms;
        if (self_attention(m, si, l, s, sublayer_input(an.in, lw.attn_in, x, T, d, h), b, a)) return;
        if (layer.parallel) {  // the MLP reads the layer's input too, and both outputs join it together
            mlp(layer.mlp, lw, sublayer_input(layer.mlp_norms.in, lw.mlp_in, x, T, d, h), T, u, f);
            steps::add(a, T * d, f);
            residual(an, lw.attn_out, lw.attn_after, x, a, T, d);
            continue;
        }
        residual(an, lw.attn_out, lw.attn_after, x, a, T, d);
        if (s.residual_mid) std::memcpy(s.residual_mid + l * T * d, x, T * d * sizeof(float));
        if (layer.has_cross) {
            if (trace && s.sink->cross) copy_rows_into(trace->layer_input, x, T, d);
            const plan::Norms& cn = layer.cross_norms;
            if (cross_attention(m, si, l, s, sublayer_input(cn.in, lw.cross_in, x, T, d, h), b, a)) return;
            residual(cn, lw.cross_out, lw.cross_after, x, a, T, d);
        }
        const plan::Norms& mn = layer.mlp_norms;
        mlp(layer.mlp, lw, sublayer_input(mn.in, lw.mlp_in, x, T, d, h), T, u, a);
        residual(mn, lw.mlp_out, lw.mlp_after, x, a, T, d);
    }
    if (s.residual) std::memcpy(s.residual + stack.layers() * T * d, x, T * d * sizeof(float));
    if (stack.final_norm.present()) steps::norm_rows(stack.final_norm, sw.final_norm, x, T, d, s.out);
    else std::memcpy(s.out, x, T * d * sizeof(float));
}

namespace {

// The head's input rows: the stack's output `hidden` [rows, width], or its copy in `scratch` through the head's
// transform (an MLM head's dense, activation and LayerNorm) and input scale.
const float* head_input(const Transformer::Impl& m, const float* hidden, std::size_t rows, float* scratch)
{
    const plan::Head& p = m.plan.head;
    const Weights& w = m.weights;
    const std::size_t d = m.plan.main().width();
    const float* in = hidden;
    if (p.mlm_transform) {  // dense, activation, LayerNorm
        apply(w.mlm_dense, hidden, rows, scratch);
        steps::activate(p.mlm_activation, scratch, rows * d);
        steps::norm_rows(p.mlm_norm, w.mlm_norm, scratch, rows, d, scratch);
        in = scratch;
    }
    if (p.input_scale != 1.f) {
        if (in != scratch) std::memcpy(scratch, in, rows * d * sizeof(float));
        steps::scale(scratch, rows * d, p.input_scale);
        in = scratch;
    }
    return in;
}

}  // namespace

void run_head(const Transformer::Impl& m, const float* hidden, std::size_t rows, float* scratch, float* logits)
{
    const Matrix& head = m.weights.head;
    apply(head, head_input(m, hidden, rows, scratch), rows, logits);
    // Row by row, so that each row has the bits of a one-row call's (run_head_columns' too).
    const float cap = m.plan.head.softcap;
    for (std::size_t r = 0; r < rows && cap > 0.f; ++r) steps::softcap(logits + r * head.out, head.out, cap);
}

void run_head_columns(const Transformer::Impl& m, const float* hidden, std::size_t rows, float* scratch, const std::vector<std::int32_t>& ids,
                      float* logits)
{
    const float* in = head_input(m, hidden, rows, scratch);
    const Matrix& head = m.weights.head;
    const std::size_t V = head.out, n = ids.size(), width = detail::matmul_panel_width();
    const float cap = m.plan.head.softcap;
    // The asked-for columns listed by panel (`next` links a panel's ids), so that each panel holding one is computed
    // once, over every row.
    constexpr std::size_t none = SIZE_MAX;
    std::vector<std::size_t> listed((V + width - 1) / width, none), next(n);
    for (std::size_t j = n; j-- > 0;) {
        const std::size_t panel = std::size_t(ids[j]) / width;
        next[j] = listed[panel];
        listed[panel] = j;
    }
    std::vector<float> block(rows * width);
    for (std::size_t panel = 0; panel < listed.size(); ++panel) {
        if (listed[panel] == none) continue;
        const std::size_t first = panel * width, cols = std::min(width, V - first);
        apply_columns(head, first, cols, in, rows, block.data(), width);
        for (std::size_t r = 0; r < rows && cap > 0.f; ++r) steps::softcap_columns(block.data() + r * width, cols, first, V, cap);
        for (std::size_t i = listed[panel]; i != none; i = next[i])
            for (std::size_t r = 0; r < rows; ++r) logits[r * n + i] = block[r * width + std::size_t(ids[i]) - first];
    }
}

}  // namespace model
}  // namespace attnscope
