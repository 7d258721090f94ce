// The binding's attention adapters: the JS API's checks of MultiHeadAttention and scaledDotProductAttention calls,
// in its own names (the core checks the same rules in C++'s names, for its C++ callers), then one copy in and out.
#include "attention_bindings.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnscope::bindings {

namespace {

const double max_dim = 2147483647;                // the API's sizes are int32
const double max_seed = 9007199254740991;         // Number.MAX_SAFE_INTEGER: every seed JS can write exactly

std::size_t bytes_of(const Shape& shape, std::size_t element) { return checked_numel({checked_numel(shape, "forward"), element}, "forward"); }

}  // namespace

// {key: {data: Float32Array, shape: number[]}} with fresh copies, in PyTorch's order.
val Attention::stateDict() const
{
    val state = val::object();
    const auto tensors = mha_.state_dict();
    for (const std::string& key : mha_.state_dict_keys()) state.set(key, tensor_value(tensors.at(key)));
    return state;
}

namespace {

// The JS API's rules of one loadStateDict entry [key, Float32Array, shape | null], in its names: an unknown key is a
// TypeError (PyTorch's strict load raises it as an error of the argument's kind); returns the key's shape.
Shape check_state_entry(const MultiHeadAttention& mha, const std::vector<std::string>& keys, const std::string& key,
                        const val& entry)
{
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
        fail(Status::type_error, "unexpected key '%' (this layer has %)", {key, Quoted{keys}});
    Shape want = mha.state_dict_shape(key);
    const val given = entry[2];
    if (given.isNull()) {  // a bare Float32Array: the layer's shape
        const double length = entry[1]["length"].as<double>();
        if (length != double(checked_numel(want, "loadStateDict")))
            fail(Status::range_error, "'%': expected % values (shape %), got Float32Array(%)",
                 {key, checked_numel(want, "loadStateDict"), want, JsNumber{length}});
    } else if (shape_of(given) != want) {
        fail(Status::range_error, "'%': expected shape %, got %", {key, want, shape_of(given)});
    }
    return want;
}

}  // namespace

val Attention::loadStateDict(const val& entries)
{
    return guarded([&] {
        // Strict like PyTorch, and checked whole before anything is copied: a failed load changes nothing. Every
        // entry's key is one of the layer's, each once (an object's or a Map's keys are unique), so they fit the table.
        struct Load {
            std::vector<std::string> keys;
            std::map<std::string, TensorView> state;
            std::map<std::string, TensorView>::iterator at[CallBuffers::capacity];
            CallBuffers buffers;
        } load;
        load.keys = mha_.state_dict_keys();
        const unsigned n = entries["length"].as<unsigned>();
        for (unsigned i = 0; i < n; ++i) {
            const val entry = entries[i];
            const std::string key = entry[0].as<std::string>();
            const Shape want = check_state_entry(mha_, load.keys, key, entry);
            if (i == CallBuffers::capacity) fail(Status::type_error, "'%' is given twice", {key});  // more entries than keys
            load.buffers.input(nullptr, bytes_of(want, sizeof(float)), true);
            load.at[i] = load.state.emplace(key, TensorView(nullptr, want)).first;
        }
        for (const std::string& key : load.keys)
            if (!load.state.count(key)) fail(Status::type_error, "missing key '%' of shape %", {key, mha_.state_dict_shape(key)});
        load.buffers.place(arena_, 0);
        for (unsigned i = 0; i < n; ++i) {
            float* at = load.buffers.at<float>(i);
            copy_in(entries[i][1], at, bytes_of(load.at[i]->second.shape, sizeof(float)), true);
            load.at[i]->second.data = at;
        }
        mha_.load_state_dict(load.state);
        return val(true);
    });
}

