// Qwen3 (HF configuration_qwen3.py, modeling_qwen3.py): the rotary decoder's layers with `attention_bias`, an RMSNorm over every q
// and k head before RoPE (q_norm, k_norm), a head_dim of its own, and the sliding window from max_window_layers on.
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"qwen3"};
    family.qk_norm = true;
    family.window = RotaryDecoder::Window::from_max_window_layers;
    return read_rotary_decoder(f, family);
}

constexpr Architecture architectures[] = {{"Qwen3ForCausalLM", true}, {"Qwen3Model", false}, {nullptr, false}};

}  // namespace

extern const Family qwen3_family{"qwen3", "Qwen3", read, rotary_decoder_tensors, rotary_decoder_tensor_count, rotary_decoder_prefixes,
                                 rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
