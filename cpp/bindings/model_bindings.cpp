// The binding's model adapters: safetensors headers, model files, and LanguageModel / Seq2SeqModel calls and traces.
#include "model_bindings.hpp"

#include <emscripten/bind.h>

#include <utility>

namespace attnscope::bindings {

namespace {

// The heads to switch off, as the wrapper passes them (ablation.js headLists), checked against the model's sizes.
HeadMask head_mask(const val& list, const LanguageModelConfig& c)
{
    return head_flags(list, "options.ablate", c.num_layers, c.num_heads);
}

// {encoderSelf, decoderSelf, decoderCross}: one list per kind of attention.
Seq2SeqAblation seq2seq_ablation(const val& lists, const Seq2SeqModelConfig& c)
{
    const char* name = "options.ablate";
    return {head_flags(lists["encoderSelf"], name, c.num_encoder_layers, c.num_heads),
            head_flags(lists["decoderSelf"], name, c.num_decoder_layers, c.num_heads),
            head_flags(lists["decoderCross"], name, c.num_decoder_layers, c.num_heads)};
}

// options.maxSteps (a number, JS checked its type): `fallback` steps when undefined, else a whole number from 1 to the
// model's own limit, which its translate() clips to (so the check and the clip are one number).
std::size_t steps_of(const val& max_steps, std::size_t limit, std::size_t fallback)
{
    if (max_steps.isUndefined()) return fallback;
    return std::size_t(whole_number(max_steps.as<double>(), "options.maxSteps", 1, double(limit)));
}

// 0/1 flags as a fresh Uint8Array.
val flags_value(const std::vector<std::uint8_t>& flags)
{
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(flags.size(), flags.data()));
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

// {kind, config, vocab, namedHeads, training (JSON texts), tensors: [{name, shape}]}, or null with the failure recorded.
val Model::load(std::uintptr_t file, double size)
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
        return result;
    }, "this model");
}

std::vector<std::int32_t> Model::source_ids(const val& ids) const
{
    return token_ids(ids, "source",
                     file_.seq2seq ? file_.seq2seq->config().src_vocab_size : file_.rnn_seq2seq->config().src_vocab_size);
}

std::vector<std::int32_t> Model::target_ids(const val& ids) const
{
    return token_ids(ids, "target",
                     file_.seq2seq ? file_.seq2seq->config().tgt_vocab_size : file_.rnn_seq2seq->config().tgt_vocab_size);
}

// {logits, attention} or null with the status set.
val Model::lmForward(const val& tokens, bool need_attention, const val& ablate)
{
    return guarded([&] {
        LanguageModel& model = *file_.language_model;
        const std::vector<std::int32_t> ids = token_ids(tokens, "tokens", model.config().vocab_size);
        const LanguageModel::Output out = model.forward(ids, need_attention, head_mask(ablate, model.config()));
        val result = val::object();
        set_tensors(result, {{"logits", &out.logits}, {"attention", &out.attention}});
        return result;
    });
}

val Model::lmGenerate(const val& prompt, double max_new_tokens, int stop_token, const val& ablate)
{
    return guarded([&] {
        LanguageModel& model = *file_.language_model;
        const std::vector<std::int32_t> ids = token_ids(prompt, "prompt", model.config().vocab_size);
        return int_array(model.generate(ids, std::size_t(max_new_tokens), stop_token, head_mask(ablate, model.config())));
    });
}

val Model::seq2seqForward(const val& source, const val& target, bool need_attention, const val& ablate)
{
    return guarded([&] {
        const std::vector<std::int32_t> source_tokens = source_ids(source), target_tokens = target_ids(target);
        const Seq2SeqModel::Output out = file_.seq2seq->forward(source_tokens, target_tokens, need_attention,
                                                                seq2seq_ablation(ablate, file_.seq2seq->config()));
        val result = val::object();
        set_tensors(result, {{"logits", &out.logits}, {"encoderAttention", &out.encoder_attention},
                             {"decoderAttention", &out.decoder_attention},
                             {"crossAttention", &out.cross_attention}});
        return result;
    });
}

