// The pretrained models' internals shared by their source files: the tensor-name table (names.cpp), the weights in
// the kernels' layout, the config reader (config.cpp) and the one forward pass (forward.cpp). Not public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/pretrained.hpp"

namespace attnscope {
namespace pretrained {

/// "loadModel: config.json: <field>: ..." and friends: every loader message starts with the call the user made.
constexpr const char* call_name = "loadModel";

/// A product y = x·B (+ bias): B is `in`×`out`, packed into the GEMM's panels (kernels::pack_panels layout).
struct Matrix {
    std::size_t in = 0, out = 0;
    std::vector<float> packed;
    std::vector<float> bias;  // empty: no bias
};

struct Norm {
    std::vector<float> weight, bias;  // bias empty for RMSNorm
};

/// One block. Pre-norm: x += attn(norm1(x)); x += mlp(norm2(x)). Post-norm (BERT): x = norm1(x + attn(x));
/// x = norm2(x + mlp(x)). `qkv` holds the q heads, then the k heads, then the v heads as columns.
struct LayerWeights {
    Norm norm1, norm2, q_norm, k_norm;
    Matrix qkv, o, up, gate, down;  // gate: SwiGLU only
};

struct Weights {
    std::vector<float> token_embedding;  // [vocab, d] row-major; empty when tied (head.packed serves the lookup)
    std::vector<float> position_embedding, token_type_embedding;
    Norm embed_norm;                     // BERT
    std::vector<LayerWeights> layers;
    Norm final_norm;                     // pre-norm families
    Matrix mlm_dense;                    // BERT's MLM transform: dense, activation, LayerNorm
    Norm mlm_norm;
    Matrix head;                         // d → vocab; tied: the token embedding itself
};

/// What a tensor of the file is to the model.
enum class Role : std::uint8_t {
    token_embedding, position_embedding, token_type_embedding, embed_norm_w, embed_norm_b,
    norm1_w, norm1_b, norm2_w, norm2_b, q_norm, k_norm,
    q_w, k_w, v_w, qkv_w, q_b, k_b, v_b, qkv_b, o_w, o_b,
    up_w, up_b, gate_w, gate_b, down_w, down_b,
    final_norm_w, final_norm_b, head_w,
    mlm_dense_w, mlm_dense_b, mlm_norm_w, mlm_norm_b, mlm_bias,
};

/// Which optional part of a checkpoint a tensor belongs to: all of a group's tensors are present, or none.
enum class Group : std::uint8_t { required, lm_head, mlm_head };

/// One tensor a checkpoint of this config may hold, under its name without the model prefix.
struct TensorSpec {
    std::string name;
    Shape shape;
    Role role;
    std::uint32_t layer = 0;
    Group group = Group::required;
    bool conv1d = false;  // GPT-2's Conv1D: a weight stored [in, out] instead of nn.Linear's [out, in]
    std::uint32_t alias_of = none;  // another name of the spec at this index (the same Parameter), or none
    static constexpr std::uint32_t none = ~std::uint32_t(0);
};

// config.cpp
/// Reads and checks config.json. Throws FileError naming the field.
PretrainedConfig read_config(const std::string& text);

// names.cpp
/// Every tensor a checkpoint of `config` may hold (before the file decides has_lm_head).
std::vector<TensorSpec> tensor_specs(const PretrainedConfig& config);
/// Buffers a tensor name can carry that the model does not read (GPT-2's causal-mask buffers, rotary inv_freq,
/// BERT's pooler and position_ids, a tied head stored anyway): their bytes are skipped.
bool ignored_tensor(const PretrainedConfig& config, const std::string& name);
/// The name without the family's model prefix ("transformer.", "bert.", "model."), when it has one.
std::string strip_prefix(const PretrainedConfig& config, const std::string& name);
/// Parameter floats of `config` with an LM head or not (`lm_head`, for the causal families) and BERT's MLM head or
/// not, panel padding included; throws
/// std::length_error when they exceed max_pretrained_parameter_bytes (naming the parameter count and bytes).
std::uint64_t parameter_floats(const PretrainedConfig& config, bool lm_head, bool mlm_head);

}  // namespace pretrained

/// The state of a loaded model.
struct PretrainedModel::Impl {
    PretrainedConfig config;
    pretrained::Weights weights;
    std::uint64_t parameter_bytes = 0;
};

namespace pretrained {

/// Where forward() records what trace() returns (null: nothing is recorded).
struct TraceSink {
    PretrainedTrace* trace;
};

/// The one forward pass over `rows` new positions starting at `first_position`, reading and extending per-layer
/// key/value caches of `capacity` positions ([capacity, kv_heads·head_dim] each, keys after RoPE). forward() runs it
/// once over every token; generate() once per token. `attention` (may be null) receives [L, H, rows, first+rows].
struct Step {
    const std::int32_t* tokens;
    const std::int32_t* token_types;   // may be null
    const std::uint8_t* key_mask;      // HF polarity, first_position + rows entries; may be null
    std::size_t rows, first_position, capacity;
    const HeadMask* ablate;
    Ablation ablation;                 // what ablate does
    const HeadMask* patch;             // may be null or empty
    const float* patch_from;           // [L, rows, H, hd] when patch is non-empty
    float* kept;                       // [L, rows, H, hd] out, may be null
    float* key_cache;                  // layers × capacity × kv_heads·head_dim
    float* value_cache;
    float* attention;                  // may be null
    TraceSink* sink;                   // may be null
    float* hidden;                     // [rows, d] out: the last hidden state
    float* logits;                     // [rows, vocab] out, may be null
    bool last_logits_only;             // logits of the last row only ([vocab]): all a greedy step reads
    const char* call;                  // "forward", "trace" or "generate": what a size error names
};
void run(const PretrainedModel::Impl& model, const Step& step);

/// Checks of a request, shared by forward, generate and trace (std::invalid_argument naming the field).
void check_request(const PretrainedConfig& config, const PretrainedModel::Request& request, const char* call);

}  // namespace pretrained
}  // namespace attnscope
