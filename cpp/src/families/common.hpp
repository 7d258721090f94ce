// What the families' files share: the limits every config size is checked against, and the builders of the plan's
// parts most configs describe the same way (norms, activations, rotary positions, a stack of one kind of layer).
// Internal to the families.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "family.hpp"

namespace attnscope {
namespace families {

/// Limits on what a config may say, checked on every size field before anything proportional to it exists. They are
/// about eight times the largest published model of each kind (126 layers, 128 heads, a head of 256, a width of 16,384,
/// 262,144 tokens), so no real checkpoint reaches them, while a config at every limit still only declares a few MB
/// of bookkeeping before its parameter bytes are counted and refused (plan first: docs/huggingface.md).
struct Limits {
    static constexpr std::size_t layers = 1024;
    static constexpr std::size_t heads = 1024;
    static constexpr std::size_t head_dim = 2048;
    static constexpr std::size_t width = 1 << 17;         ///< the model width, hidden_size
    static constexpr std::size_t inner = 1 << 20;         ///< an MLP's inner width
    static constexpr std::size_t vocab = 1 << 22;
    static constexpr std::size_t positions = 1 << 22;     ///< tokens of input (a learned table's rows)
    static constexpr std::size_t token_types = 1 << 10;
    static constexpr std::size_t buckets = 1 << 12;       ///< relative-position buckets
};

/// The norms of a plan.
plan::Norm layer_norm(float eps, bool bias = true);
plan::Norm rms_norm(float eps, float weight_offset = 0.f);

/// An activation by HF's ACT2FN name (field `field` of `f`, default `fallback`): one of `allowed`'s names.
plan::Activation activation(const Config& f, const char* field, const char* fallback);

/// `divisor` divides `n`, else a RangeError naming `field` ("expected a divisor of <of> (n), got divisor").
void check_divides(const Config& f, const char* field, std::size_t divisor, const char* of, std::size_t n);

/// rope_theta and rope_scaling (modeling_rope_utils.py ROPE_INIT_FUNCTIONS: default, linear, llama3; the type is
/// `rope_type`, or the legacy `type`) for `dims` rotated features of each head. Degenerate values are refused:
/// rope_theta at most 1 (every position the same angle), a factor below 1/1024.
plan::Rope read_rope(const Config& f, std::size_t dims, const char* theta_field = "rope_theta");

/// The RoPE base: transformers 5's rope_parameters in its plain form ({"rope_type": "default", "rope_theta": θ}), else
/// `field` (10000 when absent). Any other rope_parameters (a scaling, a partial rotation, a form per layer type, or
/// one given beside rope_scaling) is refused by name. Every RoPE family reads its theta here.
double rope_theta(const Config& f, const char* field);

/// A token id field (decoder_start_token_id, eos_token_id): from 0 to vocab - 1; `fallback` when absent or null.
std::int32_t token_id(const Config& f, const char* name, std::int32_t fallback, std::size_t vocab);

/// `layer_types` (transformers' per-layer list): 1 for each "sliding_attention" layer, 0 for "full_attention"; any
/// other value, or a list of another length than `layers`, is refused naming its entry.
std::vector<std::uint8_t> read_layer_types(const Config& f, std::size_t layers);

/// A stack of `layers` layers all of kind `layer`.
void uniform_layers(plan::Stack& s, const plan::Layer& layer, std::size_t layers);

/// Fields that no causal or encoder family here implements (quantized weights, an encoder–decoder config, added
/// cross-attention, and soft-capping unless the family `reads_capping`), refused by name.
void refuse_unsupported(const Config& f, bool reads_capping = false);

}  // namespace families
}  // namespace attnscope
