// LlamaConfig's fields read into a plan (configuration_llama.py and the configs that copy it; modeling_llama.py's
// LlamaAttention, LlamaMLP, LlamaRMSNorm, LlamaRotaryEmbedding), and LlamaModel's tensor table, for the families of
// rotary_decoder.hpp.
#include <cmath>

#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {

using json::Num;
using model::Part;

namespace {

// Which layers see only a window: `layer_types` when the config has it, else the family's rule (sliding_window on
// every layer, null for none; or only with use_sliding_window, on layers from max_window_layers on). Returns the
// window and fills `sliding` per layer.
std::size_t read_windows(const Config& f, const RotaryDecoder& family, std::size_t layers, std::vector<std::uint8_t>& sliding)
{
    using Window = RotaryDecoder::Window;
    sliding.assign(layers, 0);
    std::size_t window = 0, first = layers;
    if (family.window == Window::every_layer) {
        window = f.has("sliding_window") ? f.size("sliding_window", 0, 1, Limits::positions) : 0;
        first = 0;
    } else if (family.window == Window::from_max_window_layers) {
        if (f.flag("use_sliding_window", false)) {
            window = f.has("sliding_window") ? f.size("sliding_window", 0, 1, Limits::positions) : 0;
            first = f.size("max_window_layers", 28, 0, Limits::layers);
        }
    } else {
        f.require_absent("sliding_window", "this family has no sliding window");
    }
    if (f.has("layer_types")) {
        sliding = read_layer_types(f, layers);
        for (std::size_t l = 0; l < layers && window == 0; ++l)
            if (sliding[l]) f.fail({"layer_types[", Num(l), "]: \"sliding_attention\" without a sliding_window"});
    } else if (window != 0) {
        for (std::size_t l = first; l < layers; ++l) sliding[l] = 1;
    }
    return window;
}

}  // namespace

plan::Plan read_rotary_decoder(const Config& f, const RotaryDecoder& family)
{
    refuse_unsupported(f);
    if (!family.partial_rotary && f.has("partial_rotary_factor") && f.real("partial_rotary_factor", 1, 0, 1) != 1.0)
        f.fail({"partial_rotary_factor: ", f.get("partial_rotary_factor").excerpt(), " is not supported (this family rotates whole heads)"});
    plan::Plan p;
    p.family = family.family;
    p.kind = plan::Kind::causal_lm;
    const std::size_t vocab = f.size("vocab_size", 32000, 1, Limits::vocab);
    const std::size_t d = f.size("hidden_size", 4096, 1, Limits::width);
    const std::size_t inner = f.size("intermediate_size", 11008, 1, Limits::inner);
    const std::size_t layers = f.size("num_hidden_layers", 32, 1, Limits::layers);
    const std::size_t heads = f.size("num_attention_heads", 32, 1, Limits::heads);
    // num_key_value_heads: K/V heads shared by groups of heads/kv_heads query heads (repeat_kv); absent → MHA.
    const std::size_t kv_heads = f.size("num_key_value_heads", heads, 1, Limits::heads);
    if (heads % kv_heads != 0)
        f.fail({"num_key_value_heads: expected a divisor of num_attention_heads (", Num(heads), "), got ", Num(kv_heads)});
    // head_dim: explicit in newer configs (which decouple it from hidden_size); else hidden_size / heads.
    std::size_t head_dim = 0;
    if (f.has("head_dim")) {
        head_dim = f.size("head_dim", 0, 1, Limits::head_dim);
    } else {
        check_divides(f, "num_attention_heads", heads, "hidden_size", d);
        head_dim = d / heads;
    }
    // partial_rotary_factor: RoPE on the first int(head_dim · factor) features of each head (the rest pass through).
    const std::size_t rotary = family.partial_rotary ? std::size_t(double(head_dim) * f.real("partial_rotary_factor", 1, 0, 1)) : head_dim;
    if (rotary % 2 != 0 && rotary == head_dim) f.fail({"head_dim: expected an even number (RoPE rotates pairs of features), got ", Num(head_dim)});
    if (rotary % 2 != 0)
        f.fail({"partial_rotary_factor: ", f.get("partial_rotary_factor").excerpt(), " rotates ", Num(rotary), " features of a head of ",
                Num(head_dim), "; RoPE rotates pairs, so it must be even"});
    const std::size_t positions = f.size("max_position_embeddings", 2048, 1, Limits::positions);
    const plan::Norm norm = rms_norm(float(f.real("rms_norm_eps", family.rms_norm_eps, 0, 1)));
    if (f.has("pretraining_tp")) f.size("pretraining_tp", 1, 1, Limits::heads);  // only slices the same products

    plan::Layer layer;
    (family.output_norms ? layer.attn_norms.out : layer.attn_norms.in) = norm;  // input_layernorm, or OLMo 2's post_attention_layernorm
    plan::Attention& a = layer.self;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.head_dim = head_dim;
    a.input_width = d;
    a.scale = float(1.0 / std::sqrt(double(head_dim)));
    a.causal = true;
    a.rope = true;
    a.rotary = family.rope ? family.rope(f, rotary) : read_rope(f, rotary);
    // Biases: `attention_bias` on q, k, v and o; or always on q, k and v and never on o_proj (RotaryDecoder::qkv_bias).
    a.qkv_bias = family.qkv_bias || (family.attention_bias && f.flag("attention_bias", false));
    a.out_bias = !family.qkv_bias && family.attention_bias && f.flag("attention_bias", false);
    if (family.qk_norm || family.qk_norm_whole) {  // q_norm and k_norm over head_dim, or over the whole projections; before RoPE
        a.qk_norm = family.qk_norm_whole ? plan::QkNorm::whole : plan::QkNorm::per_head;
        a.qk_norm_eps = norm.eps;
    }
    (family.output_norms ? layer.mlp_norms.out : layer.mlp_norms.in) = norm;  // post_attention_layernorm, or post_feedforward_layernorm
    layer.mlp = {true, activation(f, "hidden_act", "silu"), inner, family.mlp_bias && f.flag("mlp_bias", false)};

    plan::Stack s;
    s.embedding.vocab = vocab;
    s.embedding.width = d;
    s.embedding.positions = plan::Positions::rope;
    s.max_positions = positions;
    s.final_norm = norm;
    std::vector<std::uint8_t> sliding;
    const std::size_t window = read_windows(f, family, layers, sliding);
    s.kinds = {layer, layer};
    s.kinds[1].self.window = window;
    s.kind_of.resize(layers);
    for (std::size_t l = 0; l < layers; ++l) s.kind_of[l] = sliding[l] ? 1 : 0;
    p.stacks.push_back(std::move(s));
    p.head.present = true;
    p.head.tied = f.flag("tie_word_embeddings", false);
    p.head.vocab = vocab;
    return p;
}

