// Row kernels of the transformer blocks around attention: LayerNorm, GELU, residual adds.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// y = (x − mean(x)) / sqrt(var(x) + eps) · gamma + beta over one row of n features (biased variance, as PyTorch).
struct layer_norm {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t n, const float* gamma, const float* beta, float eps,
                    float* y) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        std::size_t j = 0;
        batch vsum(0.f);
        for (; j + W <= n; j += W) vsum += batch::load_unaligned(x + j);
        float sum = xsimd::hadd(vsum);
        for (; j < n; ++j) sum += x[j];
        const float mean = sum / float(n);

        // Two passes (mean, then squared deviations): the one-pass formula loses digits when |mean| ≫ std.
        const batch vmean(mean);
        batch vsq(0.f);
        for (j = 0; j + W <= n; j += W) {
            const batch d = batch::load_unaligned(x + j) - vmean;
            vsq = xsimd::fma(d, d, vsq);
        }
        float sq = xsimd::hadd(vsq);
        for (; j < n; ++j) sq += (x[j] - mean) * (x[j] - mean);
        const float rstd = 1.f / std::sqrt(sq / float(n) + eps);

        const batch vrstd(rstd);
        for (j = 0; j + W <= n; j += W) {
            const batch normalised = (batch::load_unaligned(x + j) - vmean) * vrstd;
            xsimd::fma(normalised, batch::load_unaligned(gamma + j), batch::load_unaligned(beta + j)).store_unaligned(y + j);
        }
        for (; j < n; ++j) y[j] = (x[j] - mean) * rstd * gamma[j] + beta[j];
    }
};

/// x = x · Φ(x) = 0.5·x·(1 + erf(x/√2)) in place: the exact GELU (PyTorch's nn.GELU() default).
struct gelu_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        constexpr float inv_sqrt2 = 0.70710678118654752f;
        const batch vhalf(0.5f), vone(1.f), vinv_sqrt2(inv_sqrt2);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch v = batch::load_unaligned(x + j);
            (vhalf * v * (vone + xsimd::erf(v * vinv_sqrt2))).store_unaligned(x + j);
        }
        for (; j < n; ++j) x[j] = 0.5f * x[j] * (1.f + std::erf(x[j] * inv_sqrt2));
    }
};

}  // namespace kernels
}  // namespace attnscope
