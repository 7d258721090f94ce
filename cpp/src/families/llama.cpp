// Llama (HF configuration_llama.py, modeling_llama.py): RMSNorm, rotary positions with their scalings, grouped-query
// attention, SwiGLU; `attention_bias` and `mlp_bias` switch biases on; no sliding window.
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"llama"};
    family.mlp_bias = true;  // LlamaMLP: mlp_bias on gate_proj, up_proj and down_proj
    return read_rotary_decoder(f, family);
}

constexpr Architecture architectures[] = {{"LlamaForCausalLM", true}, {"LlamaModel", false}, {nullptr, false}};

}  // namespace

extern const Family llama_family{"llama", "Llama", read, rotary_decoder_tensors, rotary_decoder_tensor_count, rotary_decoder_prefixes,
                                 rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
