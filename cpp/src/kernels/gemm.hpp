// C = A·B (+ bias per column): the matrix product behind every projection and both attention products.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

// One MR×(NB·W) tile of C kept in registers for the whole k loop, so each loaded B vector feeds MR
// multiply-adds and each broadcast A value feeds NB: that reuse is what makes the product fast.
template <class Arch, std::size_t MR, std::size_t NB>
inline void gemm_tile(std::size_t K, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                      std::size_t ldc, const float* bias)
{
    using batch = xsimd::batch<float, Arch>;
    constexpr std::size_t W = batch::size;
    batch acc[MR][NB];
    for (std::size_t nb = 0; nb < NB; ++nb) {
        const batch init = bias ? batch::load_unaligned(bias + nb * W) : batch(0.f);
        for (std::size_t r = 0; r < MR; ++r) acc[r][nb] = init;
    }
    for (std::size_t k = 0; k < K; ++k) {
        batch b[NB];
        for (std::size_t nb = 0; nb < NB; ++nb) b[nb] = batch::load_unaligned(B + k * ldb + nb * W);
        for (std::size_t r = 0; r < MR; ++r) {
            const batch a(A[r * lda + k]);
            for (std::size_t nb = 0; nb < NB; ++nb) acc[r][nb] = xsimd::fma(a, b[nb], acc[r][nb]);
        }
    }
    for (std::size_t r = 0; r < MR; ++r)
        for (std::size_t nb = 0; nb < NB; ++nb) acc[r][nb].store_unaligned(C + r * ldc + nb * W);
}

// Columns past the last full SIMD vector: plain dot products.
template <std::size_t MR>
inline void gemm_scalar_columns(std::size_t j0, std::size_t N, std::size_t K, const float* A, std::size_t lda,
                                const float* B, std::size_t ldb, float* C, std::size_t ldc, const float* bias)
{
    for (std::size_t r = 0; r < MR; ++r) {
        for (std::size_t j = j0; j < N; ++j) {
            float sum = bias ? bias[j] : 0.f;
            for (std::size_t k = 0; k < K; ++k) sum += A[r * lda + k] * B[k * ldb + j];
            C[r * ldc + j] = sum;
        }
    }
}

template <class Arch, std::size_t MR>
inline void gemm_row_panel(std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* B,
                           std::size_t ldb, float* C, std::size_t ldc, const float* bias)
{
    constexpr std::size_t W = xsimd::batch<float, Arch>::size;
    constexpr std::size_t NB = 2;
    std::size_t j = 0;
    for (; j + NB * W <= N; j += NB * W)
        gemm_tile<Arch, MR, NB>(K, A, lda, B + j, ldb, C + j, ldc, bias ? bias + j : nullptr);
    for (; j + W <= N; j += W) gemm_tile<Arch, MR, 1>(K, A, lda, B + j, ldb, C + j, ldc, bias ? bias + j : nullptr);
    if (j < N) gemm_scalar_columns<MR>(j, N, K, A, lda, B, ldb, C, ldc, bias);
}

/// C[M×N] = A[M×K]·B[K×N] + bias[N] (bias may be null). Row-major with leading dimensions lda, ldb, ldc.
struct gemm {
    template <class Arch>
    void operator()(Arch, std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* B,
                    std::size_t ldb, float* C, std::size_t ldc, const float* bias) const
    {
        constexpr std::size_t MR = 4;
        std::size_t i = 0;
        for (; i + MR <= M; i += MR) gemm_row_panel<Arch, MR>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, bias);
        for (; i < M; ++i) gemm_row_panel<Arch, 1>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc, bias);
    }
};

}  // namespace kernels
}  // namespace attnscope
