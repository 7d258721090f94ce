// The binding's model adapters: safetensors headers, our model files, and every model's calls (forward, generate,
// translate, trace; the GRU models' own two) on one class, their requests converted from the wrapper's values.
#include "model_bindings.hpp"

#include <emscripten/bind.h>

#include <cmath>
#include <limits>
#include <utility>

namespace attnscope::bindings {

namespace {

// 0/1 flags as a fresh Uint8Array.
val flags_value(const std::vector<std::uint8_t>& flags)
{
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(flags.size(), flags.data()));
}

// A JS array of numbers as T values: each a whole number in T's range, else a RangeError naming it (a request's values
// are the caller's; the core checks them against the model, this only that C++ can hold them).
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

// A mask's 0/1 entries as bytes: any other whole number becomes 2, which the core refuses naming the entry (a 256
// must not wrap to a valid 0).
std::vector<std::uint8_t> flags_of(const val& array, const char* name)
{
    const std::vector<std::int32_t> values = whole_numbers<std::int32_t>(array, name);
    std::vector<std::uint8_t> flags(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) flags[i] = values[i] == 0 || values[i] == 1 ? std::uint8_t(values[i]) : 2;
    return flags;
}

// The heads a list names (ablation.js headLists: [index, layer, head, …]), checked against `stack`'s layers and heads.
HeadMask heads_of(const val& list, const char* name, const plan::Stack& stack, bool cross)
{
    if (list.isUndefined() || list.isNull()) return {};
    return head_flags(list, name, stack.layers(), cross ? stack.layer(0).cross.heads : stack.layer(0).self.heads);
}

// A request as the wrapper converted it; `kept` holds patchFrom's copy for the call (the core's request only points
// at it) and `call` its name.
Transformer::Request request_of(const val& r, Tensor& kept, std::string& call, const plan::Plan& p)
{
    Transformer::Request request;
    call = r["call"].as<std::string>();
    request.call = call.c_str();
    request.tokens = token_ids(r["tokens"], p.seq2seq() ? "target" : "tokens", p.main().embedding.vocab);
    if (p.seq2seq()) request.source = token_ids(r["source"], "source", p.stacks.front().embedding.vocab);
    const val need_attention = r["needAttention"];
    request.need_attention = need_attention.isUndefined() || need_attention.as<bool>();
    // The other options travel in one object, left out when the call gives none (model.js requestOf): reading each
    // absent one was a crossing into JS, half of a short input's marshalling.
    const val o = r["options"];
    if (o.isUndefined()) return request;
    if (!o["attentionMask"].isUndefined()) request.attention_mask = flags_of(o["attentionMask"], "attentionMask");
    if (!o["tokenTypeIds"].isUndefined()) request.token_type_ids = whole_numbers<std::int32_t>(o["tokenTypeIds"], "tokenTypeIds");
    if (!o["sourceMask"].isUndefined()) request.source_mask = flags_of(o["sourceMask"], "sourceMask");
    request.ablate = heads_of(o["ablate"], "options.ablate", p.main(), false);
    if (p.seq2seq()) {
        request.ablate_cross = heads_of(o["ablateCross"], "options.ablate", p.main(), true);
        request.ablate_encoder = heads_of(o["ablateEncoder"], "options.ablate", p.stacks.front(), false);
    }
    const val ablation = o["ablation"];
    if (!ablation.isUndefined()) {
        const std::string kind = ablation.as<std::string>();
        if (kind != "zero" && kind != "mean") fail(Status::range_error, "options.ablation: expected 'zero' or 'mean', got '%'", {kind.c_str()});
        request.ablation = kind == "mean" ? Ablation::mean : Ablation::zero;
    }
    const val keep_heads = o["keepHeads"];
    request.keep_heads = !keep_heads.isUndefined() && keep_heads.as<bool>();
    const auto flag = [&](const char* name) { return !o[name].isUndefined() && o[name].as<bool>(); };
    request.keep_residual = flag("keepResidual");
    request.keep_qkv = flag("keepQkv");
    request.value_norms = flag("valueNorms");
    request.patch = heads_of(o["patch"], "options.patch", p.main(), false);
    const val from = o["patchFrom"];
    if (!from.isNull() && !from.isUndefined()) {
        // Fields, not Tensor's checking constructor: the core's check of patchFrom names the call and the field.
        kept.shape = shape_of(from["shape"], "options.patchFrom.shape");
        kept.data = emscripten::convertJSArrayToNumberVector<float>(from["data"]);
        request.patch_from = &kept;
    }
    if (!o["patchPositions"].isUndefined()) request.patch_positions = whole_numbers<std::int32_t>(o["patchPositions"], "options.patchPositions");
    // A whole number ≥ 1 (model.js checks its type); the core checks it against the input's length.
    if (!o["logitsToKeep"].isUndefined()) request.logits_to_keep = std::size_t(o["logitsToKeep"].as<double>());
    return request;
}

}  // namespace

