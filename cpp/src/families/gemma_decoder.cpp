// GemmaConfig's, Gemma2Config's and Gemma3TextConfig's fields read into a plan (configuration_gemma*.py; the layers of
// modeling_gemma.py, modeling_gemma2.py and modeling_gemma3.py), and their models' tensor tables. Gemma2Model and
// Gemma3TextModel compute in float32 as this does: √hidden_size is a float32 tensor before it scales the embeddings,
// and every RMSNorm multiplies by (1 + weight) computed in float32 (folded into the weight at load, the same bits).
#include <cmath>

#include "gemma_decoder.hpp"

namespace attnscope {
namespace families {

using json::Num;
using json::Type;

namespace {

using Generation = GemmaGeneration;

// A soft-capping field: absent, the config class's default; null, none (the modeling code tests `is not None`); else a
// number above 0 (0 would divide the scores by zero).
float softcap(const Config& f, const char* name, double fallback)
{
    if (f.has(name)) return float(f.real(name, fallback, 0, 1e30));
    return f.get(name).is(Type::null) ? 0.f : float(fallback);
}

// GemmaMLP as transformers 4.38 to 4.47 read it (PR 29402): `hidden_activation`, else gelu_pytorch_tanh, because
// the first configs say "hidden_act": "gelu" for a model trained with the tanh approximation. Since 4.48 GemmaMLP
// reads hidden_act, which runs those configs with the erf GELU (docs/huggingface.md); a hidden_act that is neither
// value, without hidden_activation, is one the two versions disagree on, and is refused.
plan::Activation first_activation(const Config& f)
{
    if (f.has("hidden_activation")) return activation(f, "hidden_activation", "gelu_pytorch_tanh");
    const std::string act = f.text("hidden_act", "gelu_pytorch_tanh");
    if (act != "gelu" && act != "gelu_pytorch_tanh")
        f.fail({"hidden_act: \"", act, "\" is not supported without hidden_activation (expected \"gelu\" or \"gelu_pytorch_tanh\", "
                "which GemmaMLP reads as the tanh GELU)"});
    return plan::Activation::gelu_tanh;
}

// Per layer, 1 where it attends through the sliding window: `layer_types` when the config has it; else Gemma 2's rule
// (layers 0, 2, 4, … slide: Gemma2Attention's `not layer_idx % 2`, Gemma2Config's `(i + 1) % 2`) or Gemma 3's (layer
// i slides unless i + 1 is a multiple of sliding_window_pattern, 6 when absent: Gemma3TextConfig).
std::vector<std::uint8_t> sliding_layers(const Config& f, Generation g, std::size_t layers)
{
    std::vector<std::uint8_t> sliding(layers, 0);
    if (g == Generation::first) return sliding;
    if (!f.has("layer_types")) {
        const std::size_t pattern = g == Generation::second ? 2 : f.size("sliding_window_pattern", 6, 1, Limits::layers);
        for (std::size_t l = 0; l < layers; ++l) sliding[l] = (l + 1) % pattern != 0;
        return sliding;
    }
    return read_layer_types(f, layers);
}

// The config classes' defaults, by generation.
struct Defaults {
    std::size_t vocab, width, inner, layers, heads, kv_heads, positions;
    double theta;
};
constexpr Defaults defaults[] = {
    {256000, 3072, 24576, 28, 16, 16, 8192, 10000.0},
    {256000, 2304, 9216, 26, 8, 4, 8192, 10000.0},
    {262208, 2304, 9216, 26, 8, 4, 131072, 1000000.0},
};

}  // namespace

plan::Plan read_gemma_decoder(const Config& f, const char* family, Generation g)
{
    const bool first = g == Generation::first, second = g == Generation::second, third = g == Generation::third;
    const Defaults& def = defaults[int(g)];
    refuse_unsupported(f, !first);  // Gemma 2 and 3 soft-cap
    f.require_flag("use_bidirectional_attention", false, "bidirectional attention is not implemented");
    // The class's own default theta is read below, past read_rope's reading of rope_parameters; and Gemma 3's
    // rope_parameters has a form per layer type.
    f.require_absent("rope_parameters", "rope_theta and rope_scaling are read, transformers 5's rope_parameters not yet");
    if (first) {
        f.require_absent("sliding_window", "this family has no sliding window");
    }
    if (f.has("partial_rotary_factor") && f.real("partial_rotary_factor", 1, 0, 1) != 1.0)
        f.fail({"partial_rotary_factor: ", f.get("partial_rotary_factor").excerpt(), " is not supported (this family rotates whole heads)"});
    plan::Plan p;
    p.family = family;
    p.kind = plan::Kind::causal_lm;
    const std::size_t vocab = f.size("vocab_size", def.vocab, 1, Limits::vocab);
    const std::size_t d = f.size("hidden_size", def.width, 1, Limits::width);
    const std::size_t inner = f.size("intermediate_size", def.inner, 1, Limits::inner);
    const std::size_t layers = f.size("num_hidden_layers", def.layers, 1, Limits::layers);
    const std::size_t heads = f.size("num_attention_heads", def.heads, 1, Limits::heads);
    const std::size_t kv_heads = f.size("num_key_value_heads", def.kv_heads, 1, Limits::heads);
    if (heads % kv_heads != 0)
        f.fail({"num_key_value_heads: expected a divisor of num_attention_heads (", Num(heads), "), got ", Num(kv_heads)});
    // head_dim: its own (256 in every config class), not hidden_size / heads; Gemma2Attention still refuses a
    // hidden_size that heads do not divide.
    const std::size_t head_dim = f.size("head_dim", 256, 1, Limits::head_dim);
    if (head_dim % 2 != 0) f.fail({"head_dim: expected an even number (RoPE rotates pairs of features), got ", Num(head_dim)});
    if (second) check_divides(f, "num_attention_heads", heads, "hidden_size", d);
    const std::size_t positions = f.size("max_position_embeddings", def.positions, 1, Limits::positions);
    const plan::Norm norm = rms_norm(float(f.real("rms_norm_eps", 1e-6, 0, 1)), 1.f);  // (1 + weight)
    const plan::Activation act = first ? first_activation(f) : activation(f, "hidden_activation", "gelu_pytorch_tanh");

    plan::Layer layer;
    layer.attn_norms.in = norm;                   // input_layernorm
    if (!first) layer.attn_norms.out = norm;      // post_attention_layernorm, on the attention's output
    plan::Attention& a = layer.self;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.head_dim = head_dim;
    a.input_width = d;
    // GemmaAttention: head_dim^-½; Gemma2Attention and Gemma3Attention: query_pre_attn_scalar^-½. The scalar stands
    // for a number of features (head_dim, or hidden_size / heads): below 1 it only scales the scores towards overflow.
    a.scale = first ? float(1.0 / std::sqrt(double(head_dim))) : float(1.0 / std::sqrt(f.real("query_pre_attn_scalar", 256, 1, 1e30, false)));
    a.softcap = softcap(f, "attn_logit_softcapping", second ? 50.0 : 0.0);  // on the scaled scores, before the mask
    a.causal = true;
    a.rope = true;
    a.rotary = read_rope(f, head_dim);
    a.rotary.theta = f.real("rope_theta", def.theta, 1, 1e30);  // the default is the class's (10⁶ in Gemma 3)
    a.qkv_bias = a.out_bias = f.flag("attention_bias", false);
    if (third) {  // q_norm and k_norm: Gemma3RMSNorm over head_dim, (1 + weight), before RoPE
        a.qk_norm = plan::QkNorm::per_head;
        a.qk_norm_eps = norm.eps;
        a.qk_norm_offset = 1.f;
    }
    layer.mlp_norms.in = norm;               // post_attention_layernorm (Gemma), pre_feedforward_layernorm (2, 3)
    if (!first) layer.mlp_norms.out = norm;  // post_feedforward_layernorm
    layer.mlp = {true, act, inner, false};   // down(act(gate(x)) · up(x)), no biases

    plan::Stack s;
    s.embedding.vocab = vocab;
    s.embedding.width = d;
    s.embedding.scale = float(std::sqrt(double(d)));  // the normalizer, a float32 tensor of hidden_size**0.5
    s.embedding.positions = plan::Positions::rope;
    s.max_positions = positions;
    s.final_norm = norm;
    const std::vector<std::uint8_t> sliding = sliding_layers(f, g, layers);
    bool any_sliding = false;
    for (std::uint8_t v : sliding) any_sliding = any_sliding || v;
    s.kinds = {layer, layer};
    if (any_sliding && f.get("sliding_window").is(Type::null)) f.fail({"sliding_window: null is not supported (sliding layers need a window)"});
    if (!first && (any_sliding || f.has("sliding_window"))) s.kinds[1].self.window = f.size("sliding_window", 4096, 1, Limits::positions);
    if (third) {  // sliding layers: rope_local_base_freq, never scaled (Gemma3TextModel.rotary_emb_local)
        plan::Rope local;
        local.dims = head_dim;
        local.theta = f.real("rope_local_base_freq", 10000.0, 1, 1e30);
        s.kinds[1].self.rotary = local;
    }
    s.kind_of.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) s.kind_of[l] = sliding[l];
    p.stacks.push_back(std::move(s));
    p.head.present = true;
    p.head.tied = f.flag("tie_word_embeddings", true);
    p.head.vocab = vocab;
    p.head.softcap = softcap(f, "final_logit_softcapping", second ? 30.0 : 0.0);
    return p;
}

// The *ForCausalLM classes save their model as `model.`.
const char* const gemma_prefixes[] = {"model.", nullptr};
// The rotary embeddings' inv_freq buffers, where a version saved them.
const char* const gemma_ignored[] = {"layers.{}.self_attn.rotary_emb.inv_freq", "rotary_emb.inv_freq", "rotary_emb_local.inv_freq", nullptr};

}  // namespace families
}  // namespace attnscope
