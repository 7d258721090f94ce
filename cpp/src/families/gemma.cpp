// Gemma (HF configuration_gemma.py, modeling_gemma.py): LlamaModel's layers with RMSNorm by (1 + weight), embeddings
// scaled by √hidden_size, GeGLU (the tanh GELU), a head_dim of its own (multi-query in the 2B), and a tied head.
#include "gemma_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f) { return read_gemma_decoder(f, "gemma", GemmaGeneration::first); }

constexpr Architecture architectures[] = {{"GemmaForCausalLM", true}, {"GemmaModel", false}, {nullptr, false}};

}  // namespace

extern const Family gemma_family{"gemma", "Gemma", read, rotary_decoder_tensors, rotary_decoder_tensor_count, gemma_prefixes, gemma_ignored, architectures};

}  // namespace families
}  // namespace attnscope
