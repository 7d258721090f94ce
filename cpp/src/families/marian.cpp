// Marian (HF configuration_marian.py; modeling_marian.py's MarianSinusoidalPositionalEmbedding, MarianMTModel):
// BartModel's blocks (post_norm_seq2seq.cpp) with fixed sinusoidal positions from row 0, computed at load and never read
// from the file, no norm on the embeddings, embeddings scaled by sqrt(d_model) as Helsinki-NLP's configs say
// (scale_embedding), `shared` for both stacks and the tied head, final_logits_bias.
#include "post_norm_seq2seq.hpp"

namespace attnscope {
namespace families {
namespace {

// MarianConfig's defaults: activation_function "gelu", decoder_start_token_id = pad_token_id (58100), eos_token_id 0.
plan::Plan read(const Config& f) { return read_post_norm_seq2seq(f, {"marian", false, "gelu", -1, 0, 58100}); }

// The sinusoid tables older transformers saved (a frozen nn.Embedding): the same values, recomputed, not read.
constexpr const char* ignored[] = {"encoder.embed_positions.weight", "decoder.embed_positions.weight", nullptr};
constexpr Architecture architectures[] = {{"MarianMTModel", true}, {"MarianModel", false}, {nullptr, false}};

}  // namespace

extern const Family marian_family{"marian", "Marian", read, post_norm_seq2seq_tensors, post_norm_seq2seq_tensor_count,
                                  post_norm_seq2seq_prefixes, ignored, architectures};

}  // namespace families
}  // namespace attnscope
