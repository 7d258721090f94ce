// The binding's attention adapters: a MultiHeadAttention layer and the functional scaled_dot_product_attention,
// spoken in value objects (a call's dimensions, its buffers' heap addresses) that registration.cpp registers.
#pragma once

#include <cmath>

#include "marshal.hpp"

namespace attnscope::bindings {

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

    val stateDictShapes() const;
    val stateDict() const;
    Status loadStateDict(const val& entries);
    val plan(const ForwardCall& call);
    Status forward(const ForwardCall& call, const ForwardBuffers& buffers);
    void trim() { mha_.trim(); }

private:
    static ForwardDims dims_of(const ForwardCall& call);
    ForwardOptions options_of(const ForwardCall& call, const ForwardBuffers& buffers) const;

    MultiHeadAttention mha_;
};

Attention* create_attention(const AttentionConfig& c);

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

val sdpa_plan(const SdpaCall& call);
Status sdpa_run(const SdpaCall& call, const SdpaBuffers& buffers);

}  // namespace attnscope::bindings
