// OLMo 2 (HF configuration_olmo2.py, modeling_olmo2.py): the rotary decoder's layers with their norms on the sublayers'
// outputs instead of their inputs (post_attention_layernorm, post_feedforward_layernorm, each before the residual sum),
// and an RMSNorm over the whole q projection and the whole k projection (q_norm, k_norm) before RoPE.
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

using model::Part;

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"olmo2"};
    family.output_norms = true;
    family.qk_norm_whole = true;
    family.rms_norm_eps = 1e-5;  // Olmo2Config's default
    return read_rotary_decoder(f, family);
}

// Olmo2Model: LlamaModel's names, but no input_layernorm; post_attention_layernorm is the attention output's norm and
// post_feedforward_layernorm the MLP output's; q_norm and k_norm are as wide as q_proj's and k_proj's outputs.
constexpr TensorName tensors[] = {
    {"embed_tokens.weight", Part::token_embedding},
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
    {"layers.{}.mlp.gate_proj.weight", Part::gate},
    {"layers.{}.mlp.up_proj.weight", Part::up},
    {"layers.{}.mlp.down_proj.weight", Part::down},
    {"layers.{}.post_feedforward_layernorm.weight", Part::mlp_out},
    {"norm.weight", Part::final_norm},
    {"lm_head.weight", Part::head, 0, model::Layout::standard, Group::lm_head},
};
constexpr Architecture architectures[] = {{"Olmo2ForCausalLM", true}, {"Olmo2Model", false}, {nullptr, false}};

}  // namespace

extern const Family olmo2_family{"olmo2", "OLMo 2", read, tensors, std::size(tensors), rotary_decoder_prefixes, rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