namespace {

// A call's shapes, together: one object to unwind instead of one per shape.
struct CallShapes {
    Shape q, k, v, key_padding_mask, attn_mask;
};

bool is(const Shape& s, std::size_t a, std::size_t b) { return s.size() == 2 && s[0] == a && s[1] == b; }
bool is(const Shape& s, std::size_t a, std::size_t b, std::size_t c)
{
    return s.size() == 3 && s[0] == a && s[1] == b && s[2] == c;
}

// The JS API's shape rules of MultiHeadAttention.forward, in its names; returns the call's dims.
ForwardDims check_forward(const ForwardCall& call, const CallShapes& s, const MultiHeadAttention& mha)
{
    const std::size_t E = mha.embed_dim(), H = mha.num_heads(), kdim = mha.kdim(), vdim = mha.vdim();
    const Shape& q = s.q;
    const std::size_t rank = q.size();
    if ((rank != 2 && rank != 3) || q.back() != E)
        fail(Status::range_error, "query: expected shape [batch, queryLen, %] or [queryLen, %], got %", {E, E, q});
    const bool batched = rank == 3;
    const std::size_t B = batched ? q[0] : 1, Lq = q[rank - 2];
    const std::size_t Lk = s.k.size() == rank ? s.k[rank - 2] : 0;
    // A batched call's expected shapes start with its batch: [B, ...]; an unbatched one's do not.
    const auto expected = [&](const Shape& t, std::size_t a, std::size_t b) {
        return batched ? is(t, B, a, b) : is(t, a, b);
    };
    const Prefix batch{batched, B};
    if (s.k.size() != rank || s.k.back() != kdim || (batched && s.k[0] != B))
        fail(Status::range_error, "key: expected shape [%keyLen, %] to match query %%, got %",
             {batch, kdim, q, call.key.given() ? "" : " (key defaults to query)", s.k});
    if (!expected(s.v, Lk, vdim))
        fail(Status::range_error, "value: expected shape [%%, %] to match key %%, got %",
             {batch, Lk, vdim, s.k, call.value.given() ? "" : " (value defaults to key)", s.v});
    const Shape& kpm = s.key_padding_mask;
    if (call.key_padding_mask.kind != MaskCode::none && (batched ? !is(kpm, B, Lk) : !(kpm.size() == 1 && kpm[0] == Lk)))
        fail(Status::range_error, "keyPaddingMask: expected shape [%%], got %", {batch, Lk, kpm});
    const std::size_t heads = checked_numel({B, H}, "attnMask");
    if (call.attn_mask.kind != MaskCode::none && !is(s.attn_mask, Lq, Lk) && !is(s.attn_mask, heads, Lq, Lk))
        fail(Status::range_error, "attnMask: expected shape [%, %] or [%, %, %], got %", {Lq, Lk, heads, Lq, Lk, s.attn_mask});
    return {B, Lq, Lk};
}

const std::size_t mask_element[3] = {0, 1, 4};  // bytes of a value of each MaskCode

std::size_t mask_bytes(const MaskArg& mask, const Shape& shape)
{
    return mask.kind == MaskCode::none ? 0 : bytes_of(shape, mask_element[int(mask.kind)]);
}

Shape mask_shape(const MaskArg& mask, const char* name) { return mask.kind == MaskCode::none ? Shape{} : shape_of(mask.shape, name); }

// A mask sized against a placeholder, pointed at its data in the heap.
void repoint(MaskView& mask, const void* data)
{
    if (mask.blocked) mask.blocked = static_cast<const std::uint8_t*>(data);
    if (mask.added) mask.added = static_cast<const float*>(data);
}

// The JS API's shape rules of scaledDotProductAttention, in its names.
void check_sdpa(const SdpaCall& call, const CallShapes& s)
{
    const Shape &q = s.q, &k = s.k, &v = s.v, &mask = s.attn_mask;
    const std::size_t rank = q.size();
    if (rank < 2) fail(Status::range_error, "q: expected at least 2 dimensions [..., queryLen, D], got %", {q});
    const std::size_t Lq = q[rank - 2], D = q[rank - 1];
    const std::size_t Lk = k.size() == rank ? k[rank - 2] : 0;
    const auto leads_with_q = [&](const Shape& t) { return t.size() == rank && std::equal(q.begin(), q.end() - 2, t.begin()); };
    if (!leads_with_q(k) || k.back() != D)
        fail(Status::range_error, "k: expected shape [%keyLen, %] to match q %, got %", {Leading{q}, D, q, k});
    if (!leads_with_q(v) || v[rank - 2] != Lk)
        fail(Status::range_error, "v: expected shape [%%, valueDim] to match k %, got %", {Leading{q}, Lk, k, v});
    const bool full = leads_with_q(mask) && mask[rank - 2] == Lq && mask[rank - 1] == Lk;
    if (call.mask.kind != MaskCode::none && !is(mask, Lq, Lk) && (rank == 2 || !full)) {
        if (rank == 2) fail(Status::range_error, "attnMask: expected shape [%, %], got %", {Lq, Lk, mask});
        fail(Status::range_error, "attnMask: expected shape [%, %] or [%%, %], got %", {Lq, Lk, Leading{q}, Lq, Lk, mask});
    }
    if (call.has_scale && !std::isfinite(call.scale))
        fail(Status::range_error, "scale: expected a finite number, got %", {JsNumber{call.scale}});
}

// The result's field names, found by address (marshal.cpp, EMSCRIPTEN_SYMBOL).
EMSCRIPTEN_SYMBOL(output);
EMSCRIPTEN_SYMBOL(weights);

// The result object {output, weights}, each {data, shape} (weights null when there are none): copied out of the
// heap into fresh arrays, or into the caller's `out` arrays when given.
val results(const float* output, const Shape& output_shape, const val& out_output, const float* weights,
            const Shape& weights_shape, const val& out_weights)
{
    val result = val::object();
    result.set(output_symbol, tensor_result(copy_out(output, checked_numel(output_shape, "output"), out_output), output_shape));
    result.set(weights_symbol, weights ? tensor_result(copy_out(weights, checked_numel(weights_shape, "weights"), out_weights), weights_shape)
                                  : val::null());
    return result;
}

// Everything one call holds, in one object: each throwing step then shares a single unwinding path, which keeps the
// .wasm small (one cleanup per distinct set of live objects).
struct CallState {
    CallShapes s;
    ForwardOptions forward;
    SdpaOptions sdpa;
    SdpaPlan plan;
    Shape weights_shape;
    CallBuffers buffers;
    Arena* release = nullptr;  // an arena to give back after the call (the functional form's)
    ~CallState()
    {
        if (release) release->release();
    }
};

}  // namespace

