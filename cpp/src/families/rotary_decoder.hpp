// The decoder-only families whose config.json uses LlamaConfig's field names and whose modeling code is LlamaModel's
// (RMSNorm, rotary positions, grouped-query attention, a gated MLP), with what each family changes: the biases, the
// QK-norm, the sliding window's rule. Their tensor names are the same too. Internal to the families.
#pragma once

#include "common.hpp"

namespace attnscope {
namespace families {

/// How one family reads the shared fields.
struct RotaryDecoder {
    const char* family;
    bool qkv_bias = false;          ///< q, k and v always have biases, o_proj none
    bool attention_bias = true;     ///< `attention_bias` gives q, k, v and o biases
    bool mlp_bias = false;          ///< `mlp_bias` gives the MLP's three biases
    bool qk_norm = false;           ///< an RMSNorm over every q and k head
    enum class Window { none, every_layer, from_max_window_layers } window = Window::none;
    bool qk_norm_whole = false;     ///< an RMSNorm over all of q's features and all of k's (OLMo 2)
    bool output_norms = false;      ///< the two norms on the sublayers' outputs, before each residual sum (OLMo 2)
    double rms_norm_eps = 1e-6;     ///< the config class's default
    bool partial_rotary = false;    ///< `partial_rotary_factor`: RoPE on int(head_dim · factor) features of each head
    /// rope_theta and rope_scaling read for `dims` rotated features by the family's own rule; null: read_rope's.
    plan::Rope (*rope)(const Config& f, std::size_t dims) = nullptr;
};

plan::Plan read_rotary_decoder(const Config& f, const RotaryDecoder& family);

/// LlamaModel's tensor names (embed_tokens, layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj [+ bias],
/// self_attn.{q,k}_norm, post_attention_layernorm, mlp.{gate,up,down}_proj}, norm; lm_head outside it).
extern const TensorName rotary_decoder_tensors[];
extern const std::size_t rotary_decoder_tensor_count;
/// The same names with the norms around each sublayer (Gemma2Model, Gemma3TextModel, Olmo2Model):
/// post_attention_layernorm on the attention's output, pre_/post_feedforward_layernorm around the MLP.
///
/// A family may name rows its plans never use (the biases, the QK-norms, a norm its layers lack): the loader places
/// a tensor only where the plan has a weight for it, refuses a tensor of such a row as it refuses an unknown name,
/// and asks only for the weights the plan has.
extern const TensorName sandwich_decoder_tensors[];
extern const std::size_t sandwich_decoder_tensor_count;
extern const char* const rotary_decoder_prefixes[];
extern const char* const rotary_decoder_ignored[];

}  // namespace families
}  // namespace attnscope
