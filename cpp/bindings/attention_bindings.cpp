// The binding's attention adapters: MultiHeadAttention and scaled_dot_product_attention over heap addresses.
#include "attention_bindings.hpp"

namespace attnscope::bindings {

// [[key, shape], ...] in PyTorch's order.
val Attention::stateDictShapes() const
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
val Attention::stateDict() const
{
    val state = val::object();
    const auto tensors = mha_.state_dict();
    for (const std::string& key : mha_.state_dict_keys()) state.set(key, tensor_value(tensors.at(key)));
    return state;
}

Status Attention::loadStateDict(const val& entries)
{
    return guarded([&] { mha_.load_state_dict(state_views(entries)); });
}

// {weightsShape (batched; null without weights), workspaceBytes} of a call, or null with the status set.
// The output has the query's shape: that is API, not a fact about the C++ internals.
val Attention::plan(const ForwardCall& call)
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

Status Attention::forward(const ForwardCall& call, const ForwardBuffers& buffers)
{
    return guarded([&] {
        const ForwardDims dims = dims_of(call);
        const ForwardOptions options = options_of(call, buffers);
        mha_.forward(at<const float>(buffers.query), at<const float>(buffers.key), at<const float>(buffers.value), dims,
                     options, at<float>(buffers.output), at<float>(buffers.weights));
    });
}

ForwardDims Attention::dims_of(const ForwardCall& call)
{
    return {to_size(call.batch, "batch"), to_size(call.query_len, "queryLen"), to_size(call.key_len, "keyLen")};
}

// Mask views at the given addresses (a plan passes none: only the shapes are checked, against a dummy address).
ForwardOptions Attention::options_of(const ForwardCall& call, const ForwardBuffers& buffers) const
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

namespace {
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
}  // namespace

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

}  // namespace attnscope::bindings
