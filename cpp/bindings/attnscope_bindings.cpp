// The Embind surface of the npm package: the only file that includes <emscripten/...>.
// Raw entry points take WASM-heap addresses and report errors as a Status (message via _lastError()), so no
// C++ exception ever crosses into JS; web/src wraps all of this into the public API. Calls speak in enums and
// value objects (a call's dimensions, its buffers), and every size, shape and key the wrapper needs comes
// from here, so the JS side never re-derives one.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
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

// The outcome of a call, naming the JS error class the wrapper throws (README "Errors and limits").
enum class Status { ok, range_error, state_error, internal_error };

std::string last_error;
Status last_status = Status::ok;

template <class F>
Status guarded_call(F&& body)
{
    try {
        body();
        return Status::ok;
    } catch (const std::invalid_argument& e) {  // a wrong value or shape
        last_error = e.what();
        return Status::range_error;
    } catch (const std::length_error& e) {  // sizes beyond the address space or the memory left
        last_error = e.what();
        return Status::range_error;
    } catch (const std::bad_alloc&) {
        last_error = "out of memory: WebAssembly memory could not grow to fit this call";
        return Status::range_error;
    } catch (const std::logic_error& e) {
        last_error = e.what();
        return Status::state_error;
    } catch (const std::exception& e) {
        last_error = e.what();
        return Status::internal_error;
    }
}

// Every entry point goes through here: the status is kept for calls that return a value (null on failure).
template <class F>
Status guarded(F&& body)
{
    return last_status = guarded_call(body);
}

std::string get_last_error() { return last_error; }
Status get_last_status() { return last_status; }

// Bytes malloc has handed out and not taken back: what a leak would make grow. mallinfo's fields are int;
// read as unsigned they stay right up to the 4 GiB a 32-bit heap can hold.
double heap_bytes_in_use() { return double(static_cast<unsigned>(mallinfo().uordblks)); }
// The most the WebAssembly memory may grow to (-sMAXIMUM_MEMORY).
double memory_limit_bytes() { return double(emscripten_get_heap_max()); }

// Refuses, before allocating, what could never fit: WebAssembly memory never shrinks, so growing it step by step
// towards the limit only to fail on a later allocation would cripple the page. (A single allocation that fails
// does not grow it; a workspace that already exists is reused, so forward() needs no such check.)
void require_memory(double bytes, const std::string& what)
{
    const double left = memory_limit_bytes() - heap_bytes_in_use();
    if (bytes > left) {
        const auto mib = [](double b) { return std::to_string(long(b / (1024.0 * 1024.0))) + " MiB"; };
        throw std::length_error(what + ": " + mib(bytes) + " needed, more than the " + mib(left) +
                                " WebAssembly memory has left (limit " + mib(memory_limit_bytes()) + ")");
    }
}

template <class T>
T* at(double address)
{
    return reinterpret_cast<T*>(std::uintptr_t(address));
}

// A JS number as a size: a whole number below 2^32, else length_error naming it (so 2^32 never wraps to 0). The
// number is written by JS's own toString, as the caller wrote it (and std::to_string(double) would link printf's
// float formatter into the .wasm).
std::size_t to_size(double value, const char* name)
{
    if (!(value >= 0) || value != std::floor(value) || value > double(SIZE_MAX))
        throw std::length_error(std::string(name) + ": expected a whole number from 0 to " + std::to_string(SIZE_MAX) +
                                ", got " + val(value).call<std::string>("toString"));
    return std::size_t(value);
}

