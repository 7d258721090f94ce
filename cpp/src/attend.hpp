// One attention problem (one head of one batch element) on strided buffers: the loop both
// scaled_dot_product_attention and MultiHeadAttention run.
#pragma once

#include <cstddef>

#include "attnscope/tensor.hpp"

namespace attnscope {
namespace detail {

/// One mask source as seen by one attention problem: row i of the scores reads
/// `base + i * row_stride` (row_stride 0: the same row for every query, as a key padding mask).
struct MaskRows {
    MaskKind kind = MaskKind::boolean;
    const void* base = nullptr;
    std::size_t row_stride = 0;
};

/// Row-major matrix views with leading dimensions, so heads can be read in place from [seq, embed] buffers.
struct Strided {
    const float* data;
    std::size_t ld;
};

/// scores[Lq×Lk] = softmax(q·kᵀ·scale + masks) (rows with every key blocked → 0), out[Lq×Dv] = scores·v.
/// `key_t` is scratch of D·Lk floats; `scores` has row stride Lk.
void attend(std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q, Strided k, Strided v,
            float scale, const MaskRows* masks, std::size_t mask_count, bool causal, float* key_t, float* scores,
            float* out, std::size_t ldo);

/// Accumulating C[M×N] = A·B + bias, dispatched to the SIMD kernel.
void matmul(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* B,
            std::size_t ldb, float* C, std::size_t ldc, const float* bias);

/// a·b, throwing std::length_error naming `what` when it overflows size_t.
std::size_t checked_mul(std::size_t a, std::size_t b, const char* what);

}  // namespace detail
}  // namespace attnscope