val Attention::forward(const ForwardCall& call)
{
    return guarded([&] {
        CallState c;
        const TensorArg& key = call.key.given() ? call.key : call.query;  // key defaults to query
        const TensorArg& value = call.value.given() ? call.value : key;    // value defaults to key
        const MaskArg& kpm = call.key_padding_mask;
        const MaskArg& am = call.attn_mask;
        c.s.q = shape_of(call.query.shape, "query");
        c.s.k = shape_of(key.shape, "key");
        c.s.v = shape_of(value.shape, "value");
        c.s.key_padding_mask = mask_shape(kpm, "keyPaddingMask");
        c.s.attn_mask = mask_shape(am, "attnMask");
        const ForwardDims dims = check_forward(call, c.s, mha_);

        ForwardOptions& options = c.forward;
        options.causal = call.causal;
        options.need_weights = call.need_weights;
        options.average_weights = call.average_weights;
        // Shapes first, against a placeholder address: the core sizes the call before anything is copied.
        static const float placeholder = 0;
        options.key_padding_mask = mask_of(kpm.kind, &placeholder, {dims.batch, dims.key_len});
        options.attn_mask = mask_of(am.kind, &placeholder, c.s.attn_mask);
        const std::size_t workspace = mha_.workspace_bytes(dims, options);
        c.weights_shape = mha_.weights_shape(dims, options);
        if (c.s.q.size() == 2 && !c.weights_shape.empty()) c.weights_shape.erase(c.weights_shape.begin());
        const std::size_t output_n = checked_numel(c.s.q, "forward");
        const std::size_t weights_n = call.need_weights ? checked_numel(c.weights_shape, "forward") : 0;

        check_out(call.out_output, output_n, c.s.q, "options.out.output");
        if (!call.out_weights.isUndefined()) {
            if (!call.need_weights) fail(Status::type_error, "options.out.weights: needWeights is false, so there are no weights to write");
            check_out(call.out_weights, weights_n, c.weights_shape, "options.out.weights");
        }

        // One buffer per distinct input: self-attention copies the query once.
        const bool key_is_query = key.data.strictlyEquals(call.query.data);
        const bool value_is_query = value.data.strictlyEquals(call.query.data);
        const bool value_is_key = value.data.strictlyEquals(key.data);
        CallBuffers& buffers = c.buffers;
        const std::size_t q_at = buffers.input(&call.query.data, bytes_of(c.s.q, 4), true);
        const std::size_t k_at = key_is_query ? q_at : buffers.input(&key.data, bytes_of(c.s.k, 4), true);
        const std::size_t v_at = value_is_query ? q_at : value_is_key ? k_at : buffers.input(&value.data, bytes_of(c.s.v, 4), true);
        const std::size_t kpm_at = buffers.input(&kpm.data, mask_bytes(kpm, c.s.key_padding_mask), kpm.kind == MaskCode::additive);
        const std::size_t am_at = buffers.input(&am.data, mask_bytes(am, c.s.attn_mask), am.kind == MaskCode::additive);
        const std::size_t output_at = buffers.result(output_n), weights_at = buffers.result(weights_n);
        buffers.place(arena_, double(workspace), dims, call.need_weights);
        repoint(options.key_padding_mask, buffers.at<void>(kpm_at));
        repoint(options.attn_mask, buffers.at<void>(am_at));
        float* output = buffers.at<float>(output_at);
        float* weights = call.need_weights ? buffers.at<float>(weights_at) : nullptr;
        mha_.forward(buffers.at<float>(q_at), buffers.at<float>(k_at), buffers.at<float>(v_at), dims, options, output, weights);
        // Copied out only now: forward() may have grown memory, which detaches older views of the heap.
        return results(output, c.s.q, call.out_output, weights, c.weights_shape, call.out_weights);
    });
}