val Model::seq2seqTranslate(const val& source, int bos, int eos, const val& max_steps, const val& ablate)
{
    return guarded([&] {
        const std::vector<std::int32_t> source_tokens = source_ids(source);
        // The default leaves the decoder's last position unused, one step short of the limit.
        const std::size_t limit = file_.seq2seq->max_steps_limit(), steps = steps_of(max_steps, limit, limit - 1);
        const Seq2SeqModel::Translation out = file_.seq2seq->translate(source_tokens, bos, eos, steps,
                                                                       seq2seq_ablation(ablate, file_.seq2seq->config()));
        val result = val::object();
        result.set("tokens", int_array(out.tokens));
        set_tensors(result, {{"encoderAttention", &out.encoder_attention},
                             {"decoderAttention", &out.decoder_attention},
                             {"crossAttention", &out.cross_attention}});
        return result;
    });
}

val trace_value(const AttentionTrace& t)
{
    val result = val::object();
    set_numbers(result, {{"layer", double(t.layer)}, {"head", double(t.head)},
                         {"query", double(t.query)}, {"kvHead", double(t.kv_head)},
                         {"scale", double(t.scale)}});
    result.set("visible", flags_value(t.visible));
    set_tensors(result, {{"layerInput", &t.layer_input}, {"attentionInput", &t.attention_input},
                         {"keyInput", &t.key_input},  // null in self-attention: k and v come from attentionInput
                         {"queryRaw", &t.query_raw}, {"queryVector", &t.query_final}, {"keysRaw", &t.keys_raw},
                         {"keys", &t.keys_final}, {"values", &t.values}, {"scores", &t.scores},
                         {"weights", &t.weights}, {"context", &t.context}, {"headOutput", &t.head_output},
                         {"attentionOutput", &t.attention_output}});
    return result;
}

// A trace (trace_value) or null with the status set. `call` is {tokens, ablate} for a language model, {source,
// target, attention, ablate} for an encoder–decoder (one entry point, one registration, the numbers as arguments:
// the .wasm is near its budget); the core checks layer, head and query against the model.
val Model::trace(const val& call, double layer_number, double head_number, double query_number)
{
    return guarded([&] {
        const std::size_t layer = to_size(layer_number, "options.layer");
        const std::size_t head = to_size(head_number, "options.head");
        const std::size_t query = to_size(query_number, "options.query");
        if (file_.language_model) {
            LanguageModel& model = *file_.language_model;
            const std::vector<std::int32_t> ids = token_ids(call["tokens"], "tokens", model.config().vocab_size);
            return trace_value(model.trace(ids, layer, head, query, head_mask(call["ablate"], model.config())));
        }
        // The API's names of the three kinds of attention (index.d.ts Seq2SeqTraceOptions).
        const std::string attention = call["attention"].as<std::string>();
        Seq2SeqAttention which = Seq2SeqAttention::encoder_self;
        if (attention == "decoder") which = Seq2SeqAttention::decoder_self;
        else if (attention == "cross") which = Seq2SeqAttention::decoder_cross;
        else if (attention != "encoder")
            fail(Status::range_error, "options.attention: expected 'encoder', 'decoder' or 'cross', got '%'", {attention.c_str()});
        const std::vector<std::int32_t> source = source_ids(call["source"]), target = target_ids(call["target"]);
        return trace_value(file_.seq2seq->trace(source, target, which, layer, head, query,
                                                seq2seq_ablation(call["ablate"], file_.seq2seq->config())));
    });
}

// RnnSeq2SeqModel (attnscope/rnn.hpp): {logits, attention} teacher-forced, or null with the status set.
val Model::rnnForward(const val& source, const val& target)
{
    return guarded([&] {
        const std::vector<std::int32_t> source_tokens = source_ids(source), target_tokens = target_ids(target);
        const RnnSeq2SeqModel::Output out = file_.rnn_seq2seq->forward(source_tokens, target_tokens);
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
        const RnnSeq2SeqModel::Translation out =
            file_.rnn_seq2seq->translate(source_ids(source), bos, eos, steps_of(max_steps, limit, limit));
        val result = val::object();
        result.set("tokens", int_array(out.tokens));
        result.set("context", copy_out(out.context.data(), out.context.size(), val::undefined()));
        set_tensors(result, {{"encoderStates", &out.encoder_states}, {"decoderStates", &out.decoder_states},
                             {"attention", &out.attention}});  // attention: null without attention
        return result;
    });
}

}  // namespace attnscope::bindings
