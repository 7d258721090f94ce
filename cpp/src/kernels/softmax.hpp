// Row kernels of the attention scores: scale and add a mask, then softmax in place.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// x[j] = x[j]·scale + added[j] (added may be null).
struct scale_add {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, float scale, const float* added) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch vscale(scale);
        std::size_t j = 0;
        if (added) {
            for (; j + W <= n; j += W)
                xsimd::fma(batch::load_unaligned(x + j), vscale, batch::load_unaligned(added + j)).store_unaligned(x + j);
            for (; j < n; ++j) x[j] = x[j] * scale + added[j];
        } else {
            for (; j + W <= n; j += W) (batch::load_unaligned(x + j) * vscale).store_unaligned(x + j);
            for (; j < n; ++j) x[j] *= scale;
        }
    }
};

/// x[j] += added[j].
struct add_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, const float* added) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        std::size_t j = 0;
        for (; j + W <= n; j += W)
            (batch::load_unaligned(x + j) + batch::load_unaligned(added + j)).store_unaligned(x + j);
        for (; j < n; ++j) x[j] += added[j];
    }
};

/// Softmax of x[0..n) in place, subtracting the row maximum first so large logits cannot overflow.
/// A row whose entries are all -inf (every key blocked) becomes all zeros instead of 0/0 = NaN.
struct softmax_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        constexpr float neg_inf = -std::numeric_limits<float>::infinity();

        float row_max = neg_inf;
        std::size_t j = 0;
        if (n >= W) {
            batch vmax(neg_inf);
            for (; j + W <= n; j += W) vmax = xsimd::max(vmax, batch::load_unaligned(x + j));
            alignas(64) float lanes[W];
            vmax.store_aligned(lanes);
            for (std::size_t l = 0; l < W; ++l) row_max = lanes[l] > row_max ? lanes[l] : row_max;
        }
        for (; j < n; ++j) row_max = x[j] > row_max ? x[j] : row_max;

        if (row_max == neg_inf) {
            for (j = 0; j < n; ++j) x[j] = 0.f;
            return;
        }

        const batch vrow_max(row_max);
        batch vsum(0.f);
        j = 0;
        for (; j + W <= n; j += W) {
            const batch e = xsimd::exp(batch::load_unaligned(x + j) - vrow_max);
            e.store_unaligned(x + j);
            vsum += e;
        }
        float sum = xsimd::hadd(vsum);
        for (; j < n; ++j) {
            x[j] = std::exp(x[j] - row_max);
            sum += x[j];
        }

        const float inv_sum = 1.f / sum;
        const batch vinv(inv_sum);
        j = 0;
        for (; j + W <= n; j += W) (batch::load_unaligned(x + j) * vinv).store_unaligned(x + j);
        for (; j < n; ++j) x[j] *= inv_sum;
    }
};

}  // namespace kernels
}  // namespace attnscope
