// The transformer models' hot steps: LayerNorm, Linear, the residual attention and MLP steps, embedding and
// the logits. Built -O3 (the models' orchestration around them is built for size). The sizes here are unchecked on
// purpose: each product indexes a buffer whose size its caller has checked (seq2seq.cpp, language_model.cpp).
#include <algorithm>

#include "attend.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/layer_norm.hpp"
#include "model_parts.hpp"

namespace attnscope {
namespace detail {

namespace {
using arch = xsimd::default_arch;
constexpr float layer_norm_eps = 1e-5f;  // nn.LayerNorm's default
}  // namespace

void Linear::repack()
{
    packed.resize(packed_floats(in, out));
    pack_transposed(in, out, weight->data.data(), in, packed.data());
}

void Linear::apply(const float* x, std::size_t rows, float* y) const
{
    matmul_packed(rows, out, in, x, in, packed.data(), y, out, bias->data.data());
}

void LayerNorm::apply(const float* x, std::size_t rows, std::size_t d, float* y) const
{
    for (std::size_t r = 0; r < rows; ++r)
        kernels::layer_norm{}(arch{}, x + r * d, d, gamma->data.data(), beta->data.data(), layer_norm_eps, y + r * d);
}

void embed(const Parameter& tokens_table, const Parameter& positions_table, const std::int32_t* tokens,
           std::size_t count, std::size_t first_position, std::size_t d, float* x)
{
    for (std::size_t t = 0; t < count; ++t) {
        const float* tok = tokens_table.data.data() + std::size_t(tokens[t]) * d;
        const float* pos = positions_table.data.data() + (first_position + t) * d;
        for (std::size_t c = 0; c < d; ++c) x[t * d + c] = tok[c] + pos[c];
    }
}

void add_inplace(float* x, std::size_t n, const float* a) { kernels::add_inplace{}(arch{}, x, n, a); }

void residual_mlp(const Block& b, const LayerNorm& ln, float* x, std::size_t rows, std::size_t d, float* h, float* u)
{
    ln.apply(x, rows, d, h);
    b.fc1.apply(h, rows, u);
    kernels::gelu_inplace{}(arch{}, u, rows * b.fc1.out);
    b.fc2.apply(u, rows, h);
    kernels::add_inplace{}(arch{}, x, rows * d, h);
}

void residual_attention(MultiHeadAttention& attention, const LayerNorm& ln, float* x, std::size_t T,
                        const float* memory, std::size_t S, bool causal, std::size_t d, float* h, float* a,
                        float* weights, const std::uint8_t* ablate_heads, AttentionTrace* trace)
{
    ln.apply(x, T, d, h);
    ForwardOptions options;
    options.causal = causal;
    options.need_weights = weights != nullptr;
    options.ablate_heads = ablate_heads;
    attention.forward(h, memory ? memory : h, memory ? memory : h, {1, T, memory ? S : T}, options, a, weights);
    if (trace) record_trace(*trace, attention, x, h, T, memory, memory ? S : T, causal, weights, ablate_heads, a);
    kernels::add_inplace{}(arch{}, x, T * d, a);
}

void cached_self_attention(const Block& b, float* x, std::size_t d, float* keys, float* values, std::size_t position,
                           float* h, float* a, float* weights, const std::uint8_t* ablate_heads)
{
    ForwardOptions options;  // the cache holds only the past: no causal mask needed
    options.need_weights = weights != nullptr;
    options.ablate_heads = ablate_heads;
    b.ln1.apply(x, 1, d, h);
    b.self_attn->project_key_value(h, h, 1, keys + position * d, values + position * d);
    b.self_attn->forward_projected(h, 1, keys, values, position + 1, options, a, weights);
    kernels::add_inplace{}(arch{}, x, d, a);
}

void logits_of(const ModelParts& m, const float* x, std::size_t rows, std::size_t d, float* h, float* logits)
{
    m.final_norm.apply(x, rows, d, h);
    m.head.apply(h, rows, logits);
}

std::int32_t argmax(const float* logits, std::size_t n)
{
    return std::int32_t(std::max_element(logits, logits + n) - logits);
}

float* layer_slice(Tensor& t, std::size_t layer)
{
    return t.data.empty() ? nullptr : t.data.data() + layer * (t.data.size() / t.shape[0]);
}

}  // namespace detail
}  // namespace attnscope