// {tensors: [{name, shape, begin, end}] (byte offsets in the file, data order), metadata: {key: value}}, or null with
// the failure recorded (a malformed file's FileError keeps its class: TypeError or RangeError).
val read_safetensors_raw(std::uintptr_t file, double size)
{
    return guarded([&] {
        const SafetensorsHeader header = read_safetensors_header(at<const std::uint8_t>(file), std::size_t(size));
        val tensors = val::array();
        for (const SafetensorsTensor& t : header.tensors) {
            val entry = val::object();
            entry.set("name", t.name);
            entry.set("shape", shape_value(t.shape));
            entry.set("begin", double(t.begin));
            entry.set("end", double(t.end));
            tensors.call<void>("push", entry);
        }
        val metadata = val::object();
        for (const auto& entry : header.metadata) metadata.set(entry.first, entry.second);
        val result = val::object();
        result.set("tensors", tensors);
        result.set("metadata", metadata);
        return result;
    }, "this model");
}

val Model::loadFile(std::uintptr_t file, double size)
{
    return guarded([&] {
        ModelFile loaded = read_model_file(at<const std::uint8_t>(file), std::size_t(size));
        const StateDictModel& model = loaded.language_model ? static_cast<const StateDictModel&>(*loaded.language_model)
                                      : loaded.rnn_seq2seq  ? static_cast<const StateDictModel&>(*loaded.rnn_seq2seq)
                                                            : static_cast<const StateDictModel&>(*loaded.seq2seq);
        val tensors = val::array();
        for (const std::string& key : model.state_dict_keys()) {
            val entry = val::object();
            entry.set("name", key);
            entry.set("shape", shape_value(model.state_dict_shape(key)));
            tensors.call<void>("push", entry);
        }
        val result = val::object();
        // The file's own `kind` strings (tools/MODEL_FORMAT.md), which JS hands on as `model.kind`.
        result.set("kind", std::string(loaded.kind == ModelKind::language_model ? "decoder_lm"
                                       : loaded.kind == ModelKind::rnn_seq2seq  ? "rnn_seq2seq"
                                                                                : "seq2seq"));
        result.set("config", loaded.config);
        result.set("vocab", loaded.vocab);
        result.set("namedHeads", loaded.named_heads);
        result.set("training", loaded.training);
        result.set("tensors", tensors);
        file_ = std::move(loaded);
        model_ = file_.language_model ? &file_.language_model->transformer() : file_.seq2seq ? &file_.seq2seq->transformer() : nullptr;
        return result;
    }, "this model");
}

Transformer& Model::transformer(const char* call) const
{
    if (!model_) fail(Status::state_error, "%: this model is not a transformer", {call});
    return *model_;
}

// The architecture; undefined for a GRU model, which has no plan (null would be the error protocol's failure).
val Model::config() const
{
    return guarded([&] { return model_ ? config_value(model_->plan(), model_->config()) : val::undefined(); });
}

