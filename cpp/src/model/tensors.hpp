// The vocabulary a family's tensor table speaks: the parts of a model a file's tensor can be (Part), how the file lays
// it out (Layout), and where its elements go in the declared weights (destination_of). Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "attnscope/tensor.hpp"
#include "weights.hpp"

namespace attnscope {
namespace model {

/// What a file's tensor is to the model. A stack's parts, a layer's (the layer number comes from the name), the head's.
enum class Part : std::uint8_t {
    // A stack's.
    token_embedding, position_embedding, type_embedding, embed_norm, embed_norm_bias, final_norm, final_norm_bias,
    relative_bias,
    // A layer's norms: in (pre), out (on the sublayer's output), after (on the residual sum); weight and bias.
    attn_in, attn_in_bias, attn_out, attn_out_bias, attn_after, attn_after_bias,
    cross_in, cross_in_bias, cross_out, cross_out_bias, cross_after, cross_after_bias,
    mlp_in, mlp_in_bias, mlp_out, mlp_out_bias, mlp_after, mlp_after_bias,
    // A layer's attention. qkv: the three fused (rows q, k, v, or per head with Layout::per_head_qkv).
    q, k, v, qkv, o, q_bias, k_bias, v_bias, qkv_bias, o_bias, q_norm, k_norm,
    // Cross-attention. cross_kv: k and v fused; cross_qkv: nn.MultiheadAttention's in_proj (q rows, then k, v).
    cross_q, cross_k, cross_v, cross_kv, cross_qkv, cross_o,
    cross_q_bias, cross_k_bias, cross_v_bias, cross_kv_bias, cross_qkv_bias, cross_o_bias,
    // The MLP. gate_up: the two fused, the gate's rows first.
    gate, up, gate_up, down, gate_bias, up_bias, gate_up_bias, down_bias,
    // The head's.
    head, head_bias, mlm_dense, mlm_dense_bias, mlm_norm, mlm_norm_bias,
    count
};

/// True for the parts a layer has (their names carry the layer number).
bool per_layer(Part part);

/// How a file stores a tensor of a part.
enum class Layout : std::uint8_t {
    standard,      ///< nn.Linear's weight [out, in]; a vector or table as it is
    conv1d,        ///< GPT-2's Conv1D: a weight [in, out]
    per_head_qkv,  ///< GPT-NeoX's query_key_value: rows (and bias) [heads, 3, head_dim]
    row,           ///< a vector saved as one row [1, n] (an encoder–decoder's final_logits_bias buffer)
};

/// One run of a tensor's rows going to one place. A matrix: the file's rows (its output features) [0, rows) of this
/// segment become columns col0.. of a packed matrix with K rows. A vector: elements [0, rows) go to base + col0.
struct Segment {
    float* base = nullptr;
    std::size_t K = 0, col0 = 0, rows = 0;
    std::uint16_t* half = nullptr;  ///< a matrix kept in 16 bits: its panels (base is null)
    Matrix* owner = nullptr;        ///< a matrix's segment: the matrix (its panel type)
};

/// Where a tensor's elements go: one segment, or two when one file tensor feeds two matrices (nn.MultiheadAttention's
/// in_proj as cross-attention: its q rows and its k|v rows). per_head_qkv regroups the rows head by head.
struct Destination {
    bool matrix = false;
    Layout layout = Layout::standard;
    Segment seg[2];
    std::size_t segments = 0;
    std::size_t heads = 0, head_dim = 0;  ///< per_head_qkv
    float offset = 0.f;                   ///< added to every element (Norm::weight_offset)
    Shape shape;                          ///< the file tensor's shape
    bool exists() const { return !shape.empty(); }
};

/// The place and the expected shape of `part` of stack `stack`, layer `layer` in `w` (declared from `p`, allocated
/// or dry: a dry declaration gives the shape and a null base). No shape (exists() false): the plan has no such part.
Destination destination_of(const plan::Plan& p, Weights& w, Part part, std::size_t stack, std::size_t layer, Layout layout);

}  // namespace model
}  // namespace attnscope
