// The gated MLP's activation (SwiGLU): silu(gate) · up, element by element.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// gate[j] = silu(gate[j]) · up[j] = gate[j] / (1 + exp(−gate[j])) · up[j], in place.
struct silu_mul {
    template <class Arch>
    void operator()(Arch, float* gate, const float* up, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch one(1.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch g = batch::load_unaligned(gate + j);
            (g / (one + xsimd::exp(-g)) * batch::load_unaligned(up + j)).store_unaligned(gate + j);
        }
        for (; j < n; ++j) gate[j] = gate[j] / (1.f + std::exp(-gate[j])) * up[j];
    }
};

/// x[j] = silu(x[j]) = x[j] / (1 + exp(−x[j])), in place (an MLP's SiLU without a gate, or a gate before its product).
struct silu_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch one(1.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch g = batch::load_unaligned(x + j);
            (g / (one + xsimd::exp(-g))).store_unaligned(x + j);
        }
        for (; j < n; ++j) x[j] = x[j] / (1.f + std::exp(-x[j]));
    }
};

}  // namespace kernels
}  // namespace attnscope
