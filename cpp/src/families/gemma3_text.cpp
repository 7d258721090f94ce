// Gemma3's text model (HF configuration_gemma3.py's Gemma3TextConfig, modeling_gemma3.py's Gemma3ForCausalLM):
// Gemma2Model's layers with q_norm and k_norm, five sliding-window layers to one global by default (`sliding_window_pattern`, or
// `layer_types`), rope_local_base_freq on the sliding layers and rope_theta with its scaling on the global ones.
#include "gemma_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f) { return read_gemma_decoder(f, "gemma3_text", GemmaGeneration::third); }

constexpr Architecture architectures[] = {{"Gemma3ForCausalLM", true}, {"Gemma3TextModel", false}, {nullptr, false}};

}  // namespace

extern const Family gemma3_text_family{"gemma3_text", "Gemma3 (text)", read, sandwich_decoder_tensors, sandwich_decoder_tensor_count,
                                       gemma_prefixes, gemma_ignored, architectures};

}  // namespace families
}  // namespace attnscope
