// Rotary position embedding in HF's rotate_half convention: feature i of a head is paired with feature i + D/2.
#pragma once

#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// x = x·cos + rotate_half(x)·sin over one head of D = 2·half features, in place: for i < half,
/// x[i] ← x[i]·cos[i] − x[i+half]·sin[i] and x[i+half] ← x[i+half]·cos[i] + x[i]·sin[i]
/// (HF's cos and sin repeat their `half` values twice, so one half of each is enough).
struct rope_rotate_half {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t half, const float* cos, const float* sin) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        float* hi = x + half;
        std::size_t i = 0;
        for (; i + W <= half; i += W) {
            const batch a = batch::load_unaligned(x + i), b = batch::load_unaligned(hi + i);
            const batch c = batch::load_unaligned(cos + i), s = batch::load_unaligned(sin + i);
            (a * c - b * s).store_unaligned(x + i);
            (b * c + a * s).store_unaligned(hi + i);
        }
        for (; i < half; ++i) {
            const float a = x[i], b = hi[i];
            x[i] = a * cos[i] - b * sin[i];
            hi[i] = b * cos[i] + a * sin[i];
        }
    }
};

}  // namespace kernels
}  // namespace attnscope