double Model::parameterBytes() const { return model_ ? double(model_->parameter_bytes()) : 0; }

namespace {

// The cache's account, as LanguageModel's ForwardCache shows it.
val cache_info(const ForwardCache& c)
{
    val info = val::object();
    set_numbers(info, {{"id", double(reinterpret_cast<std::uintptr_t>(&c))}, {"positions", double(c.positions())}, {"reused", double(c.reused())},
                       {"resumedLayer", double(c.resumed_layer())}, {"resumedPosition", double(c.resumed_position())},
                       {"bytes", double(c.bytes())}});
    return info;
}

}  // namespace

val Model::forward(const val& request, double cache)
{
    return guarded([&] {
        Tensor kept;
        std::string call;
        Transformer& m = transformer("forward");
        const Transformer::Request r = request_of(request, kept, call, m.plan());
        // options.out.attention, checked before the pass: a wrong array costs no pass and leaves the cache as it was.
        const val options = request["options"];
        const val out_attention = options.isUndefined() ? val::undefined() : options["outAttention"];
        if (!out_attention.isUndefined()) {
            if (!r.need_attention)
                fail(Status::range_error, "options.out.attention: expected no array with needAttention: false (no attention is returned), got Float32Array(%)",
                     {JsNumber{out_attention["length"].as<double>()}});
            const plan::Stack& s = m.plan().main();
            const std::size_t T = r.tokens.size();
            const Shape shape{s.layers(), s.layer(0).self.heads, T, T};
            check_out(out_attention, checked_numel(shape, "options.out.attention"), shape, "options.out.attention");
        }
        // A new cache is handed out only once its first pass succeeded: a refused request leaves nothing behind.
        std::unique_ptr<ForwardCache> fresh = cache == 0 ? std::make_unique<ForwardCache>() : nullptr;
        ForwardCache* through = fresh ? fresh.get() : cache > 0 ? reinterpret_cast<ForwardCache*>(std::uintptr_t(cache)) : nullptr;
        Transformer::Output plain;
        const Transformer::Output& out = through ? m.forward(r, *through) : (plain = m.forward(r));
        val result = val::object();
        result.set("attention", tensor_value(out.attention, out_attention));
        set_tensors(result, {{"logits", &out.logits}, {"hidden", &out.hidden},
                             {"heads", &out.heads}, {"encoderAttention", &out.encoder_attention},
                             {"crossAttention", &out.cross_attention}, {"residual", &out.residual},
                             {"residualMid", &out.residual_mid}, {"qkv", &out.qkv}, {"valueNorms", &out.value_norms}});
        if (!through) return result;
        fresh.release();  // the wrapper owns a new cache from here
        result.set("cache", cache_info(*through));
        return result;
    });
}

val Model::patchEach(const val& request, const val& patches, double cache, const val& logitIds)
{
    return guarded([&] {
        Tensor kept;
        std::string call;
        Transformer& m = transformer("patchEach");
        const Transformer::Request r = request_of(request, kept, call, m.plan());
        // Whole numbers ≥ 0 (model.js checks their types); the core checks them against the model and the input.
        std::vector<Transformer::PatchRun> runs(patches["length"].as<std::size_t>());
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const val run = patches[i];
            runs[i].layer = std::size_t(run["layer"].as<double>());
            runs[i].head = std::size_t(run["head"].as<double>());
            const std::string name = "options.patches[" + std::to_string(i) + "].positions";
            if (!run["positions"].isUndefined()) runs[i].positions = whole_numbers<std::int32_t>(run["positions"], name.c_str());
        }
        // The core reads no ids as every column: an empty list is refused here.
        std::vector<std::int32_t> ids;
        if (!logitIds.isUndefined()) {
            ids = token_ids(logitIds, "options.logitIds", m.config().vocab);
            if (ids.empty()) fail(Status::range_error, "options.logitIds: expected at least one token id (leave it out for every logit), got none");
        }
        ForwardCache own;
        ForwardCache& through = cache > 0 ? *reinterpret_cast<ForwardCache*>(std::uintptr_t(cache)) : own;
        const Tensor logits = m.patch_each(r, runs, through, ids);
        val result = val::object();
        set_tensors(result, {{"logits", &logits}});
        if (cache > 0) result.set("cache", cache_info(through));
        return result;
    });
}

