// Mistral (HF configuration_mistral.py, modeling_mistral.py): the rotary decoder's layers with no biases, and a sliding window
// (`sliding_window`, null for none) on every layer.
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"mistral"};
    family.attention_bias = false;  // MistralAttention's projections have no bias
    family.window = RotaryDecoder::Window::every_layer;
    return read_rotary_decoder(f, family);
}

constexpr Architecture architectures[] = {{"MistralForCausalLM", true}, {"MistralModel", false}, {nullptr, false}};

}  // namespace

extern const Family mistral_family{"mistral", "Mistral", read, rotary_decoder_tensors, rotary_decoder_tensor_count,
                                   rotary_decoder_prefixes, rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
