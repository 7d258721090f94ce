// The binding's model adapters: safetensors headers and trained model files read from the heap, and the models run.
#pragma once

#include "marshal.hpp"

namespace attnscope::bindings {

val read_safetensors_raw(std::uintptr_t file, double size);
// A trace as the wrapper returns it, for every model: {layer, head, query, kvHead, layerInput, attentionInput,
// keyInput (null in self-attention), queryRaw, queryVector, keysRaw, keys, values, scores, scale, visible, weights,
// context, headOutput, attentionOutput}.
val trace_value(const AttentionTrace& trace);

// A trained model read from a file. Created empty; load() fills it or leaves it empty (everything the failed
// read built is already freed), so the wrapper deletes it at once on failure.
class Model {
public:
    val load(std::uintptr_t file, double size);
    val lmForward(const val& tokens, bool need_attention, const val& ablate);
    val lmGenerate(const val& prompt, double max_new_tokens, int stop_token, const val& ablate);
    val seq2seqForward(const val& source, const val& target, bool need_attention, const val& ablate);
    val seq2seqTranslate(const val& source, int bos, int eos, const val& max_steps, const val& ablate);
    val trace(const val& call, double layer, double head, double query);
    val rnnForward(const val& source, const val& target);
    val rnnTranslate(const val& source, int bos, int eos, const val& max_steps);

private:
    // The ids of a source or target argument: the vocabulary size of the encoder–decoder this file holds.
    std::vector<std::int32_t> source_ids(const val& ids) const;
    std::vector<std::int32_t> target_ids(const val& ids) const;
    ModelFile file_;
};

}  // namespace attnscope::bindings
