// The binding's model adapters: one class for a loaded model (ours or a checkpoint, the GRU models included), the
// checkpoint loader's streaming protocol, and safetensors headers read from the heap.
#pragma once

#include <memory>
#include <string>

#include "marshal.hpp"

namespace attnscope::bindings {

val read_safetensors_raw(std::uintptr_t file, double size);
// Frees the ForwardCache at `address` (Model::forward's cache.id), whether or not its model is still alive.
void release_forward_cache(double address);
// [{modelType, label}] of every checkpoint family the core reads, in the registry's order.
val families_value();
// A checkpoint's JSON file of `bytes` bytes (at least, when not `complete`) against its limit: undefined, or null with a
// RangeError recorded naming the file, the size and the limit. JS asks before it copies the file into memory.
val check_file_size(const std::string& call, const std::string& file, double bytes, bool complete);
// A trace as the wrapper returns it, for every model: {layer, head, query, kvHead, layerInput, attentionInput,
// keyInput (null in self-attention), queryRaw, queryVector, keysRaw, keys, values, scores, scale, visible, weights,
// context, headOutput, attentionOutput}.
val trace_value(const AttentionTrace& trace);
// A model's architecture as `model.config` shows it (web/src/model-config.d.ts), from its plan: the one place its
// names are written.
val config_value(const plan::Plan& p, const ModelConfig& c);

class Loader;

// A loaded model. Created empty, then filled by loadFile() (our files) or Loader::finish() (a checkpoint); on a failed
// fill it stays empty, so the wrapper deletes it at once. Every method follows the binding's one error protocol
// (null, with _lastStatus() and _lastError()); each request carries the JS call's name, which every message starts with.
class Model {
public:
    // {kind, config, vocab, namedHeads, training (JSON texts), tensors: [{name, shape}]}
    val loadFile(std::uintptr_t file, double size);
    val config() const;
    double parameterBytes() const;
    // request: {call, tokens, attentionMask, tokenTypeIds, source, sourceMask: number[], needAttention, keepHeads:
    // boolean, ablate, ablateCross, ablateEncoder: headLists, ablation: 'zero' | 'mean', patch, patchFrom: {data, shape} | null}
    // cache < 0: a plain pass; else through the ForwardCache at that address (0: a new one), and the result also has
    // {cache: {id (its address), positions, reused, bytes}}. The wrapper (forward-cache.js) holds each address, passes
    // it only to its model and frees it once with release_forward_cache().
    val forward(const val& request, double cache);
    // The logit lens of forward's request: {probabilities: {data, shape [rows, T, k]}, ids: Int32Array}; `cache`
    // a ForwardCache's address (its pass stands for the request's when it is that input's), or 0 for none; `layers`
    // [start, end] the lens rows start..end − 1 (undefined: every row), and the result's firstLayer says start.
    val logitLens(const val& request, double k, double cache, const val& layers);
    // Transformer::patch_each: {logits, cache} through the cache `cache` (0: one for this call only), only the
    // columns of `logitIds` when it is an array.
    val patchEach(const val& request, const val& patches, double cache, const val& logitIds);
    // One head's {kvHead, q, k, v, o}: W_Q, W_K, W_V of the key/value head it reads, W_Oᵀ, each [d, headDim]
    val headWeights(const std::string& call, double layer, double head);
    val generate(const std::string& call, const val& prompt, double max_new_tokens, double stop_token, const val& ablate);
    // maxSteps undefined: the most the model's positions allow
    val translate(const val& request, double start, double eos, const val& max_steps);
    // attention: 'self' (the main stack), 'encoder', 'decoder' (an encoder–decoder's own self-attention), 'cross'
    /// `cache`: a ForwardCache of forwardCached (its address), or 0 for none.
    val trace(const val& request, const std::string& attention, double layer, double head, double query, double cache);
    val rnnForward(const val& source, const val& target);
    val rnnTranslate(const val& source, int bos, int eos, const val& max_steps);

private:
    friend class Loader;
    Transformer& transformer(const char* call) const;
    ModelFile file_;
    std::unique_ptr<Transformer> checkpoint_;
    Transformer* model_ = nullptr;  // the file's transformer, or the checkpoint
};

// CheckpointLoader behind a two-step start (as Model::loadFile): created empty, then open() with config.json's text
// and the call's name, so that a config the core refuses fails like every other call. After an error the wrapper
// deletes the loader.
class Loader {
public:
    val open(const std::string& config_json, const std::string& call, bool allow_non_finite);  // the config, as Model::config()
    val setIndex(const std::string& index_json);
    val files();  // the weight files to read, in order
    val neededHeaderBytes(const std::string& file, std::uintptr_t first8, double file_size);
    val addHeader(const std::string& file, std::uintptr_t bytes, double size, double file_size);  // data start
    // The memory the load and a forward pass of `tokens` tokens (0: the core's default) will take, as a plain object;
    // a RangeError naming the parameters and bytes when WebAssembly memory has no room for it. From config.json alone
    // before the headers, exact after them.
    val plan(double tokens);
    val allocate();  // refuses, before allocating, parameters WebAssembly memory has no room for
    val write(const std::string& file, double offset, std::uintptr_t data, double size);
    val finish(Model& into);  // moves the model into `into`; the loader is spent

private:
    std::unique_ptr<CheckpointLoader> loader_;
    std::string call_;
};

}  // namespace attnscope::bindings
