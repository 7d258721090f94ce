// The weights' allocation in the kernels' layout, each tensor's destination in it, and a forward pass's workspace
// beside them (see layout.hpp).
#include "layout.hpp"

#include <algorithm>

#include "../kernels/gemm.hpp"
#include "../parallel.hpp"
#include "../sizes.hpp"

namespace attnscope {
namespace pretrained {
namespace {

constexpr std::size_t NR = kernels::panel_width<xsimd::default_arch>;

void allocate_matrix(Matrix& m, std::size_t in, std::size_t out, bool bias, const char* what)
{
    m.in = in;
    m.out = out;
    resize_floats(m.packed, detail::packed_floats(in, out, NR, what), what);
    if (bias) resize_floats(m.bias, out, what);
}

void allocate_norm(Norm& n, std::size_t d, bool bias)
{
    resize_floats(n.weight, d, "norm");
    if (bias) resize_floats(n.bias, d, "norm");
}

}  // namespace

void allocate_weights(PretrainedModel::Impl& m, bool mlm_head)
{
    const PretrainedConfig& c = m.config;
    Weights& w = m.weights;
    const std::size_t d = c.hidden, V = c.vocab, I = c.intermediate;
    const std::size_t q_cols = c.heads * c.head_dim, qkv_cols = q_cols + 2 * c.kv_heads * c.head_dim;
    const bool ln = c.norm == NormKind::layer_norm;
    if (!(c.tied && c.has_lm_head)) resize_floats(w.token_embedding, detail::checked_mul(V, d, "embedding"), "embedding");
    if (c.positions == PositionKind::learned)
        resize_floats(w.position_embedding, detail::checked_mul(c.max_positions, d, "positions"), "positions");
    if (c.type_vocab) resize_floats(w.token_type_embedding, detail::checked_mul(c.type_vocab, d, "token types"), "token types");
    if (c.post_norm) allocate_norm(w.embed_norm, d, true);
    else allocate_norm(w.final_norm, d, ln);
    w.layers.resize(c.layers);
    for (LayerWeights& l : w.layers) {
        allocate_norm(l.norm1, d, ln);
        allocate_norm(l.norm2, d, ln);
        if (c.qk_norm) {
            allocate_norm(l.q_norm, c.head_dim, false);
            allocate_norm(l.k_norm, c.head_dim, false);
        }
        allocate_matrix(l.qkv, d, qkv_cols, c.qkv_bias, "attention");
        allocate_matrix(l.o, q_cols, d, c.out_bias, "attention");
        allocate_matrix(l.up, d, I, c.mlp_bias, "mlp");
        if (c.mlp == MlpKind::swiglu) allocate_matrix(l.gate, d, I, c.mlp_bias, "mlp");
        allocate_matrix(l.down, I, d, c.mlp_bias, "mlp");
    }
    if (c.has_lm_head) allocate_matrix(w.head, d, V, mlm_head, "lm head");
    if (mlm_head) {
        allocate_matrix(w.mlm_dense, d, d, true, "mlm head");
        allocate_norm(w.mlm_norm, d, true);
    }
}

Destination destination_of(PretrainedModel::Impl& m, const TensorSpec& s)
{
    const PretrainedConfig& c = m.config;
    Weights& w = m.weights;
    LayerWeights* l = s.layer < w.layers.size() ? &w.layers[s.layer] : nullptr;
    const std::size_t q_cols = c.heads * c.head_dim, kv_cols = c.kv_heads * c.head_dim;
    auto plain = [](std::vector<float>& v, std::size_t offset = 0) { return Destination{v.data() + offset, Layout::plain, 0, 0, 1}; };
    auto matrix = [&](Matrix& mat, std::size_t col0) {
        return Destination{mat.packed.data(), s.conv1d ? Layout::rows_in : Layout::rows_out, mat.in, col0, s.shape.back()};
    };
    switch (s.role) {
    case Role::token_embedding: return c.tied && c.has_lm_head ? matrix(w.head, 0) : plain(w.token_embedding);
    case Role::position_embedding: return plain(w.position_embedding);
    case Role::token_type_embedding: return plain(w.token_type_embedding);
    case Role::embed_norm_w: return plain(w.embed_norm.weight);
    case Role::embed_norm_b: return plain(w.embed_norm.bias);
    case Role::norm1_w: return plain(l->norm1.weight);
    case Role::norm1_b: return plain(l->norm1.bias);
    case Role::norm2_w: return plain(l->norm2.weight);
    case Role::norm2_b: return plain(l->norm2.bias);
    case Role::q_norm: return plain(l->q_norm.weight);
    case Role::k_norm: return plain(l->k_norm.weight);
    case Role::q_w: return matrix(l->qkv, 0);
    case Role::k_w: return matrix(l->qkv, q_cols);
    case Role::v_w: return matrix(l->qkv, q_cols + kv_cols);
    case Role::qkv_w: return matrix(l->qkv, 0);
    case Role::q_b: return plain(l->qkv.bias);
    case Role::k_b: return plain(l->qkv.bias, q_cols);
    case Role::v_b: return plain(l->qkv.bias, q_cols + kv_cols);
    case Role::qkv_b: return plain(l->qkv.bias);
    case Role::o_w: return matrix(l->o, 0);
    case Role::o_b: return plain(l->o.bias);
    case Role::up_w: return matrix(l->up, 0);
    case Role::up_b: return plain(l->up.bias);
    case Role::gate_w: return matrix(l->gate, 0);
    case Role::gate_b: return plain(l->gate.bias);
    case Role::down_w: return matrix(l->down, 0);
    case Role::down_b: return plain(l->down.bias);
    case Role::final_norm_w: return plain(w.final_norm.weight);
    case Role::final_norm_b: return plain(w.final_norm.bias);
    case Role::head_w: return matrix(w.head, 0);
    case Role::mlm_dense_w: return matrix(w.mlm_dense, 0);
    case Role::mlm_dense_b: return plain(w.mlm_dense.bias);
    case Role::mlm_norm_w: return plain(w.mlm_norm.weight);
    case Role::mlm_norm_b: return plain(w.mlm_norm.bias);
    case Role::mlm_bias: return plain(w.head.bias);
    }
    return {};
}

std::uint64_t forward_workspace_bytes(const PretrainedConfig& c, std::size_t tokens)
{
    // 64-bit arithmetic that saturates at 2^62 (far beyond any memory) instead of wrapping.
    constexpr std::uint64_t top = std::uint64_t(1) << 62;
    const auto mul = [](std::uint64_t a, std::uint64_t b) { return a != 0 && b > top / a ? top : a * b; };
    const auto add = [](std::uint64_t a, std::uint64_t b) { return a + b > top ? top : a + b; };
    const auto packed = [&](std::uint64_t k, std::uint64_t n) { return mul((n + NR - 1) / NR * NR, k); };
    const std::uint64_t T = tokens, d = c.hidden, L = c.layers, H = c.heads, KV = c.kv_heads, hd = c.head_dim;
    const std::uint64_t q_cols = mul(H, hd), kv_cols = mul(KV, hd), qkv_cols = add(q_cols, mul(2, kv_cols));
    // run_request (model.cpp): the key and value caches, and the outputs it returns.
    std::uint64_t floats = mul(mul(2, L), mul(T, kv_cols));
    floats = add(floats, mul(T, d));                                  // hidden
    if (c.has_lm_head) floats = add(floats, mul(T, c.vocab));         // logits
    floats = add(floats, mul(mul(L, H), mul(T, T)));                  // attention, every layer's
    // run() (forward.cpp): x, h, a; q|k|v; the context; the MLP's up (and gate); one block of scores per thread
    // (query_block, 32 rows); every K/V head's key and value panels; RoPE's cos and sin.
    floats = add(floats, mul(3, mul(T, d)));
    floats = add(floats, add(mul(T, qkv_cols), mul(T, q_cols)));
    floats = add(floats, mul(c.mlp == MlpKind::swiglu ? 2 : 1, mul(T, c.intermediate)));
    floats = add(floats, mul(mul(std::min<std::uint64_t>(T, 32), T), detail::worker_count()));
    floats = add(floats, mul(KV, add(packed(hd, T), packed(T, hd))));
    if (c.positions == PositionKind::rope) floats = add(floats, mul(T, hd));
    return add(mul(floats, 4), mul(T, T));                            // + the blocked-key flags, a byte each
}

}  // namespace pretrained
}  // namespace attnscope
