// The binding's Hugging Face checkpoint adapters: PretrainedLoader's streaming protocol and PretrainedModel's calls,
// with the config returned as a plain JS object under the API's camelCase names (the one place they are written).
#include "pretrained_bindings.hpp"

#include "model_bindings.hpp"  // trace_value

#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace attnscope::bindings {

namespace {

val no_value() { return val::undefined(); }

const char* norm_name(NormKind n) { return n == NormKind::rms_norm ? "rmsNorm" : "layerNorm"; }
const char* mlp_name(MlpKind m) { return m == MlpKind::swiglu ? "swiglu" : m == MlpKind::gelu_erf ? "geluErf" : "geluTanh"; }

val positions_value(const PretrainedConfig& c)
{
    val positions = val::object();
    if (c.positions == PositionKind::learned) {
        positions.set("kind", std::string("learned"));
        return positions;
    }
    positions.set("kind", std::string("rope"));
    positions.set("theta", c.rope.theta);
    val scaling = val::null();
    if (c.rope.scaling != RopeScaling::none) {
        scaling = val::object();
        scaling.set("type", std::string(c.rope.scaling == RopeScaling::linear ? "linear" : "llama3"));
        scaling.set("factor", c.rope.factor);
        if (c.rope.scaling == RopeScaling::llama3) {
            scaling.set("lowFreqFactor", c.rope.low_freq_factor);
            scaling.set("highFreqFactor", c.rope.high_freq_factor);
            scaling.set("originalMaxPositions", double(c.rope.original_max_positions));
        }
    }
    positions.set("scaling", scaling);
    return positions;
}

// The config as model.config shows it (web/src/pretrained.d.ts PretrainedConfig).
val config_value(const PretrainedConfig& c)
{
    val config = val::object();
    config.set("family", std::string(to_string(c.family)));
    set_numbers(config, {{"layers", double(c.layers)}, {"heads", double(c.heads)}, {"kvHeads", double(c.kv_heads)},
                         {"headDim", double(c.head_dim)}, {"hiddenSize", double(c.hidden)},
                         {"intermediateSize", double(c.intermediate)}, {"vocabSize", double(c.vocab)},
                         {"maxPositions", double(c.max_positions)}, {"typeVocabSize", double(c.type_vocab)}});
    config.set("norm", std::string(norm_name(c.norm)));
    config.set("normEps", double(c.norm_eps));
    config.set("postNorm", c.post_norm);
    config.set("positions", positions_value(c));
    config.set("mlp", std::string(mlp_name(c.mlp)));
    config.set("qkNorm", c.qk_norm);
    val window = val::array();
    for (std::size_t w : c.window) window.call<void>("push", w == 0 ? val::null() : val(double(w)));
    config.set("window", window);
    config.set("causal", c.causal);
    config.set("hasLmHead", c.has_lm_head);
    config.set("tiedEmbeddings", c.tied);
    return config;
}

// A JS array of numbers as T values: each a whole number in T's range, else a RangeError naming it (a request's
// values are the caller's; the core checks them against the model, this only that C++ can hold them).
template <class T>
std::vector<T> whole_numbers(const val& array, const char* name)
{
    using limits = std::numeric_limits<T>;
    const std::vector<double> values = emscripten::convertJSArrayToNumberVector<double>(array);
    std::vector<T> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!(v >= double(limits::min()) && v <= double(limits::max())) || v != std::floor(v))
            fail(Status::range_error, "%[%]: expected a whole number from % to %, got %",
                 {name, i, JsNumber{double(limits::min())}, JsNumber{double(limits::max())}, JsNumber{v}});
        out[i] = T(v);
    }
    return out;
}

// A request as the wrapper converted it; `kept` holds patchFrom's copy ({data: Float32Array, shape}, or null) for
// the call, since the core's request only points at it. Heads to ablate or patch come as ablation.js headLists gives
// them and are checked against the model's layers and heads here, as for our own models.
PretrainedModel::Request request_of(const val& r, Tensor& kept, const PretrainedConfig& c)
{
    PretrainedModel::Request request;
    request.tokens = whole_numbers<std::int32_t>(r["tokens"], "tokens");
    request.attention_mask = whole_numbers<std::uint8_t>(r["attentionMask"], "attentionMask");
    request.token_type_ids = whole_numbers<std::int32_t>(r["tokenTypeIds"], "tokenTypeIds");
    request.need_attention = r["needAttention"].as<bool>();
    request.ablate = head_flags(r["ablate"], "options.ablate", c.layers, c.heads);
    const std::string ablation = r["ablation"].as<std::string>();
    if (ablation != "zero" && ablation != "mean")
        fail(Status::range_error, "ablation: expected 'zero' or 'mean', got '%'", {ablation.c_str()});
    request.ablation = ablation == "mean" ? Ablation::mean : Ablation::zero;
    request.keep_heads = r["keepHeads"].as<bool>();
    request.patch = head_flags(r["patch"], "options.patch", c.layers, c.heads);
    const val from = r["patchFrom"];
    if (!from.isNull()) {
        // Fields, not Tensor's checking constructor: the core's check of patch_from names the call and the field.
        kept.shape = shape_of(from["shape"], "patchFrom.shape");
        kept.data = emscripten::convertJSArrayToNumberVector<float>(from["data"]);
        request.patch_from = &kept;
    }
    return request;
}

}  // namespace

