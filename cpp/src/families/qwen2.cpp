// Qwen2 (HF configuration_qwen2.py, modeling_qwen2.py): the rotary decoder's layers with biases on q, k and v (none on o_proj),
// and a sliding window only with use_sliding_window, on the layers from max_window_layers on (or as layer_types says).
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"qwen2"};
    family.qkv_bias = true;  // Qwen2Attention: q_proj, k_proj, v_proj with bias=True, o_proj without
    family.attention_bias = false;
    family.window = RotaryDecoder::Window::from_max_window_layers;
    return read_rotary_decoder(f, family);
}

constexpr Architecture architectures[] = {{"Qwen2ForCausalLM", true}, {"Qwen2Model", false}, {nullptr, false}};

}  // namespace

extern const Family qwen2_family{"qwen2", "Qwen2", read, rotary_decoder_tensors, rotary_decoder_tensor_count, rotary_decoder_prefixes,
                                 rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
