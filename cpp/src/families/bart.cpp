// BART (HF configuration_bart.py; modeling_bart.py's BartLearnedPositionalEmbedding, BartEncoderLayer,
// BartDecoderLayer, BartForConditionalGeneration): learned positions read from row position + 2, layernorm_embedding,
// post-LayerNorm blocks, the head tied to `shared` plus final_logits_bias (post_norm_seq2seq.cpp reads the rest).
#include "post_norm_seq2seq.hpp"

namespace attnscope {
namespace families {
namespace {

// BartConfig's defaults: activation_function "gelu", decoder_start_token_id 2 (</s>), eos_token_id 2, pad 1.
plan::Plan read(const Config& f) { return read_post_norm_seq2seq(f, {"bart", true, "gelu", 2, 2, 1}); }

constexpr const char* none[] = {nullptr};
constexpr Architecture architectures[] = {{"BartForConditionalGeneration", true}, {"BartModel", false}, {nullptr, false}};

}  // namespace

extern const Family bart_family{"bart", "BART", read, post_norm_seq2seq_tensors, post_norm_seq2seq_tensor_count,
                                post_norm_seq2seq_prefixes, none, architectures};

}  // namespace families
}  // namespace attnscope
