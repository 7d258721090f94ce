// The binding's attention adapters: a MultiHeadAttention layer and the functional scaled_dot_product_attention. Each
// call is one entry point that checks the JS API's arguments (in its names), copies them in, runs and copies out.
#pragma once

#include "marshal.hpp"

namespace attnscope::bindings {

// A MultiHeadAttention layer's configuration as the wrapper sends it (numbers as JS gave them; kdim and vdim default
// to embedDim in the wrapper).
struct AttentionConfig {
    double embed_dim = 0, num_heads = 0, kdim = 0, vdim = 0, seed = 0;
    bool bias = true;
};

// One MultiHeadAttention.forward call: the converted tensors (key and value not given: they default to query and
// key), the masks by kind, the options and the caller's `out` arrays (undefined when not given).
struct ForwardCall {
    TensorArg query, key, value;
    MaskArg key_padding_mask, attn_mask;
    bool causal = false, need_weights = true, average_weights = false;
    val out_output = val::undefined(), out_weights = val::undefined();
};

class Attention {
public:
    explicit Attention(const MultiHeadAttentionConfig& config) : mha_(config) {}

    val stateDict() const;
    // [[key, Float32Array, shape | null (the layer's own shape)], ...]: true, or null with the failure recorded.
    val loadStateDict(const val& entries);
    // {output: {data, shape}, weights: {data, shape} | null}, or null with the failure recorded.
    val forward(const ForwardCall& call);
    void trim()
    {
        mha_.trim();
        arena_.trim();
    }

private:
    MultiHeadAttention mha_;
    Arena arena_;  // this layer's arguments and results
};

// The layer, or null with the failure recorded: a throwing Embind constructor reaches JS as a bare
// WebAssembly.Exception.
Attention* create_attention(const AttentionConfig& c);

// One scaled_dot_product_attention call: the converted tensors, the mask by kind, the scale when given.
struct SdpaCall {
    TensorArg q, k, v;
    MaskArg mask;
    bool causal = false, has_scale = false;
    double scale = 0;
    val out_output = val::undefined(), out_weights = val::undefined();
};

// {output: {data, shape}, weights: {data, shape}}, or null with the failure recorded.
val sdpa(const SdpaCall& call);

}  // namespace attnscope::bindings
