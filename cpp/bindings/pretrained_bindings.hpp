// The binding's Hugging Face checkpoint adapters: the streaming loader and the loaded model, as raw entry points.
#pragma once

#include <memory>
#include <string>

#include "attnscope/pretrained.hpp"
#include "marshal.hpp"

namespace attnscope::bindings {

class HfModel;

// PretrainedLoader behind a two-step start (as Model::load): created empty, then open() with config.json's text, so
// that a config the core refuses fails like every other call. Every method follows the binding's one error protocol
// (null, with _lastStatus() and _lastError(); a FileError keeps its TypeError / RangeError class); after an error
// the wrapper deletes the loader.
class HfLoader {
public:
    val open(const std::string& config_json);  // the config, as HfModel::config()
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
    val finish(HfModel& into);  // moves the model into `into`; the loader is spent

private:
    std::unique_ptr<PretrainedLoader> loader_;
};

// A loaded checkpoint; its calls follow the same protocol.
class HfModel {
public:
    val config() const;
    double parameterBytes() const;
    // request: {tokens, attentionMask, tokenTypeIds: number[], needAttention: boolean, ablate: 0/1 per layer × head,
    // ablation: 'zero' | 'mean', keepHeads: boolean, patch: 0/1 per layer × head, patchFrom: {data, shape} | null}
    val forward(const val& request);
    val generate(const val& prompt, double max_new_tokens, double stop_token, const val& ablate);
    val trace(const val& request, double layer, double head, double query);

private:
    friend class HfLoader;
    std::unique_ptr<PretrainedModel> model_;
};

}  // namespace attnscope::bindings