val Model::logitLens(const val& request, double k, double cache, const val& layers)
{
    return guarded([&] {
        Tensor kept;
        std::string call;
        Transformer& m = transformer("logitLens");
        const Transformer::Request r = request_of(request, kept, call, m.plan());
        const std::size_t top = to_size(k, "options.k");
        // options.layers: two numbers (model.js checks their types), or undefined for every row; the core checks the
        // range against the model.
        Transformer::LensRows rows;
        if (!layers.isUndefined()) rows = {to_size(layers[0].as<double>(), "options.layers[0]"), to_size(layers[1].as<double>(), "options.layers[1]")};
        const Transformer::Lens lens = cache > 0 ? m.logit_lens(r, top, *reinterpret_cast<const ForwardCache*>(std::uintptr_t(cache)), rows)
                                                 : m.logit_lens(r, top, rows);
        val result = val::object();
        set_tensors(result, {{"probabilities", &lens.probabilities}});
        // One copy into a fresh Int32Array (a JS array would take a call per id: (layers + 1) · T · k of them).
        result.set("ids", val::global("Int32Array").new_(emscripten::typed_memory_view(lens.ids.size(), lens.ids.data())));
        result.set("fromCache", lens.from_cache);
        result.set("firstLayer", double(lens.first_row));
        return result;
    });
}

val Model::headWeights(const std::string& call, double layer, double head)
{
    return guarded([&] {
        const Transformer::HeadWeights w = transformer(call.c_str()).head_weights(to_size(layer, "layer"), to_size(head, "head"), call.c_str());
        val result = val::object();
        result.set("kvHead", double(w.kv_head));
        set_tensors(result, {{"q", &w.q}, {"k", &w.k}, {"v", &w.v}, {"o", &w.o}});
        return result;
    });
}

void release_forward_cache(double address) { delete reinterpret_cast<ForwardCache*>(std::uintptr_t(address)); }

val Model::generate(const std::string& call, const val& prompt, double max_new_tokens, double stop_token, const val& ablate)
{
    return guarded([&] {
        Transformer& m = transformer(call.c_str());
        const auto tokens = token_ids(prompt, "prompt", m.plan().main().embedding.vocab);
        const auto stop = std::int32_t(whole_number(stop_token, "options.stopToken", -1, std::numeric_limits<std::int32_t>::max()));  // -1: none
        return int_array(m.generate(tokens, to_size(max_new_tokens, "options.maxNewTokens"), stop,
                                    heads_of(ablate, "options.ablate", m.plan().main(), false), call.c_str()));
    });
}

val Model::translate(const val& request, double start, double eos, const val& max_steps)
{
    return guarded([&] {
        Tensor kept;
        std::string call;
        Transformer& m = transformer("translate");
        const Transformer::Request r = request_of(request, kept, call, m.plan());
        // The default and the range are the core's (default_steps, max_steps_limit: the number translate() clips to).
        const std::size_t limit = m.max_steps_limit();
        const std::size_t steps = max_steps.isUndefined() ? m.default_steps()
                                                          : std::size_t(whole_number(max_steps.as<double>(), "options.maxSteps", 1, double(limit)));
        const Transformer::Translation out = m.translate(r.source, std::int32_t(start), std::int32_t(eos), steps, r);
        val result = val::object();
        result.set("tokens", int_array(out.tokens));
        set_tensors(result, {{"encoderAttention", &out.encoder_attention}, {"decoderAttention", &out.decoder_attention},
                             {"crossAttention", &out.cross_attention}});
        return result;
    });
}