Shape shape_of(const val& array, const char* name = "shape")
{
    Shape shape;
    const unsigned n = array["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) shape.push_back(to_size(array[i].as<double>(), name));
    return shape;
}

val shape_value(const Shape& shape)
{
    val array = val::array();
    for (std::size_t d : shape) array.call<void>("push", double(d));
    return array;
}

// Which mask a call passes; the wrapper names it by kind, never by number.
enum class MaskCode { none, boolean, additive };

MaskView mask_of(MaskCode code, double address, Shape shape)
{
    if (code == MaskCode::boolean) return MaskView::boolean(at<const std::uint8_t>(address), std::move(shape));
    if (code == MaskCode::additive) return MaskView::additive(at<const float>(address), std::move(shape));
    return {};
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
    tensor.set("shape", shape_value(t.shape));
    return tensor;
}

// [[key, address, shape], ...] of float32 data the wrapper copied into the heap → views for load_state_dict.
std::map<std::string, TensorView> state_views(const val& entries)
{
    std::map<std::string, TensorView> state;
    const unsigned n = entries["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
        const val entry = entries[i];
        state.emplace(entry[0].as<std::string>(), TensorView(at<const float>(entry[1].as<double>()), shape_of(entry[2])));
    }
    return state;
}

// A growable buffer on the WASM heap that the wrapper copies inputs into and reads outputs from,
// reused across calls so a forward pass costs no malloc/free pair per argument.
class Arena {
public:
    // Address of at least `bytes` bytes (16-byte aligned), or 0 with the status set.
    double reserve(double bytes)
    {
        double address = 0;
        guarded([&] {
            const std::size_t size = to_size(bytes, "arena bytes");
            const std::size_t floats = size / 4 + 1;  // +1: never a null data() for zero bytes
            // Keep the peak only while calls come near it: give back a block four times larger than this call
            // needs (above 1 MiB), so one huge call does not hold its memory for the life of the page.
            if (storage_.size() > (1u << 18) && storage_.size() / 4 > floats) trim();
            if (storage_.size() < floats) {
                trim();  // let go of the old block before asking for a bigger one
                require_memory(double(size), "this call's arguments and results");
                resize_floats(storage_, floats, "this call's arguments and results");
            }
            address = double(reinterpret_cast<std::uintptr_t>(storage_.data()));
        });
        return address;
    }
    void trim() { std::vector<float>().swap(storage_); }

private:
    std::vector<float> storage_;  // float-typed so the block is aligned for floats
};

// A MultiHeadAttention layer's configuration as the wrapper sends it.
struct AttentionConfig {
    double embed_dim = 0, num_heads = 0, kdim = 0, vdim = 0, seed = 0;
    bool bias = true;
};

// One forward call's dimensions and options: what the C++ side plans and checks.
struct ForwardCall {
    double batch = 0, query_len = 0, key_len = 0;
    MaskCode key_padding_mask = MaskCode::none;
    MaskCode attn_mask = MaskCode::none;
    bool attn_mask_per_head = false;  // [batch·heads, Lq, Lk] instead of [Lq, Lk]
    bool causal = false, need_weights = true, average_weights = false;
};

// Where one forward call's inputs and results live in the heap.
struct ForwardBuffers {
    double query = 0, key = 0, value = 0, key_padding_mask = 0, attn_mask = 0, output = 0, weights = 0;
};

class Attention {
public:
    explicit Attention(const MultiHeadAttentionConfig& config) : mha_(config) {}

    // [[key, shape], ...] in PyTorch's order.
    val stateDictShapes() const
    {
        val entries = val::array();
        for (const std::string& key : mha_.state_dict_keys()) {
            val entry = val::array();
            entry.call<void>("push", key);
            entry.call<void>("push", shape_value(mha_.state_dict_shape(key)));
            entries.call<void>("push", entry);
        }
        return entries;
    }

    // {key: {data: Float32Array, shape: number[]}} with fresh copies, in PyTorch's order.
    val stateDict() const
    {
        val state = val::object();
        const auto tensors = mha_.state_dict();
        for (const std::string& key : mha_.state_dict_keys()) state.set(key, tensor_value(tensors.at(key)));
        return state;
    }

    Status loadStateDict(const val& entries)
    {
        return guarded([&] { mha_.load_state_dict(state_views(entries)); });
    }

    // {weightsShape (batched; null without weights), workspaceBytes} of a call, or null with the status set.
    // The output has the query's shape: that is API, not a fact about the C++ internals.
    val plan(const ForwardCall& call)
    {
        val result = val::null();
        guarded([&] {
            const ForwardDims dims = dims_of(call);
            const ForwardOptions options = options_of(call, {});
            result = val::object();
            result.set("weightsShape", call.need_weights ? shape_value(mha_.weights_shape(dims, options)) : val::null());
            result.set("workspaceBytes", double(mha_.workspace_bytes(dims, options)));
        });
        return result;
    }

    Status forward(const ForwardCall& call, const ForwardBuffers& buffers)
    {
        return guarded([&] {
            const ForwardDims dims = dims_of(call);
            const ForwardOptions options = options_of(call, buffers);
            mha_.forward(at<const float>(buffers.query), at<const float>(buffers.key), at<const float>(buffers.value),
                         dims, options, at<float>(buffers.output), at<float>(buffers.weights));
        });
    }

    void trim() { mha_.trim(); }

private:
    static ForwardDims dims_of(const ForwardCall& call)
    {
        return {to_size(call.batch, "batch"), to_size(call.query_len, "queryLen"), to_size(call.key_len, "keyLen")};
    }

    // Mask views at the given addresses (a plan passes none: only the shapes are checked, against a dummy address).
    ForwardOptions options_of(const ForwardCall& call, const ForwardBuffers& buffers) const
    {
        static const float placeholder = 0;
        const double none = double(reinterpret_cast<std::uintptr_t>(&placeholder));
        const ForwardDims dims = dims_of(call);
        ForwardOptions options;
        options.causal = call.causal;
        options.need_weights = call.need_weights;
        options.average_weights = call.average_weights;
        options.key_padding_mask = mask_of(call.key_padding_mask, buffers.key_padding_mask ? buffers.key_padding_mask : none,
                                           {dims.batch, dims.key_len});
        options.attn_mask = mask_of(call.attn_mask, buffers.attn_mask ? buffers.attn_mask : none,
                                    call.attn_mask_per_head ? Shape{dims.batch * mha_.num_heads(), dims.query_len, dims.key_len}
                                                            : Shape{dims.query_len, dims.key_len});
        return options;
    }

    MultiHeadAttention mha_;
};

// Null (with the status set) instead of a constructor that throws: a throwing Embind constructor
// reaches JS as a bare WebAssembly.Exception.
Attention* create_attention(const AttentionConfig& c)
{
    Attention* created = nullptr;
    guarded([&] {
        MultiHeadAttentionConfig config;
        config.embed_dim = to_size(c.embed_dim, "embedDim");
        config.num_heads = to_size(c.num_heads, "numHeads");
        config.kdim = to_size(c.kdim, "kdim");
        config.vdim = to_size(c.vdim, "vdim");
        config.bias = c.bias;
        config.seed = std::uint64_t(c.seed);
        require_memory(double(MultiHeadAttention::parameter_bytes(config)),
                       "embedDim " + std::to_string(config.embed_dim) + ", kdim " +
                           std::to_string(config.kdim ? config.kdim : config.embed_dim) + ", vdim " +
                           std::to_string(config.vdim ? config.vdim : config.embed_dim) + ": parameters");
        created = new Attention(config);
    });
    return created;
}

// One scaled_dot_product_attention call: shapes as arrays, the mask by kind, scale NaN for "default 1/√D".
struct SdpaCall {
    val q_shape = val::array(), k_shape = val::array(), v_shape = val::array(), mask_shape = val::array();
    MaskCode mask = MaskCode::none;
    bool causal = false;
    double scale = NAN;
};

struct SdpaBuffers {
    double q = 0, k = 0, v = 0, mask = 0, output = 0, weights = 0;
};

SdpaOptions sdpa_options(const SdpaCall& call, double mask_address)
{
    static const float placeholder = 0;
    SdpaOptions options;
    options.causal = call.causal;
    if (!std::isnan(call.scale)) options.scale = float(call.scale);
    options.attn_mask = mask_of(call.mask, mask_address ? mask_address : double(reinterpret_cast<std::uintptr_t>(&placeholder)),
                                call.mask == MaskCode::none ? Shape{} : shape_of(call.mask_shape, "attnMask"));
    return options;
}

// {outputShape, weightsShape, workspaceBytes} or null with the status set.
val sdpa_plan(const SdpaCall& call)
{
    val result = val::null();
    guarded([&] {
        const SdpaPlan plan = plan_scaled_dot_product_attention(shape_of(call.q_shape, "q"), shape_of(call.k_shape, "k"),
                                                                shape_of(call.v_shape, "v"), sdpa_options(call, 0));
        result = val::object();
        result.set("outputShape", shape_value(plan.output_shape));
        result.set("weightsShape", shape_value(plan.weights_shape));
        result.set("workspaceBytes", double(plan.workspace_bytes));
    });
    return result;
}

Status sdpa_run(const SdpaCall& call, const SdpaBuffers& buffers)
{
    return guarded([&] {
        const TensorView q(at<const float>(buffers.q), shape_of(call.q_shape, "q"));
        const TensorView k(at<const float>(buffers.k), shape_of(call.k_shape, "k"));
        const TensorView v(at<const float>(buffers.v), shape_of(call.v_shape, "v"));
        const SdpaOptions options = sdpa_options(call, buffers.mask);
        scaled_dot_product_attention(q, k, v, options, at<float>(buffers.output), at<float>(buffers.weights));
    });
}

std::vector<std::int32_t> token_ids(const val& array) { return emscripten::convertJSArrayToNumberVector<std::int32_t>(array); }

val int_array(const std::vector<std::int32_t>& values)
{
    val array = val::array();
    for (std::int32_t v : values) array.call<void>("push", v);
    return array;
}

// Head ablation flags as the wrapper builds them: a plain array of 0/1 per layer and head (empty: none).
HeadMask head_mask(const val& flags) { return emscripten::convertJSArrayToNumberVector<std::uint8_t>(flags); }

// {encoderSelf, decoderSelf, decoderCross}: one flag array per kind of attention.
Seq2SeqAblation seq2seq_ablation(const val& masks)
{
    return {head_mask(masks["encoderSelf"]), head_mask(masks["decoderSelf"]), head_mask(masks["decoderCross"])};
}

// {logits, attention} or null with the status set.
val lm_forward(LanguageModel& lm, const val& tokens, bool need_attention, const val& ablate)
{
    val result = val::null();
    guarded([&] {
        const LanguageModel::Output out = lm.forward(token_ids(tokens), need_attention, head_mask(ablate));
        result = val::object();
        result.set("logits", tensor_value(out.logits));
        result.set("attention", tensor_value(out.attention));
    });
    return result;
}

val lm_generate(LanguageModel& lm, const val& prompt, double max_new_tokens, int stop_token, const val& ablate)
{
    val result = val::null();
    guarded([&] {
        result = int_array(lm.generate(token_ids(prompt), std::size_t(max_new_tokens), stop_token, head_mask(ablate)));
    });
    return result;
}

val seq2seq_forward(Seq2SeqModel& model, const val& source, const val& target, bool need_attention, const val& ablate)
{
    val result = val::null();
    guarded([&] {
        const Seq2SeqModel::Output out =
            model.forward(token_ids(source), token_ids(target), need_attention, seq2seq_ablation(ablate));
        result = val::object();
        result.set("logits", tensor_value(out.logits));
        result.set("encoderAttention", tensor_value(out.encoder_attention));
        result.set("decoderAttention", tensor_value(out.decoder_attention));
        result.set("crossAttention", tensor_value(out.cross_attention));
    });
    return result;
}

val seq2seq_translate(Seq2SeqModel& model, const val& source, int bos, int eos, double max_steps, const val& ablate)
{
    val result = val::null();
    guarded([&] {
        const Seq2SeqModel::Translation out =
            model.translate(token_ids(source), bos, eos, std::size_t(max_steps), seq2seq_ablation(ablate));
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
            const StateDictModel& model = loaded.language_model
                                              ? static_cast<const StateDictModel&>(*loaded.language_model)
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
            result.set("kind", std::string(loaded.kind == ModelKind::language_model ? "decoder_lm" : "seq2seq"));
            result.set("config", loaded.config);
            result.set("vocab", loaded.vocab);
            result.set("namedHeads", loaded.named_heads);
            result.set("training", loaded.training);
            result.set("tensors", tensors);
            self->file_ = std::move(loaded);
            return result;
        }, &load);
    }

    val lmForward(const val& tokens, bool need_attention, const val& ablate)
    {
        return lm_forward(*file_.language_model, tokens, need_attention, ablate);
    }
    val lmGenerate(const val& prompt, double max_new_tokens, int stop_token, const val& ablate)
    {
        return lm_generate(*file_.language_model, prompt, max_new_tokens, stop_token, ablate);
    }
    val seq2seqForward(const val& source, const val& target, bool need_attention, const val& ablate)
    {
        return seq2seq_forward(*file_.seq2seq, source, target, need_attention, ablate);
    }
    val seq2seqTranslate(const val& source, int bos, int eos, double max_steps, const val& ablate)
    {
        return seq2seq_translate(*file_.seq2seq, source, bos, eos, max_steps, ablate);
    }

private:
    ModelFile file_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(attnscope)
{
    using namespace emscripten;
    last_error.reserve(1024);  // room for any message up front, so an error never shows up as heap growth
    enum_<Status>("_Status")
        .value("ok", Status::ok)
        .value("rangeError", Status::range_error)
        .value("stateError", Status::state_error)
        .value("internalError", Status::internal_error);
    enum_<MaskCode>("_MaskKind")
        .value("none", MaskCode::none)
        .value("boolean", MaskCode::boolean)
        .value("additive", MaskCode::additive);
    function("_lastError", &get_last_error);
    function("_lastStatus", &get_last_status);
    function("_heapBytesInUse", &heap_bytes_in_use);
    // Threads (attnscope/threads.hpp): 1 in the single-threaded module, up to its worker pool + 1 in the threaded one.
    function("_setNumThreads", optional_override([](double n) { return double(set_num_threads(std::size_t(n))); }));
    function("_numThreads", optional_override([] { return double(num_threads()); }));
    function("_memoryLimitBytes", &memory_limit_bytes);

    class_<Arena>("_Arena")
        .constructor<>()
        .function("reserve", &Arena::reserve)
        .function("trim", &Arena::trim);

    value_object<AttentionConfig>("_AttentionConfig")
        .field("embedDim", &AttentionConfig::embed_dim)
        .field("numHeads", &AttentionConfig::num_heads)
        .field("kdim", &AttentionConfig::kdim)
        .field("vdim", &AttentionConfig::vdim)
        .field("bias", &AttentionConfig::bias)
        .field("seed", &AttentionConfig::seed);
    value_object<ForwardCall>("_ForwardCall")
        .field("batch", &ForwardCall::batch)
        .field("queryLen", &ForwardCall::query_len)
        .field("keyLen", &ForwardCall::key_len)
        .field("keyPaddingMask", &ForwardCall::key_padding_mask)
        .field("attnMask", &ForwardCall::attn_mask)
        .field("attnMaskPerHead", &ForwardCall::attn_mask_per_head)
        .field("causal", &ForwardCall::causal)
        .field("needWeights", &ForwardCall::need_weights)
        .field("averageWeights", &ForwardCall::average_weights);
    value_object<ForwardBuffers>("_ForwardBuffers")
        .field("query", &ForwardBuffers::query)
        .field("key", &ForwardBuffers::key)
        .field("value", &ForwardBuffers::value)
        .field("keyPaddingMask", &ForwardBuffers::key_padding_mask)
        .field("attnMask", &ForwardBuffers::attn_mask)
        .field("output", &ForwardBuffers::output)
        .field("weights", &ForwardBuffers::weights);
    class_<Attention>("_Attention")
        .function("stateDictShapes", &Attention::stateDictShapes)
        .function("stateDict", &Attention::stateDict)
        .function("loadStateDict", &Attention::loadStateDict)
        .function("plan", &Attention::plan)
        .function("forward", &Attention::forward)
        .function("trim", &Attention::trim);
    function("_createAttention", &create_attention, allow_raw_pointers());

    value_object<SdpaCall>("_SdpaCall")
        .field("qShape", &SdpaCall::q_shape)
        .field("kShape", &SdpaCall::k_shape)
        .field("vShape", &SdpaCall::v_shape)
        .field("maskShape", &SdpaCall::mask_shape)
        .field("mask", &SdpaCall::mask)
        .field("causal", &SdpaCall::causal)
        .field("scale", &SdpaCall::scale);
    value_object<SdpaBuffers>("_SdpaBuffers")
        .field("q", &SdpaBuffers::q)
        .field("k", &SdpaBuffers::k)
        .field("v", &SdpaBuffers::v)
        .field("mask", &SdpaBuffers::mask)
        .field("output", &SdpaBuffers::output)
        .field("weights", &SdpaBuffers::weights);
    function("_planScaledDotProductAttention", &sdpa_plan);
    function("_scaledDotProductAttention", &sdpa_run);

    function("_readSafetensors", &read_safetensors_raw);
    class_<Model>("_Model")
        .constructor<>()
        .function("load", &Model::load)
        .function("lmForward", &Model::lmForward)
        .function("lmGenerate", &Model::lmGenerate)
        .function("seq2seqForward", &Model::seq2seqForward)
        .function("seq2seqTranslate", &Model::seq2seqTranslate);
}
