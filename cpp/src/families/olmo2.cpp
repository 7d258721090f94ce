// OLMo 2 (HF configuration_olmo2.py, modeling_olmo2.py): the rotary decoder's layers with their norms on the sublayers'
// outputs instead of their inputs (post_attention_layernorm, post_feedforward_layernorm, each before the residual sum),
// and an RMSNorm over the whole q projection and the whole k projection (q_norm, k_norm) before RoPE.
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"olmo2"};
    family.output_norms = true;
    family.qk_norm_whole = true;
    family.rms_norm_eps = 1e-5;  // Olmo2Config's default
    return read_rotary_decoder(f, family);
}

// Olmo2Model: the sandwich layers' names without input_layernorm and pre_feedforward_layernorm; q_norm and k_norm are
// as wide as q_proj's and k_proj's outputs.
constexpr Architecture architectures[] = {{"Olmo2ForCausalLM", true}, {"Olmo2Model", false}, {nullptr, false}};

}  // namespace

extern const Family olmo2_family{"olmo2", "OLMo 2", read, sandwich_decoder_tensors, sandwich_decoder_tensor_count, rotary_decoder_prefixes, rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
