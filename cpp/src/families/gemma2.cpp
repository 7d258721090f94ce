// Gemma2 (HF configuration_gemma2.py, modeling_gemma2.py): GemmaModel's layers wrapped in four norms (the sandwich),
// scores soft-capped (attn_logit_softcapping) and scaled by query_pre_attn_scalar^-½, logits soft-capped
// (final_logit_softcapping), and sliding-window layers alternating with global ones (layers 0, 2, 4, … slide).
#include "gemma_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

plan::Plan read(const Config& f) { return read_gemma_decoder(f, "gemma2", GemmaGeneration::second); }

constexpr Architecture architectures[] = {{"Gemma2ForCausalLM", true}, {"Gemma2Model", false}, {nullptr, false}};

}  // namespace

extern const Family gemma2_family{"gemma2", "Gemma2", read, sandwich_decoder_tensors, sandwich_decoder_tensor_count, gemma_prefixes,
                                  gemma_ignored, architectures};

}  // namespace families
}  // namespace attnscope
