// The per-head attention loop and the dispatch of the SIMD kernels.
#include "attend.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/gemm.hpp"
#include "kernels/softmax.hpp"

namespace attnscope {
namespace detail {

using arch = xsimd::default_arch;

void matmul(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* B,
            std::size_t ldb, float* C, std::size_t ldc, const float* bias)
{
    kernels::gemm{}(arch{}, M, N, K, A, lda, B, ldb, C, ldc, bias);
}

std::size_t checked_mul(std::size_t a, std::size_t b, const char* what)
{
    if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
        throw std::length_error(std::string(what) + ": sizes too large (" + std::to_string(a) + " × " +
                                std::to_string(b) + " overflows the address space)");
    return a * b;
}

void attend(std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q, Strided k, Strided v,
            float scale, const MaskRows* masks, std::size_t mask_count, bool causal, float* key_t, float* scores,
            float* out, std::size_t ldo)
{
    // kᵀ made contiguous so q·kᵀ is the same row-major product as the projections, vectorised over keys.
    for (std::size_t j = 0; j < Lk; ++j)
        for (std::size_t d = 0; d < D; ++d) key_t[d * Lk + j] = k.data[j * k.ld + d];
    matmul(Lq, Lk, D, q.data, q.ld, key_t, Lk, scores, Lk, nullptr);

    constexpr float neg_inf = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < Lq; ++i) {
        float* row = scores + i * Lk;
        // The first additive mask rides along with the scaling pass; the others get a pass each.
        const float* first_added = nullptr;
        std::size_t m = 0;
        if (mask_count > 0 && masks[0].kind == MaskKind::additive) {
            first_added = static_cast<const float*>(masks[0].base) + i * masks[0].row_stride;
            m = 1;
        }
        kernels::scale_add{}(arch{}, row, Lk, scale, first_added);
        for (; m < mask_count; ++m) {
            const MaskRows& mask = masks[m];
            if (mask.kind == MaskKind::additive) {
                kernels::add_inplace{}(arch{}, row, Lk, static_cast<const float*>(mask.base) + i * mask.row_stride);
            } else {
                const auto* blocked = static_cast<const std::uint8_t*>(mask.base) + i * mask.row_stride;
                for (std::size_t j = 0; j < Lk; ++j)
                    if (blocked[j]) row[j] = neg_inf;
            }
        }
        // Causal: keys after the query take no part; softmax the allowed prefix and zero the rest.
        const std::size_t allowed = causal ? (i + 1 < Lk ? i + 1 : Lk) : Lk;
        kernels::softmax_inplace{}(arch{}, row, allowed);
        for (std::size_t j = allowed; j < Lk; ++j) row[j] = 0.f;
    }

    matmul(Lq, Dv, Lk, scores, Lk, v.data, v.ld, out, ldo, nullptr);
}

}  // namespace detail
}  // namespace attnscope