const TensorName rotary_decoder_tensors[] = {
    {"embed_tokens.weight", Part::token_embedding},
    {"layers.{}.input_layernorm.weight", Part::attn_in},
    {"layers.{}.self_attn.q_proj.weight", Part::q},
    {"layers.{}.self_attn.k_proj.weight", Part::k},
    {"layers.{}.self_attn.v_proj.weight", Part::v},
    {"layers.{}.self_attn.q_proj.bias", Part::q_bias},
    {"layers.{}.self_attn.k_proj.bias", Part::k_bias},
    {"layers.{}.self_attn.v_proj.bias", Part::v_bias},
    {"layers.{}.self_attn.o_proj.weight", Part::o},
    {"layers.{}.self_attn.o_proj.bias", Part::o_bias},
    {"layers.{}.self_attn.q_norm.weight", Part::q_norm},
    {"layers.{}.self_attn.k_norm.weight", Part::k_norm},
    {"layers.{}.post_attention_layernorm.weight", Part::mlp_in},
    {"layers.{}.mlp.gate_proj.weight", Part::gate},
    {"layers.{}.mlp.up_proj.weight", Part::up},
    {"layers.{}.mlp.down_proj.weight", Part::down},
    {"layers.{}.mlp.gate_proj.bias", Part::gate_bias},
    {"layers.{}.mlp.up_proj.bias", Part::up_bias},
    {"layers.{}.mlp.down_proj.bias", Part::down_bias},
    {"norm.weight", Part::final_norm},
    // Untied: lm_head.weight; a base model's file (LlamaModel and its kin) has none, and gives hidden states only.
    {"lm_head.weight", Part::head, 0, model::Layout::standard, Group::lm_head},
};
const std::size_t rotary_decoder_tensor_count = std::size(rotary_decoder_tensors);

const TensorName sandwich_decoder_tensors[] = {
    {"embed_tokens.weight", Part::token_embedding},
    {"layers.{}.input_layernorm.weight", Part::attn_in},
    {"layers.{}.self_attn.q_proj.weight", Part::q},
    {"layers.{}.self_attn.k_proj.weight", Part::k},
    {"layers.{}.self_attn.v_proj.weight", Part::v},
    {"layers.{}.self_attn.q_proj.bias", Part::q_bias},
    {"layers.{}.self_attn.k_proj.bias", Part::k_bias},
    {"layers.{}.self_attn.v_proj.bias", Part::v_bias},
    {"layers.{}.self_attn.o_proj.weight", Part::o},
    {"layers.{}.self_attn.o_proj.bias", Part::o_bias},
    {"layers.{}.self_attn.q_norm.weight", Part::q_norm},
    {"layers.{}.self_attn.k_norm.weight", Part::k_norm},
    {"layers.{}.post_attention_layernorm.weight", Part::attn_out},
    {"layers.{}.pre_feedforward_layernorm.weight", Part::mlp_in},
    {"layers.{}.post_feedforward_layernorm.weight", Part::mlp_out},
    {"layers.{}.mlp.gate_proj.weight", Part::gate},
    {"layers.{}.mlp.up_proj.weight", Part::up},
    {"layers.{}.mlp.down_proj.weight", Part::down},
    {"norm.weight", Part::final_norm},
    {"lm_head.weight", Part::head, 0, model::Layout::standard, Group::lm_head},
};
const std::size_t sandwich_decoder_tensor_count = std::size(sandwich_decoder_tensors);
// The *ForCausalLM classes save their decoder as `model.`.
const char* const rotary_decoder_prefixes[] = {"model.", nullptr};
// LlamaRotaryEmbedding's inv_freq buffer, saved by older versions per layer or once.
const char* const rotary_decoder_ignored[] = {"layers.{}.self_attn.rotary_emb.inv_freq", "rotary_emb.inv_freq", nullptr};

}  // namespace families
}  // namespace attnscope