Attention* create_attention(const AttentionConfig& c)
{
    Attention* created = nullptr;
    guarded([&] {
        MultiHeadAttentionConfig config;
        config.embed_dim = std::size_t(whole_number(c.embed_dim, "embedDim", 1, max_dim));
        config.num_heads = std::size_t(whole_number(c.num_heads, "numHeads", 1, max_dim));
        config.kdim = std::size_t(whole_number(c.kdim, "kdim", 1, max_dim));
        config.vdim = std::size_t(whole_number(c.vdim, "vdim", 1, max_dim));
        config.seed = std::uint64_t(whole_number(c.seed, "seed", 0, max_seed));
        config.bias = c.bias;
        if (config.embed_dim % config.num_heads != 0)
            fail(Status::range_error, "embedDim (%) must be divisible by numHeads (%)", {config.embed_dim, config.num_heads});
        // The core's refusal names its C++ fields (embed_dim); said here in the names the call took.
        std::size_t bytes = 0;
        try {
            bytes = MultiHeadAttention::parameter_bytes(config);
        } catch (const std::length_error&) {
            fail(Status::range_error, "embedDim %, kdim %, vdim % need more parameter bytes than the address space has",
                 {config.embed_dim, config.kdim, config.vdim});
        }
        require_memory(bytes, text("embedDim %, kdim %, vdim %: parameters", {config.embed_dim, config.kdim, config.vdim}));
        created = new Attention(config);
        return val::undefined();
    });
    return created;
}

namespace {
void run_sdpa(const CallState& c, const float* q, const float* k, const float* v, float* output, float* weights)
{
    scaled_dot_product_attention(TensorView(q, c.s.q), TensorView(k, c.s.k), TensorView(v, c.s.v), c.sdpa, output, weights);
}

Arena sdpa_arena;  // the functional form's arguments and results; given back after each call (release())
}  // namespace

val sdpa(const SdpaCall& call)
{
    return guarded([&] {
        CallState c;
        c.release = &sdpa_arena;
        c.s.q = shape_of(call.q.shape, "q");
        c.s.k = shape_of(call.k.shape, "k");
        c.s.v = shape_of(call.v.shape, "v");
        c.s.attn_mask = mask_shape(call.mask, "attnMask");
        check_sdpa(call, c.s);
        static const float placeholder = 0;
        SdpaOptions& options = c.sdpa;
        options.causal = call.causal;
        if (call.has_scale) options.scale = float(call.scale);
        options.attn_mask = mask_of(call.mask.kind, &placeholder, c.s.attn_mask);
        c.plan = plan_scaled_dot_product_attention(c.s.q, c.s.k, c.s.v, options);
        const std::size_t output_n = checked_numel(c.plan.output_shape, "q"), weights_n = checked_numel(c.plan.weights_shape, "q");
        check_out(call.out_output, output_n, c.plan.output_shape, "options.out.output");
        check_out(call.out_weights, weights_n, c.plan.weights_shape, "options.out.weights");

        CallBuffers& buffers = c.buffers;
        const std::size_t q_at = buffers.input(&call.q.data, bytes_of(c.s.q, 4), true);
        const std::size_t k_at = buffers.input(&call.k.data, bytes_of(c.s.k, 4), true);
        const std::size_t v_at = buffers.input(&call.v.data, bytes_of(c.s.v, 4), true);
        const std::size_t mask_at = buffers.input(&call.mask.data, mask_bytes(call.mask, c.s.attn_mask), call.mask.kind == MaskCode::additive);
        const std::size_t output_at = buffers.result(output_n), weights_at = buffers.result(weights_n);
        buffers.place(sdpa_arena, double(c.plan.workspace_bytes));
        repoint(options.attn_mask, buffers.at<void>(mask_at));
        float* output = buffers.at<float>(output_at);
        float* weights = buffers.at<float>(weights_at);
        run_sdpa(c, buffers.at<float>(q_at), buffers.at<float>(k_at), buffers.at<float>(v_at), output, weights);
        return results(output, c.plan.output_shape, call.out_output, weights, c.plan.weights_shape, call.out_weights);
    });
}

}  // namespace attnscope::bindings
