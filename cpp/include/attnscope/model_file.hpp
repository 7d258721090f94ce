/// attnscope's trained-model files (tools/MODEL_FORMAT.md): safetensors whose `__metadata__` holds the model's
/// kind, config, vocabulary, named heads and training record. Read as hostile input: everything is checked
/// before the model is built, and the model's allocations are bounded by the tensors the file holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "attnscope/rnn.hpp"
#include "attnscope/safetensors.hpp"
#include "attnscope/transformer.hpp"

namespace attnscope {

/// `__metadata__["format"]` of a model file.
constexpr const char* model_file_format = "attnscope-model/1";

/// The file's `kind`: "decoder_lm" (a LanguageModel), "seq2seq" (a Seq2SeqModel) or "rnn_seq2seq" (an
/// RnnSeq2SeqModel).
enum class ModelKind { language_model, seq2seq, rnn_seq2seq };

/// A loaded model and its metadata. Exactly one of `language_model` / `seq2seq` / `rnn_seq2seq` is set, per `kind`.
struct ModelFile {
    ModelKind kind = ModelKind::language_model;
    std::unique_ptr<LanguageModel> language_model;
    std::unique_ptr<Seq2SeqModel> seq2seq;
    std::unique_ptr<RnnSeq2SeqModel> rnn_seq2seq;
    /// The metadata's JSON texts, as in the file, each checked: config and vocab against the tensors,
    /// named_heads' layers and heads against the config.
    std::string config, vocab, named_heads, training;
};

/// Reads a model file of `size` bytes. Checks, in order: the safetensors header (read_safetensors_header),
/// `__metadata__` (format, kind, and config/vocab/named_heads/training as JSON of the right types), every
/// config size an integer from 1 to 2^24, the config's fixed choices (LayerNorm eps, GELU, pre-norm) as the
/// C++ models implement them, the vocabulary's length and special ids against the config, and then every
/// tensor's name and shape against the config while the model is built. Throws FileError (names the field and
/// the value); nothing is left allocated after a throw.
ModelFile read_model_file(const std::uint8_t* file, std::size_t size);

}  // namespace attnscope
