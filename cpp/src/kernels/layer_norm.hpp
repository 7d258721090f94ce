// LayerNorm over one row of features: a reduction (mean, variance) followed by an element-wise affine map.
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

}  // namespace kernels
}  // namespace attnscope
