// The one forward pass's internals: a loaded model (Transformer::Impl), one pass of one stack over new positions
// (StackStep, run_stack), the head (run_head), and the sizes of every buffer a pass allocates (workspace.cpp), from
// which both the pass allocates and the memory plan counts. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnscope/model.hpp"
#include "weights.hpp"

namespace attnscope {

struct Transformer::Impl {
    plan::Plan plan;
    model::Weights weights;
    ModelConfig config;
    std::uint64_t parameter_bytes = 0;
};

namespace model {

/// One attention's head interventions in one pass.
struct Heads {
    const HeadMask* ablate = nullptr;    ///< empty, or layers × heads flags
    Ablation ablation = Ablation::zero;  ///< what `ablate` does
    const HeadMask* patch = nullptr;     ///< empty, or layers × heads flags
    const float* patch_from = nullptr;   ///< [L, positions, H, hd] when patch is non-empty
    float* kept = nullptr;               ///< [L, rows, H, hd] out, or null
    const std::uint8_t* patch_at = nullptr;  ///< positions flags: where the flagged heads are patched; null: everywhere
};

/// Where a pass records what trace() returns: the traced attention of this stack (self or cross).
struct TraceSink {
    AttentionTrace* trace;
    bool cross;
};

/// One pass of one stack over `rows` new positions from `first_position`, reading and extending per-layer key/value
/// caches of `capacity` positions ([capacity, kv_width] per layer, keys after QK-norm and RoPE). forward() runs it
/// once over every token; generate() and translate() once per token.
struct StackStep {
    const std::int32_t* tokens = nullptr;
    const std::int32_t* token_types = nullptr;  ///< may be null
    const std::uint8_t* key_mask = nullptr;     ///< HF polarity, first_position + rows entries; may be null
    std::size_t rows = 0, first_position = 0, capacity = 0;
    float* key_cache = nullptr;                 ///< layers × capacity × kv_width
    float* value_cache = nullptr;
    // Cross-attention over `memory` (an encoder's output, memory_rows × its width), whose keys and values per layer
    // go to cross_kv ([layers, memory_rows, 2 · kv_width], each row k | v); projected by this call unless cross_ready.
    const float* memory = nullptr;
    std::size_t memory_rows = 0;
    const std::uint8_t* memory_mask = nullptr;
    float* cross_kv = nullptr;
    bool cross_ready = false;
    Heads self, cross;
    float* attention = nullptr;        ///< [layers, heads, rows, first_position + rows], or null
    float* cross_attention = nullptr;  ///< [layers, heads, rows, memory_rows], or null
    float* residual = nullptr;         ///< [layers + 1, rows, width]: x entering each layer, then leaving the last; or null
    float* residual_mid = nullptr;     ///< [layers, rows, width]: x after each layer's attention sum; or null
    float* qkv = nullptr;              ///< [layers, rows, qkv columns]: q|k|v as projected; or null
    TraceSink* sink = nullptr;         ///< the pass ends after the traced attention
    /// Each layer's input rows (the residual stream) at row first_position of [layers, layer_input_rows, width], or null.
    float* layer_inputs = nullptr;
    std::size_t layer_input_rows = 0;
    /// Run from layer `first_layer`, its input rows [rows, width] taken from `resume` instead of the embeddings' (a
    /// patched pass whose lower layers are a kept run's).
    std::size_t first_layer = 0;
    const float* resume = nullptr;
    float* out = nullptr;              ///< [rows, width]: the stack's output after its final norm
    const char* call = "forward";      ///< what a size error names
};
void run_stack(const Transformer::Impl& m, std::size_t stack, const StackStep& step);

/// The input rows [T, width] of the main stack's `layer` in `cache`'s kept pass when that pass is `r`'s own (the same
/// tokens, types, mask and heads switched off, nothing patched), for a trace of its self-attention that starts
/// there; null otherwise. Throws std::invalid_argument naming r.call when another model than `model` filled it.
const float* kept_layer_input(const ForwardCache::State& cache, const Transformer& model, const Transformer::Request& r, std::size_t layer);
/// The main stack's output [T, width] (after its final norm: the head's input) of `cache`'s kept pass.
const float* kept_output(const ForwardCache::State& cache);
/// Throws std::invalid_argument naming `call` and the field for a request the model cannot run (transformer.cpp).
void check_request(const plan::Plan& p, const Transformer::Request& r, const char* call);
/// `n` floats, zeroed: std::length_error naming `call` and `what` when n cannot be addressed (a product of sizes
/// computed in 64 bits, so a 32-bit size_t cannot wrap), and an allocation that fails as resize_floats() names it.
std::vector<float> floats(std::uint64_t n, const char* call, const char* what);
/// Throws std::invalid_argument naming `call` and `name`[i] for an id outside 0 to vocab − 1 (transformer.cpp).
void check_id_range(const char* call, const char* name, const std::vector<std::int32_t>& ids, std::size_t vocab);
/// trace() of the main stack's self-attention at `layer`, from `input` (kept_layer_input) instead of the embeddings.
void trace_from(const Transformer::Impl& m, const Transformer::Request& r, TraceSink* sink, std::size_t layer, const float* input);

/// logits [rows, vocab] of the main stack's output `hidden` [rows, width] through the head (and its transform, input
/// scale and soft-capping). `scratch` holds rows × width floats.
void run_head(const Transformer::Impl& m, const float* hidden, std::size_t rows, float* scratch, float* logits);
/// logits [rows, ids.size()]: run_head()'s columns `ids` (each from 0 to vocab − 1, in any order, repeats allowed),
/// with the bits run_head() gives them, computing only the packed panels that hold them.
void run_head_columns(const Transformer::Impl& m, const float* hidden, std::size_t rows, float* scratch, const std::vector<std::int32_t>& ids,
                      float* logits);

/// ‖v_j‖ per layer, query head and position ([layers, heads, T]) from a value cache of `capacity` positions per layer
/// ([layers, capacity, kv_width], its first T filled), each query head reading its key/value head's values
/// (h / (heads / kv_heads)); summed in double, so a fresh pass's cache and a ForwardCache's give the same bits.
Tensor value_norms(const plan::Attention& a, std::size_t L, std::size_t T, const float* values, std::size_t capacity);

/// The buffers one run_stack() allocates, in floats (blocked flags in bytes), from the plan and the call's sizes
/// alone: run_stack() allocates exactly these, and the memory plan sums them, so the two cannot drift apart.
struct StackBuffers {
    std::uint64_t residual = 0;   ///< x, the sublayer input h, the sublayer output a, a parallel MLP's output
    std::uint64_t qkv = 0, context = 0, mlp = 0;
    std::uint64_t scores = 0;     ///< a block of query rows per worker (and as much again of position bias)
    std::uint64_t panels = 0;     ///< every K/V head's packed keys and values
    std::uint64_t rope = 0;       ///< cos and sin of every new position, per kind of layer
    std::uint64_t cross = 0;      ///< cross-attention's q
    std::uint64_t blocked_bytes = 0;
    std::uint64_t bytes() const;
};
StackBuffers stack_buffers(const plan::Stack& s, std::uint64_t rows, std::uint64_t keys, std::uint64_t memory_rows);

/// What one forward() of `tokens` tokens (and `source` for an encoder–decoder) allocates besides the stacks' buffers:
/// the caches and scratch in floats, the outputs by shape (empty: not made). forward() allocates from these.
struct RequestBuffers {
    std::uint64_t caches = 0;   ///< every stack's keys and values, cross-attention's included
    std::uint64_t memory = 0;   ///< an encoder–decoder's encoder output
    std::uint64_t scratch = 0;  ///< the head's input
    Shape hidden, logits, attention, encoder_attention, cross_attention, heads;
    std::uint64_t bytes() const;
};
RequestBuffers request_buffers(const plan::Plan& p, std::size_t tokens, std::size_t source, bool need_attention,
                               bool keep_heads, bool head);

/// Bytes one forward() of `tokens` tokens (on each side) with every attention map takes next to the weights; with
/// `f32_matrices` (some matrix keeps F32 panels) the largest input read in slivers too.
std::uint64_t forward_workspace_bytes(const plan::Plan& p, std::size_t tokens, bool head, bool f32_matrices);

/// What the pass assumes of every plan, checked once when a family has made one (a family's bug is a
/// std::logic_error, never a wrong result): within a stack every layer has the same heads and widths; a shared or tied
/// table has one vocabulary and width; a LayerNorm has a bias; an encoder–decoder's decoder layers all cross-attend.
void validate_plan(const plan::Plan& p);

/// std::length_error when parameters held in `bytes` (`floats` of them: F32, or 16-bit matrices) pass
/// max_parameter_bytes, naming the count and the bytes.
void check_parameter_bytes(std::uint64_t floats, std::uint64_t bytes, const std::string& family, const char* call);

/// Request::patch_positions as one flag per position (empty: the flagged heads are patched at every position).
std::vector<std::uint8_t> patched_positions(const Transformer::Request& r);

/// The rows of logits a request returns, its last: logits_to_keep of them, or one per position.
std::size_t logit_rows(const Transformer::Request& r);

/// The sizes the API shows (ModelConfig) from a plan.
ModelConfig summary(const plan::Plan& p, bool head);

}  // namespace model
}  // namespace attnscope
