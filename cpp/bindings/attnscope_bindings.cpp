// The Embind surface of the npm package: the only file that includes <emscripten/...>.
// Raw entry points take WASM-heap addresses and report errors as status codes (message via lastError()),
// so no C++ exception ever crosses into JS; web/src wraps all of this into the public API.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cmath>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"

using namespace attnscope;
using emscripten::val;

namespace {

// Status codes; the wrapper maps them to JS error classes.
enum Status : int { status_ok = 0, status_invalid_argument = 1, status_out_of_range = 2, status_internal = 3 };

std::string last_error;
int last_status = status_ok;

template <class F>
int guarded_call(F&& body)
{
    try {
        body();
        return status_ok;
    } catch (const std::invalid_argument& e) {
        last_error = e.what();
        return status_invalid_argument;
    } catch (const std::length_error& e) {
        last_error = e.what();
        return status_out_of_range;
    } catch (const std::bad_alloc&) {
        last_error = "out of memory: WebAssembly memory could not grow to fit this call";
        return status_out_of_range;
    } catch (const std::exception& e) {
        last_error = e.what();
        return status_internal;
    }
}

// Every entry point goes through here: the status is kept for calls that return a value (null on failure).
template <class F>
int guarded(F&& body)
{
    return last_status = guarded_call(body);
}

std::string get_last_error() { return last_error; }
int get_last_status() { return last_status; }

// Bytes malloc has handed out and not taken back: what a leak would make grow.
double heap_bytes_in_use() { return double(mallinfo().uordblks); }

template <class T>
T* at(std::uintptr_t address)
{
    return reinterpret_cast<T*>(address);
}

// Mask kinds as the wrapper encodes them.
enum MaskCode : int { mask_none = 0, mask_boolean = 1, mask_additive = 2 };

MaskView mask_of(int code, std::uintptr_t address, Shape shape)
{
    if (code == mask_boolean) return MaskView::boolean(at<const std::uint8_t>(address), std::move(shape));
    if (code == mask_additive) return MaskView::additive(at<const float>(address), std::move(shape));
    return {};
}

Shape shape_of(const val& array)
{
    Shape shape;
    const unsigned n = array["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) shape.push_back(array[i].as<std::size_t>());
    return shape;
}

val fresh_float32_array(const float* data, std::size_t n)
{
    return val::global("Float32Array").new_(emscripten::typed_memory_view(n, data));
}

// {data: Float32Array, shape: number[]} copied out of a Tensor; null for an empty tensor.
val tensor_value(const Tensor& t)
{
    if (t.data.empty()) return val::null();
    val tensor = val::object();
    tensor.set("data", fresh_float32_array(t.data.data(), t.data.size()));
    val shape = val::array();
    for (std::size_t d : t.shape) shape.call<void>("push", double(d));
    tensor.set("shape", shape);
    return tensor;
}

// [[key, address, shape], ...] of float32 data the wrapper copied into the heap → views for load_state_dict.
std::map<std::string, TensorView> state_views(const val& entries)
{
    std::map<std::string, TensorView> state;
    const unsigned n = entries["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
        const val entry = entries[i];
        state.emplace(entry[0].as<std::string>(),
                      TensorView(at<const float>(entry[1].as<std::uintptr_t>()), shape_of(entry[2])));
    }
    return state;
}

// A growable buffer on the WASM heap that the wrapper copies inputs into and reads outputs from,
// reused across calls so a forward pass costs no malloc/free pair per argument.
class Arena {
public:
    // Address of at least `bytes` bytes (16-byte aligned), or 0 with lastError set.
    std::uintptr_t reserve(double bytes)
    {
        std::uintptr_t address = 0;
        const int status = guarded([&] {
            if (!(bytes >= 0) || bytes > double(SIZE_MAX - 16))
                throw std::length_error("cannot reserve " + std::to_string(bytes) + " bytes in 32-bit WebAssembly memory");
            const std::size_t floats = (std::size_t(bytes) + 3) / 4;
            if (storage_.size() < floats) {
                storage_.clear();
                storage_.shrink_to_fit();  // let go of the old block before asking for a bigger one
                storage_.resize(floats);
            }
            address = reinterpret_cast<std::uintptr_t>(storage_.data());
        });
        return status == status_ok ? address : 0;
    }
    double capacity() const { return double(storage_.size()) * 4.0; }

private:
    std::vector<float> storage_;  // float-typed so the block is aligned for floats
};

class Attention {
public:
    explicit Attention(const MultiHeadAttentionConfig& config) : mha_(config) {}

    const MultiHeadAttention& layer() const { return mha_; }

    val stateDictKeys() const
    {
        val keys = val::array();
        for (const std::string& key : mha_.state_dict_keys()) keys.call<void>("push", key);
        return keys;
    }

    // {key: {data: Float32Array, shape: number[]}} with fresh copies, in PyTorch's order.
    val stateDict() const
    {
        val state = val::object();
        const auto tensors = mha_.state_dict();
        for (const std::string& key : mha_.state_dict_keys()) state.set(key, tensor_value(tensors.at(key)));
        return state;
    }

    int loadStateDict(const val& entries)
    {
        return guarded([&] { mha_.load_state_dict(state_views(entries)); });
    }

    // flags: bit 0 causal, bit 1 need_weights, bit 2 average_weights.
    // attn_mask_rank is 2 ([Lq, Lk]) or 3 ([batch*heads, Lq, Lk]).
    int forward(std::uintptr_t query, std::uintptr_t key, std::uintptr_t value, std::size_t batch,
                std::size_t query_len, std::size_t key_len, int key_padding_code, std::uintptr_t key_padding,
                int attn_mask_code, std::uintptr_t attn_mask, int attn_mask_rank, int flags, std::uintptr_t output,
                std::uintptr_t weights)
    {
        return guarded([&] {
            ForwardOptions options;
            options.causal = flags & 1;
            options.need_weights = flags & 2;
            options.average_weights = flags & 4;
            options.key_padding_mask = mask_of(key_padding_code, key_padding, {batch, key_len});
            options.attn_mask = mask_of(attn_mask_code, attn_mask,
                                        attn_mask_rank == 3 ? Shape{batch * mha_.num_heads(), query_len, key_len}
                                                            : Shape{query_len, key_len});
            mha_.forward(at<const float>(query), at<const float>(key), at<const float>(value),
                         {batch, query_len, key_len}, options, at<float>(output), at<float>(weights));
        });
    }

private:
    MultiHeadAttention mha_;
};

// Null (with lastError set) instead of a constructor that throws: a throwing Embind constructor
// reaches JS as a bare WebAssembly.Exception.
Attention* create_attention(double embed_dim, double num_heads, double kdim, double vdim, bool bias, double seed)
{
    Attention* created = nullptr;
    guarded([&] {
        MultiHeadAttentionConfig config;
        config.embed_dim = std::size_t(embed_dim);
        config.num_heads = std::size_t(num_heads);
        config.kdim = std::size_t(kdim);
        config.vdim = std::size_t(vdim);
        config.bias = bias;
        config.seed = std::uint64_t(seed);
        created = new Attention(config);
    });
    return created;
}

std::size_t attention_dim(const Attention& a, int which)
{
    const MultiHeadAttention& m = a.layer();
    switch (which) {
    case 0: return m.embed_dim();
    case 1: return m.num_heads();
    case 2: return m.head_dim();
    case 3: return m.kdim();
    case 4: return m.vdim();
    default: return m.has_bias();
    }
}

// q, k, v in the heap with the shapes given; writes output and weights to the given addresses.
int scaled_dot_product_attention_raw(std::uintptr_t q, const val& q_shape, std::uintptr_t k, const val& k_shape,
                                     std::uintptr_t v, const val& v_shape, int mask_code, std::uintptr_t mask,
                                     const val& mask_shape, bool causal, double scale, std::uintptr_t output,
                                     std::uintptr_t weights)
{
    return guarded([&] {
        SdpaOptions options;
        options.causal = causal;
        if (!std::isnan(scale)) options.scale = float(scale);
        options.attn_mask = mask_of(mask_code, mask, mask_code ? shape_of(mask_shape) : Shape{});
        const AttentionResult r = scaled_dot_product_attention(TensorView(at<const float>(q), shape_of(q_shape)),
                                                               TensorView(at<const float>(k), shape_of(k_shape)),
                                                               TensorView(at<const float>(v), shape_of(v_shape)), options);
        std::copy(r.output.data.begin(), r.output.data.end(), at<float>(output));
        std::copy(r.weights.data.begin(), r.weights.data.end(), at<float>(weights));
    });
}

std::vector<std::int32_t> token_ids(const val& array) { return emscripten::convertJSArrayToNumberVector<std::int32_t>(array); }

val int_array(const std::vector<std::int32_t>& values)
{
    val array = val::array();
    for (std::int32_t v : values) array.call<void>("push", v);
    return array;
}

// {logits, attention} or null with the status set.
val lm_forward(DecoderLM& lm, const val& tokens, bool need_attention)
{
    val result = val::null();
    guarded([&] {
        const DecoderLM::Output out = lm.forward(token_ids(tokens), need_attention);
        result = val::object();
        result.set("logits", tensor_value(out.logits));
        result.set("attention", tensor_value(out.attention));
    });
    return result;
}

val lm_generate(DecoderLM& lm, const val& prompt, double max_new_tokens, int stop_token)
{
    val result = val::null();
    guarded([&] { result = int_array(lm.generate(token_ids(prompt), std::size_t(max_new_tokens), stop_token)); });
    return result;
}

val seq2seq_forward(Seq2Seq& model, const val& source, const val& target, bool need_attention)
{
    val result = val::null();
    guarded([&] {
        const Seq2Seq::Output out = model.forward(token_ids(source), token_ids(target), need_attention);
        result = val::object();
        result.set("logits", tensor_value(out.logits));
        result.set("encoderAttention", tensor_value(out.encoder_attention));
        result.set("decoderAttention", tensor_value(out.decoder_attention));
        result.set("crossAttention", tensor_value(out.cross_attention));
    });
    return result;
}

val seq2seq_decode(Seq2Seq& model, const val& source, int bos, int eos, double max_steps)
{
    val result = val::null();
    guarded([&] {
        const Seq2Seq::Decoded out = model.greedy_decode(token_ids(source), bos, eos, std::size_t(max_steps));
        result = val::object();
        result.set("tokens", int_array(out.tokens));
        result.set("encoderAttention", tensor_value(out.encoder_attention));
        result.set("decoderAttention", tensor_value(out.decoder_attention));
        result.set("crossAttention", tensor_value(out.cross_attention));
    });
    return result;
}

// Model files and safetensors headers. A malformed file's FileError keeps its class: the result is
// {error: 'TypeError' | 'RangeError' | 'Error', message} instead of a value, and the wrapper throws that class.
// One copy of the catch clauses for every file entry point (not a template): `body(context)` reads the file.
val file_call(val (*body)(const void* context), const void* context)
{
    const auto failure = [](const char* name, const std::string& message) {
        val error = val::object();
        error.set("error", std::string(name));
        error.set("message", message);
        return error;
    };
    try {
        return body(context);
    } catch (const FileError& e) {
        return failure(e.kind() == FileError::Kind::type ? "TypeError" : "RangeError", e.what());
    } catch (const std::length_error& e) {
        return failure("RangeError", e.what());
    } catch (const std::bad_alloc&) {
        return failure("RangeError", "out of memory: WebAssembly memory could not grow to fit this model");
    } catch (const std::exception& e) {
        return failure("Error", e.what());
    }
}

// A file in the WASM heap, as the wrapper copied it there.
struct FileBytes {
    const std::uint8_t* data;
    std::size_t size;
};

val shape_value(const Shape& shape)
{
    val array = val::array();
    for (std::size_t d : shape) array.call<void>("push", double(d));
    return array;
}

// {tensors: [{name, shape, begin, end}] (byte offsets in the file, data order), metadata: {key: value}}.
val read_safetensors_raw(std::uintptr_t file, double size)
{
    const FileBytes bytes{at<const std::uint8_t>(file), std::size_t(size)};
    return file_call([](const void* context) {
        const auto& file = *static_cast<const FileBytes*>(context);
        const SafetensorsHeader header = read_safetensors_header(file.data, file.size);
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
    }, &bytes);
}

// A trained model read from a file. Created empty; load() fills it or leaves it empty (everything the failed
// read built is already freed), so the wrapper deletes it at once on failure.
class Model {
public:
    // {kind, config, vocab, namedHeads, training (JSON texts), tensors: [{name, shape}]} or an error value.
    val load(std::uintptr_t file, double size)
    {
        struct Load {
            Model* model;
            FileBytes file;
        } load{this, {at<const std::uint8_t>(file), std::size_t(size)}};
        return file_call([](const void* context) {
            const auto& [self, file] = *static_cast<const Load*>(context);
            ModelFile loaded = read_model_file(file.data, file.size);
            const StateDictModel& model = loaded.decoder_lm ? static_cast<const StateDictModel&>(*loaded.decoder_lm)
                                                            : static_cast<const StateDictModel&>(*loaded.seq2seq);
            val tensors = val::array();
            for (const std::string& key : model.state_dict_keys()) {
                val entry = val::object();
                entry.set("name", key);
                entry.set("shape", shape_value(model.state_dict_shape(key)));
                tensors.call<void>("push", entry);
            }
            val result = val::object();
            result.set("kind", std::string(loaded.kind == ModelKind::decoder_lm ? "decoder_lm" : "seq2seq"));
            result.set("config", loaded.config);
            result.set("vocab", loaded.vocab);
            result.set("namedHeads", loaded.named_heads);
            result.set("training", loaded.training);
            result.set("tensors", tensors);
            self->file_ = std::move(loaded);
            return result;
        }, &load);
    }

    val lmForward(const val& tokens, bool need_attention) { return lm_forward(*file_.decoder_lm, tokens, need_attention); }
    val lmGenerate(const val& prompt, double max_new_tokens, int stop_token)
    {
        return lm_generate(*file_.decoder_lm, prompt, max_new_tokens, stop_token);
    }
    val seq2seqForward(const val& source, const val& target, bool need_attention)
    {
        return seq2seq_forward(*file_.seq2seq, source, target, need_attention);
    }
    val seq2seqDecode(const val& source, int bos, int eos, double max_steps)
    {
        return seq2seq_decode(*file_.seq2seq, source, bos, eos, max_steps);
    }

private:
    ModelFile file_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attnscope)
{
    using namespace emscripten;
    last_error.reserve(1024);  // room for any message up front, so an error never shows up as heap growth
    function("_lastError", &get_last_error);
    function("_lastStatus", &get_last_status);
    function("_heapBytesInUse", &heap_bytes_in_use);

    class_<Arena>("_Arena")
        .constructor<>()
        .function("reserve", &Arena::reserve)
        .function("capacity", &Arena::capacity);

    class_<Attention>("_Attention")
        .function("stateDictKeys", &Attention::stateDictKeys)
        .function("stateDict", &Attention::stateDict)
        .function("loadStateDict", &Attention::loadStateDict)
        .function("forward", &Attention::forward);
    function("_createAttention", &create_attention, allow_raw_pointers());
    function("_attentionDim", &attention_dim);
    function("_scaledDotProductAttention", &scaled_dot_product_attention_raw);

    function("_readSafetensors", &read_safetensors_raw);
    class_<Model>("_Model")
        .constructor<>()
        .function("load", &Model::load)
        .function("lmForward", &Model::lmForward)
        .function("lmGenerate", &Model::lmGenerate)
        .function("seq2seqForward", &Model::seq2seqForward)
        .function("seq2seqDecode", &Model::seq2seqDecode);
}
