// The GRU cell's gates (PyTorch's nn.GRU), fused as one kernel: the two matrix-vector products before it are the
// packed GEMM's, so this is the step's element-wise part.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// One GRU step after its two projections, for a hidden state of `n` floats. gi = W_ih·x + b_ih and
/// gh = W_hh·h + b_hh each hold 3n floats in PyTorch's gate order r, z, n:
///   r = σ(gi_r + gh_r),  z = σ(gi_z + gh_z),  c = tanh(gi_n + r ⊙ gh_n),  h ← (1 − z) ⊙ c + z ⊙ h.
/// `h` is updated in place (it may not alias gi or gh).
struct gru_gates {
    template <class Arch>
    void operator()(Arch, const float* gi, const float* gh, float* h, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch one(1.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            // σ(x) = 1 / (1 + e^−x): e^−x overflowing to inf for very negative x gives 0, the right limit.
            const batch r = one / (one + xsimd::exp(-(batch::load_unaligned(gi + j) + batch::load_unaligned(gh + j))));
            const batch z = one / (one + xsimd::exp(-(batch::load_unaligned(gi + n + j) + batch::load_unaligned(gh + n + j))));
            const batch c = xsimd::tanh(xsimd::fma(r, batch::load_unaligned(gh + 2 * n + j), batch::load_unaligned(gi + 2 * n + j)));
            const batch old = batch::load_unaligned(h + j);
            xsimd::fma(z, old - c, c).store_unaligned(h + j);  // (1 − z)·c + z·h = c + z·(h − c)
        }
        for (; j < n; ++j) {
            const float r = 1.f / (1.f + std::exp(-(gi[j] + gh[j])));
            const float z = 1.f / (1.f + std::exp(-(gi[n + j] + gh[n + j])));
            const float c = std::tanh(gi[2 * n + j] + r * gh[2 * n + j]);
            h[j] = c + z * (h[j] - c);
        }
    }
};

}  // namespace kernels
}  // namespace attnscope
