/// Scaled dot-product attention: the tutorial's three steps on tensors the caller gives.
#pragma once

#include <optional>

#include "attnscope/tensor.hpp"

namespace attnscope {

/// Options of scaled_dot_product_attention().
struct SdpaOptions {
    /// `[Lq, Lk]` (shared by every leading index) or `[..., Lq, Lk]` with q's leading dims.
    /// Boolean: nonzero = blocked (the opposite of torch's F.scaled_dot_product_attention,
    /// the same as nn.MultiheadAttention). Additive: added to the scaled scores.
    MaskView attn_mask;
    /// Blocks key j for query i when j > i.
    bool causal = false;
    /// Multiplies q·k; defaults to 1/sqrt(D). Must be finite.
    std::optional<float> scale;
};

/// Output `[..., Lq, Dv]` and weights `[..., Lq, Lk]`.
struct AttentionResult {
    Tensor output;
    Tensor weights;  ///< empty (no shape, no data) when weights were not requested
};

/// What one scaled_dot_product_attention() call produces and holds, known before it runs.
struct SdpaPlan {
    Shape output_shape;               ///< `[..., Lq, Dv]`
    Shape weights_shape;              ///< `[..., Lq, Lk]`
    std::size_t workspace_bytes = 0;  ///< scratch the call allocates besides its output and weights
};

/// Checks the shapes and options of a call without reading any data; throws what the call would throw.
SdpaPlan plan_scaled_dot_product_attention(const Shape& q, const Shape& k, const Shape& v,
                                           const SdpaOptions& options = {});

/// The same computation into caller-owned buffers of plan_scaled_dot_product_attention()'s output and weights
/// shapes, so no result tensor is allocated (only its workspace).
void scaled_dot_product_attention(const TensorView& q, const TensorView& k, const TensorView& v,
                                  const SdpaOptions& options, float* output, float* weights);

/// weights = softmax(q·kᵀ·scale + mask) row by row, output = weights·v.
/// q `[..., Lq, D]`, k `[..., Lk, D]`, v `[..., Lk, Dv]` with equal leading dims (possibly none).
/// A query row whose keys are all blocked gets zero weights and a zero output row, never NaN.
/// Throws std::invalid_argument on mismatched shapes, null data or a non-finite scale, std::length_error on sizes
/// too large.
AttentionResult scaled_dot_product_attention(const TensorView& q, const TensorView& k, const TensorView& v,
                                             const SdpaOptions& options = {});

}  // namespace attnscope
