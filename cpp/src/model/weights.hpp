// A model's weights, declared once from its plan (declare_weights): what a stack, a layer and the head hold, in the
// layout the kernels read. The same declaration counts the parameters before anything is allocated (a dry
// declaration holds sizes only), allocates them, and gives every part named by a family's tensor table its place
// (destination_of). Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnscope/plan.hpp"
#include "../kernels/panel_type.hpp"

namespace attnscope {
namespace model {

/// y = x·B (+ bias): B is in × out, packed into the GEMM's column panels: F32 (kernels::pack_panels layout) in
/// `packed`, or, when every file tensor of B is BF16 (or every one F16), those 16 bits as the file has them in
/// `half` (kernels::half_panel_index layout), widened inside the GEMM. The bias is F32 either way.
struct Matrix {
    std::size_t in = 0, out = 0;
    bool has_bias = false;
    kernels::PanelType type = kernels::PanelType::f32;
    std::vector<float> packed, bias;
    std::vector<std::uint16_t> half;
    bool exists() const { return out != 0; }
    /// B's element (k, col), as F32.
    float at(std::size_t k, std::size_t col) const;
};

/// A plain run of floats (a norm's weight, a table).
struct Vector {
    std::uint64_t size = 0;  ///< 64-bit: a dry declaration counts what a 32-bit size_t could not hold
    std::vector<float> data;
    bool exists() const { return size != 0; }
};

struct NormWeights {
    Vector weight, bias;
};

/// A layer's weights. `qkv` holds the q heads, then the k heads, then the v heads as columns; a gated MLP's `up`
/// holds the gate's columns, then the up projection's (one product for both). Cross-attention's q comes from the
/// decoder, its k|v from the encoder's output.
struct LayerWeights {
    NormWeights attn_in, attn_out, attn_after, cross_in, cross_out, cross_after, mlp_in, mlp_out, mlp_after;
    Vector q_norm, k_norm;
    Matrix qkv, o, cross_q, cross_kv, cross_o, up, down;
};

struct StackWeights {
    Vector positions;       ///< learned [rows, width]; sinusoidal: computed at allocation
    Vector types;           ///< [type_vocab, width]
    Vector relative_bias;   ///< [buckets, heads], layer 0's
    NormWeights embed_norm, final_norm;
    std::vector<LayerWeights> layers;
};

struct Weights {
    /// Token tables [vocab, width], by Embedding::table. The tied one is held as the head's panels instead (its
    /// Vector keeps only its size), serving the lookup and the head.
    std::vector<Vector> tables;
    std::vector<StackWeights> stacks;
    Matrix head, mlm_dense;
    NormWeights mlm_norm;
    /// The table held in head.packed, or -1.
    int tied_table = -1;
};

/// Declares every weight of `p` into `w`: sizes always, memory too when `allocate` (zeros, then the loader fills
/// them; a sinusoidal table is computed). Throws std::length_error past the address space.
void declare_weights(const plan::Plan& p, Weights& w, bool allocate);
/// The same, declaring the head only when `head` (the plan may have one that the files do not: the memory plan before
/// the headers counts the least the config can mean), and with `types` (non-empty) the panel type of every matrix,
/// in matrices() order (empty: every matrix F32).
void declare_weights(const plan::Plan& p, Weights& w, bool allocate, bool head, const std::vector<kernels::PanelType>& types = {});

/// Every matrix of `w` (declared or not), in one fixed order.
std::vector<Matrix*> matrices(Weights& w);

/// Floats the declared weights count, the packed panels' padding included (saturating far beyond any memory).
std::uint64_t weight_floats(const Weights& w);
/// Bytes the declared weights hold: 2 an element for a 16-bit matrix, 4 for everything else; with `all_half`, as if
/// every matrix were 16-bit (the least a config can mean before the files' dtypes are known).
std::uint64_t weight_bytes(const Weights& w, bool all_half = false);

}  // namespace model
}  // namespace attnscope