val HfLoader::open(const std::string& config_json)
{
    return guarded([&] {
        loader_ = std::make_unique<PretrainedLoader>(config_json);
        return config_value(loader_->config());
    });
}

val HfLoader::setIndex(const std::string& index_json)
{
    return guarded([&] {
        loader_->set_index(index_json);
        return no_value();
    });
}

val HfLoader::files()
{
    return guarded([&] {
        val names = val::array();
        for (const std::string& name : loader_->files()) names.call<void>("push", name);
        return names;
    });
}

val HfLoader::neededHeaderBytes(const std::string& file, std::uintptr_t first8, double file_size)
{
    return guarded([&] {
        try {
            return val(double(PretrainedLoader::needed_header_bytes(at<const std::uint8_t>(first8), std::uint64_t(file_size))));
        } catch (const FileError& e) {
            // needed_header_bytes sees 8 bytes, not which file they began: its message says "safetensors", and the
            // user needs the file's name there (a checkpoint may have many).
            const std::string what = e.what();
            const std::string generic = "safetensors: ";
            const std::size_t at = what.find(generic);
            if (at == std::string::npos) throw;
            throw FileError(e.kind(), what.substr(0, at) + file + ": " + what.substr(at + generic.size()));
        }
    });
}

val HfLoader::addHeader(const std::string& file, std::uintptr_t bytes, double size, double file_size)
{
    return guarded([&] {
        return val(double(loader_->add_header(file, at<const std::uint8_t>(bytes), std::size_t(size), std::uint64_t(file_size))));
    });
}

val HfLoader::plan(double tokens)
{
    return guarded([&] {
        const PretrainedPlan p = loader_->plan(to_size(tokens, "planTokens"));
        // The plan against the ceiling, in the binding beside require_memory: what is left of WebAssembly memory now
        // (a model loaded before this one still holds its share).
        const double limit = memory_limit_bytes(), left = limit - heap_bytes_in_use();
        const std::string family = to_string(loader_->config().family);
        if (double(p.bytes()) > left)
            fail(Status::range_error,
                 "%: % with these sizes needs % (% parameters: % as F32, and % to run % tokens with every attention map), "
                 "more than the % WebAssembly memory has left (limit %); fewer planTokens need less",
                 {p.exact ? "this model" : "config.json", family, Bytes{double(p.bytes())}, std::size_t(p.parameters),
                  Bytes{double(p.parameter_bytes)}, Bytes{double(p.workspace_bytes)}, p.tokens, Bytes{left}, Bytes{limit}});
        val out = val::object();
        out.set("parameters", double(p.parameters));
        out.set("parameterBytes", double(p.parameter_bytes));
        out.set("tokens", double(p.tokens));
        out.set("workspaceBytes", double(p.workspace_bytes));
        out.set("bytes", double(p.bytes()));
        out.set("availableBytes", left);
        out.set("exact", p.exact);
        return out;
    });
}

val HfLoader::allocate()
{
    return guarded([&] {
        // The one memory check: the parameters' F32 bytes against what WebAssembly memory has left, before growing it.
        // (The loader's own limit, max_pretrained_parameter_bytes, keeps the count within size_t.)
        require_memory(std::size_t(loader_->parameter_bytes()), "this model's parameters (F32)");
        loader_->allocate();
        return val(double(loader_->parameter_bytes()));
    }, "this model");
}

val HfLoader::write(const std::string& file, double offset, std::uintptr_t data, double size)
{
    return guarded([&] {
        loader_->write(file, std::uint64_t(offset), at<const std::uint8_t>(data), std::size_t(size));
        return no_value();
    });
}

val HfLoader::finish(HfModel& into)
{
    return guarded([&] {
        into.model_ = loader_->finish();
        loader_.reset();  // its headers' text and tables go now, not when JS gets round to delete()
        return no_value();
    });
}

val HfModel::config() const { return config_value(model_->config()); }

double HfModel::parameterBytes() const { return double(model_->parameter_bytes()); }

val HfModel::forward(const val& request)
{
    return guarded([&] {
        Tensor kept;
        const PretrainedModel::Output out = model_->forward(request_of(request, kept, model_->config()));
        val result = val::object();
        set_tensors(result, {{"logits", &out.logits}, {"hidden", &out.hidden},
                             {"attention", &out.attention}, {"heads", &out.heads}});
        return result;
    });
}

val HfModel::generate(const val& prompt, double max_new_tokens, double stop_token, const val& ablate)
{
    return guarded([&] {
        const auto tokens = whole_numbers<std::int32_t>(prompt, "prompt");
        const auto stop = std::int32_t(whole_number(stop_token, "stopToken", -1, std::numeric_limits<std::int32_t>::max()));  // -1: none
        return int_array(model_->generate(tokens, to_size(max_new_tokens, "maxNewTokens"), stop,
                                          head_flags(ablate, "options.ablate", model_->config().layers, model_->config().heads)));
    });
}

val HfModel::trace(const val& request, double layer, double head, double query)
{
    return guarded([&] {
        Tensor kept;
        return trace_value(model_->trace(request_of(request, kept, model_->config()), to_size(layer, "layer"),
                                         to_size(head, "head"), to_size(query, "query")));
    });
}

}  // namespace attnscope::bindings