val trace_value(const AttentionTrace& t)
{
    val result = val::object();
    set_numbers(result, {{"layer", double(t.layer)}, {"head", double(t.head)}, {"query", double(t.query)},
                         {"kvHead", double(t.kv_head)}, {"scale", double(t.scale)},
                         {"softcap", double(t.softcap)}});
    result.set("visible", flags_value(t.visible));
    set_tensors(result, {{"layerInput", &t.layer_input}, {"attentionInput", &t.attention_input},
                         {"keyInput", &t.key_input},  // null in self-attention: k and v come from attentionInput
                         {"queryRaw", &t.query_raw}, {"queryVector", &t.query_final}, {"keysRaw", &t.keys_raw},
                         {"keys", &t.keys_final}, {"values", &t.values}, {"scores", &t.scores},
                         {"weights", &t.weights}, {"context", &t.context}, {"headOutput", &t.head_output},
                         {"attentionOutput", &t.attention_output}});
    return result;
}

val Model::trace(const val& request, const std::string& attention, double layer, double head, double query, double cache)
{
    return guarded([&] {
        Tensor kept;
        std::string call;
        Transformer& m = transformer("trace");
        const Transformer::Request r = request_of(request, kept, call, m.plan());
        // The API's names of the kinds of attention (index.d.ts): 'self' is the only one of a single stack, 'decoder'
        // an encoder–decoder's own.
        AttentionKind kind = AttentionKind::self;
        if (attention == "encoder") kind = AttentionKind::encoder;
        else if (attention == "cross") kind = AttentionKind::cross;
        else if (attention != "self" && attention != "decoder")
            fail(Status::range_error, "%: options.attention: expected 'encoder', 'decoder' or 'cross', got '%'", {call, attention.c_str()});
        const std::size_t l = to_size(layer, "options.layer"), h = to_size(head, "options.head"), q = to_size(query, "options.query");
        if (cache > 0) return trace_value(m.trace(r, kind, l, h, q, *reinterpret_cast<ForwardCache*>(std::uintptr_t(cache))));
        return trace_value(m.trace(r, kind, l, h, q));
    });
}

// RnnSeq2SeqModel (attnscope/rnn.hpp): {logits, attention} teacher-forced, or null with the status set.
val Model::rnnForward(const val& source, const val& target)
{
    return guarded([&] {
        const RnnSeq2SeqConfig& c = file_.rnn_seq2seq->config();
        const RnnSeq2SeqModel::Output out = file_.rnn_seq2seq->forward(token_ids(source, "source", c.src_vocab_size),
                                                                       token_ids(target, "target", c.tgt_vocab_size));
        val result = val::object();
        set_tensors(result, {{"logits", &out.logits}, {"attention", &out.attention}});  // attention: null without attention
        return result;
    });
}

// {tokens, context, encoderStates, decoderStates, attention (null without attention)}, or null with the status set.
val Model::rnnTranslate(const val& source, int bos, int eos, const val& max_steps)
{
    return guarded([&] {
        const std::size_t limit = file_.rnn_seq2seq->max_steps_limit();
        const std::size_t steps = max_steps.isUndefined() ? limit : std::size_t(whole_number(max_steps.as<double>(), "options.maxSteps", 1, double(limit)));
        const RnnSeq2SeqModel::Translation out =
            file_.rnn_seq2seq->translate(token_ids(source, "source", file_.rnn_seq2seq->config().src_vocab_size), bos, eos, steps);
        val result = val::object();
        result.set("tokens", int_array(out.tokens));
        result.set("context", copy_out(out.context.data(), out.context.size(), val::undefined()));
        set_tensors(result, {{"encoderStates", &out.encoder_states}, {"decoderStates", &out.decoder_states},
                             {"attention", &out.attention}});  // attention: null without attention
        return result;
    });
}

}  // namespace attnscope::bindings
