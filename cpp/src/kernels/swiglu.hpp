// The gated MLP's activation (SwiGLU): silu(gate) · up, element by element.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

#include "elementwise.hpp"  // map_inplace, zip_inplace

namespace attnscope {
namespace kernels {

/// gate[j] = silu(gate[j]) · up[j] = gate[j] / (1 + exp(−gate[j])) · up[j], in place.
struct silu_mul {
    template <class Arch>
    void operator()(Arch, float* gate, const float* up, std::size_t n) const
    {
        const xsimd::batch<float, Arch> one(1.f);
        zip_inplace<Arch>(
            gate, up, n, [=](auto g, auto u) { return g / (one + xsimd::exp(-g)) * u; },
            [](float g, float u) { return g / (1.f + std::exp(-g)) * u; });
    }
};

/// x[j] = silu(x[j]) = x[j] / (1 + exp(−x[j])), in place (an MLP's SiLU without a gate, or a gate before its product).
struct silu_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        const xsimd::batch<float, Arch> one(1.f);
        map_inplace<Arch>(x, n, [=](auto g) { return g / (one + xsimd::exp(-g)); }, [](float g) { return g / (1.f + std::exp(-g)); });
    }
};

}  // namespace kernels
}  // namespace attnscope
