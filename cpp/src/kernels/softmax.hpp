// The softmax of a score row and its parts (row maximum, exp-and-sum), fused as one kernel for the
// materialising attention and used piecewise by the streaming one (online softmax).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "elementwise.hpp"  // scale_inplace

namespace attnscope {
namespace kernels {

/// The largest of x[0..n): -inf for n == 0 or a row of -inf, NaN if any entry is NaN (so NaN scores propagate
/// through the softmax as IEEE arithmetic would, instead of being mistaken for a fully blocked row).
struct row_max {
    template <class Arch>
    float operator()(Arch, const float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        float result = -std::numeric_limits<float>::infinity();
        bool has_nan = false;
        std::size_t j = 0;
        if (n >= W) {
            batch vmax = batch::load_unaligned(x);
            auto nan_lanes = xsimd::isnan(vmax);
            for (j = W; j + W <= n; j += W) {
                const batch v = batch::load_unaligned(x + j);
                nan_lanes = nan_lanes || xsimd::isnan(v);
                vmax = xsimd::max(vmax, v);
            }
            has_nan = xsimd::any(nan_lanes);
            alignas(64) float lanes[W];
            vmax.store_aligned(lanes);
            for (std::size_t l = 0; l < W; ++l) result = lanes[l] > result ? lanes[l] : result;
        }
        for (; j < n; ++j) {
            has_nan = has_nan || std::isnan(x[j]);
            result = x[j] > result ? x[j] : result;
        }
        return has_nan ? std::numeric_limits<float>::quiet_NaN() : result;
    }
};

/// x[j] = exp(x[j] − shift) in place; returns the sum. The vectorised exp is where the softmax spends its time.
struct exp_sum {
    template <class Arch>
    float operator()(Arch, float* x, std::size_t n, float shift) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch vshift(shift);
        batch vsum(0.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch e = xsimd::exp(batch::load_unaligned(x + j) - vshift);
            e.store_unaligned(x + j);
            vsum += e;
        }
        float sum = xsimd::hadd(vsum);
        for (; j < n; ++j) sum += (x[j] = std::exp(x[j] - shift));
        return sum;
    }
};

/// Softmax of x[0..n) in place, subtracting the row maximum first so large logits cannot overflow.
/// A row whose entries are all -inf (every key blocked) becomes all zeros instead of 0/0 = NaN.
struct softmax_inplace {
    template <class Arch>
    void operator()(Arch arch, float* x, std::size_t n) const
    {
        const float largest = row_max{}(arch, x, n);
        if (largest == -std::numeric_limits<float>::infinity()) {
            std::fill(x, x + n, 0.f);
            return;
        }
        if (std::isnan(largest)) {  // softmax of a row holding NaN is NaN everywhere, as in PyTorch
            std::fill(x, x + n, largest);
            return;
        }
        scale_inplace{}(arch, x, n, 1.f / exp_sum{}(arch, x, n, largest));
    }
};

}  // namespace kernels
}  // namespace attnscope
