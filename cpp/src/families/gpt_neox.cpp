// GPT-NeoX and Pythia (HF configuration_gpt_neox.py; modeling_gpt_neox.py's GPTNeoXAttention, GPTNeoXMLP, GPTNeoXLayer,
// GPTNeoXForCausalLM): pre-LayerNorm blocks with biases, sequential or parallel residuals, rotary positions on a fraction
// of each head, q|k|v fused per head, GELU, an untied head `embed_out`.
#include <cmath>

#include "common.hpp"

namespace attnscope {
namespace families {
namespace {

using json::Num;
using model::Layout;
using model::Part;

plan::Plan read(const Config& f)
{
    refuse_unsupported(f);
    plan::Plan p;
    p.family = "gpt_neox";
    p.kind = plan::Kind::causal_lm;
    const std::size_t vocab = f.size("vocab_size", 50432, 1, Limits::vocab);
    const std::size_t d = f.size("hidden_size", 6144, 1, Limits::width);
    const std::size_t inner = f.size("intermediate_size", 24576, 1, Limits::inner);
    const std::size_t layers = f.size("num_hidden_layers", 44, 1, Limits::layers);
    const std::size_t heads = f.size("num_attention_heads", 64, 1, Limits::heads);
    check_divides(f, "num_attention_heads", heads, "hidden_size", d);  // head_size = hidden_size / num_attention_heads
    const std::size_t head_dim = d / heads;
    const std::size_t positions = f.size("max_position_embeddings", 2048, 1, Limits::positions);
    const plan::Norm norm = layer_norm(float(f.real("layer_norm_eps", 1e-5, 0, 1)));  // every LayerNorm, with its bias
    // rotary_pct: rotary_ndims = int(head_size · rotary_pct) features of each head rotate, the rest pass through.
    const double pct = f.real("rotary_pct", 0.25, 0, 1, false);
    const std::size_t rotary = std::size_t(double(head_dim) * pct);
    if (rotary % 2 != 0)
        f.fail({"rotary_pct: ", f.get("rotary_pct").excerpt(), " rotates ", Num(rotary), " features of a head of ", Num(head_dim),
                " (int(head_size * rotary_pct)); RoPE rotates pairs, so it must be even"});
    // attention_bias (default true): query_key_value and dense have biases; the MLP's two Linears always do.
    const bool bias = f.flag("attention_bias", true);

    plan::Layer layer;
    layer.attn_norms.in = norm;  // input_layernorm
    plan::Attention& a = layer.self;
    a.heads = a.kv_heads = heads;
    a.head_dim = head_dim;
    a.input_width = d;
    a.scale = float(1.0 / std::sqrt(double(head_dim)));  // norm_factor = head_size ** -0.5
    a.causal = true;
    a.rope = rotary > 0;
    a.rotary = read_rope(f, rotary, "rotary_emb_base");  // rotary_emb_base: the base of the frequencies (rope_theta)
    a.qkv_bias = a.out_bias = bias;
    layer.mlp_norms.in = norm;  // post_attention_layernorm
    layer.mlp = {false, activation(f, "hidden_act", "gelu"), inner, true};  // dense_h_to_4h, act, dense_4h_to_h
    // use_parallel_residual (default true): x + attn(ln1(x)) + mlp(ln2(x)); false: x += attn(ln1(x)); x += mlp(ln2(x)).
    layer.parallel = f.flag("use_parallel_residual", true);

    plan::Stack s;
    s.embedding.vocab = vocab;
    s.embedding.width = d;
    s.embedding.positions = rotary > 0 ? plan::Positions::rope : plan::Positions::none;
    s.max_positions = positions;
    s.final_norm = norm;  // final_layer_norm
    uniform_layers(s, layer, layers);
    p.stacks.push_back(std::move(s));
    p.head.present = true;
    p.head.tied = f.flag("tie_word_embeddings", false);  // GPTNeoXConfig's default: embed_out is its own matrix
    p.head.vocab = vocab;
    return p;
}

// GPTNeoXModel: embed_in, layers.N (input_layernorm, attention.query_key_value with rows [heads, 3, head_size],
// attention.dense, post_attention_layernorm, mlp.dense_h_to_4h, mlp.dense_4h_to_h), final_layer_norm; embed_out outside.
constexpr TensorName tensors[] = {
    {"embed_in.weight", Part::token_embedding},
    {"layers.{}.input_layernorm.weight", Part::attn_in},
    {"layers.{}.input_layernorm.bias", Part::attn_in_bias},
    {"layers.{}.attention.query_key_value.weight", Part::qkv, 0, Layout::per_head_qkv},
    {"layers.{}.attention.query_key_value.bias", Part::qkv_bias, 0, Layout::per_head_qkv},
    {"layers.{}.attention.dense.weight", Part::o},
    {"layers.{}.attention.dense.bias", Part::o_bias},
    {"layers.{}.post_attention_layernorm.weight", Part::mlp_in},
    {"layers.{}.post_attention_layernorm.bias", Part::mlp_in_bias},
    {"layers.{}.mlp.dense_h_to_4h.weight", Part::up},
    {"layers.{}.mlp.dense_h_to_4h.bias", Part::up_bias},
    {"layers.{}.mlp.dense_4h_to_h.weight", Part::down},
    {"layers.{}.mlp.dense_4h_to_h.bias", Part::down_bias},
    {"final_layer_norm.weight", Part::final_norm},
    {"final_layer_norm.bias", Part::final_norm_bias},
    {"embed_out.weight", Part::head, 0, Layout::standard, Group::lm_head},
};
// GPTNeoXForCausalLM saves GPTNeoXModel as `gpt_neox.` (base_model_prefix).
constexpr const char* prefixes[] = {"gpt_neox.", nullptr};
// Buffers older transformers saved (Pythia's files have them): the causal mask, the masked score, RoPE's inv_freq.
constexpr const char* ignored[] = {"layers.{}.attention.bias", "layers.{}.attention.masked_bias", "layers.{}.attention.rotary_emb.inv_freq",
                                   nullptr};
constexpr Architecture architectures[] = {{"GPTNeoXForCausalLM", true}, {"GPTNeoXModel", false}, {nullptr, false}};

}  // namespace

extern const Family gpt_neox_family{"gpt_neox", "GPT-NeoX (Pythia)", read, tensors, std::size(tensors), prefixes, ignored, architectures};

}  // namespace families
}  // namespace attnscope
