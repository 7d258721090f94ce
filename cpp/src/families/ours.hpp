// Our own model files' families (tools/MODEL_FORMAT.md): their configs read from a file's __metadata__.config with
// every check and message of the format, and the plans of the C++ API's sizes. Internal to the core.
#pragma once

#include "attnscope/transformer.hpp"
#include "family.hpp"

namespace attnscope {
namespace families {

/// `decoder_lm`: __metadata__.config → LanguageModelConfig (FileError naming the field), and its plan.
LanguageModelConfig read_language_model(const Config& f);
plan::Plan language_model_plan(const LanguageModelConfig& c);

/// `seq2seq`: __metadata__.config → Seq2SeqModelConfig, and its plan.
Seq2SeqModelConfig read_seq2seq(const Config& f);
plan::Plan seq2seq_plan(const Seq2SeqModelConfig& c);

/// What both kinds fix (tools/MODEL_FORMAT.md, "Common architecture"), checked where the file states it: head_dim,
/// ln_eps 1e-5, exact GELU, pre-norm, learned positions. `d` must divide by `heads`.
void check_our_config(const Config& f, std::size_t d, std::size_t heads);
/// A config size of our files: an integer from 1 to 2^24 (their tensors are the real bound).
std::size_t our_size(const Config& f, const char* name);

/// Our blocks, as tools/training/attnscope_nets.py builds them: pre-LayerNorm (eps 1e-5, nn.LayerNorm's default), attention
/// as nn.MultiheadAttention (q|k|v biases, 1/√head_dim), an MLP fc2(gelu(fc1(x))) with exact GELU.
plan::Layer our_layer(std::size_t d, std::size_t heads, std::size_t d_ff, bool causal);

}  // namespace families
}  // namespace attnscope
