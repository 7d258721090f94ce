// What our two families share (ours.hpp). Cold code.
#include <cmath>

#include "common.hpp"
#include "ours.hpp"

namespace attnscope {
namespace families {

using json::Num;

std::size_t our_size(const Config& f, const char* name) { return f.size(name, 0, 1, std::size_t(1) << 24); }

void check_our_config(const Config& f, std::size_t d, std::size_t heads)
{
    if (d % heads != 0) f.fail({"d_model: ", Num(d), " is not divisible by n_heads (", Num(heads), ")"});
    if (f.has("head_dim")) {
        const std::size_t head_dim = our_size(f, "head_dim");
        if (head_dim != d / heads) f.fail({"head_dim: expected d_model / n_heads = ", Num(d / heads), ", got ", Num(head_dim)});
    }
    f.require_decimal("ln_eps", "1", -5, "1e-05");
    f.require_text("activation", "gelu_erf");
    f.require_text("norm", "pre");
    f.require_text("pos_emb", "learned");
}

plan::Layer our_layer(std::size_t d, std::size_t heads, std::size_t d_ff, bool causal)
{
    const plan::Norm norm = layer_norm(1e-5f);
    plan::Layer layer;
    layer.attn_norms.in = norm;
    plan::Attention& a = layer.self;
    a.heads = a.kv_heads = heads;
    a.head_dim = d / heads;
    a.input_width = d;
    a.scale = 1.f / std::sqrt(float(a.head_dim));  // MultiHeadAttention's, in float32
    a.causal = causal;
    a.qkv_bias = a.out_bias = true;
    layer.mlp_norms.in = norm;
    layer.mlp = {false, plan::Activation::gelu_erf, d_ff, true};
    return layer;
}

}  // namespace families
}  // namespace attnscope
