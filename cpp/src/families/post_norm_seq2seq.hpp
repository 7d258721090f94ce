// The encoder–decoders whose config.json uses BartConfig's field names and whose modeling code is BartModel's
// (post-LayerNorm blocks with biases everywhere, a `shared` token table for both stacks and the tied head,
// final_logits_bias), with what each family changes: its positions and the embeddings' norm. Their tensor names are
// the same too. Internal to the families.
#pragma once

#include "common.hpp"

namespace attnscope {
namespace families {

/// How one family reads the shared fields.
struct PostNormSeq2Seq {
    const char* family;
    /// Learned positions read from row position + 2 and a LayerNorm on the embeddings (BartLearnedPositionalEmbedding,
    /// layernorm_embedding); else fixed sinusoids from row 0 and no norm.
    bool learned_positions;
    const char* activation;                 ///< activation_function's default
    std::int32_t decoder_start, eos, pad;   ///< the config class's defaults (decoder_start < 0: pad_token_id)
};

plan::Plan read_post_norm_seq2seq(const Config& f, const PostNormSeq2Seq& family);

/// BartModel's tensor names (shared, {encoder,decoder}.embed_positions, .layernorm_embedding, .layers.N.{self_attn,
/// encoder_attn}.{q,k,v,out}_proj, their _layer_norm, fc1, fc2, final_layer_norm; final_logits_bias and lm_head
/// outside it).
extern const TensorName post_norm_seq2seq_tensors[];
extern const std::size_t post_norm_seq2seq_tensor_count;
extern const char* const post_norm_seq2seq_prefixes[];

}  // namespace families
}  // namespace attnscope
