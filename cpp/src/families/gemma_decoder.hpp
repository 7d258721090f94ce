// What Gemma, Gemma 2 and Gemma 3's text model share (HF modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py):
// RMSNorm by (1 + weight), embeddings scaled by √hidden_size, GeGLU, a head_dim of its own, a tied head; and what each
// generation adds. Internal to the families.
#pragma once

#include "common.hpp"
#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {

/// Which generation's config and layer a file has.
enum class GemmaGeneration : std::uint8_t {
    first,   ///< pre-norm layers, scores by head_dim^-½
    second,  ///< + sandwich norms, soft-capping, query_pre_attn_scalar, sliding layers every other layer
    third,   ///< + q_norm/k_norm, a rotary base of their own on sliding layers, sliding_window_pattern
};

plan::Plan read_gemma_decoder(const Config& f, const char* family, GemmaGeneration generation);

/// The tensor names: GemmaModel's are LlamaModel's (rotary_decoder_tensors), Gemma2Model's and Gemma3TextModel's
/// the sandwich layers' (sandwich_decoder_tensors); lm_head outside the model, absent when tied.
extern const char* const gemma_prefixes[];
extern const char* const gemma_ignored[];

}  // namespace families
}  // namespace attnscope
