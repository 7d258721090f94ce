// RMSNorm over one row of features (the rotary decoders' norm): a sum of squares followed by a scaling.
#pragma once

#include <cmath>
#include <cstddef>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// y = x / sqrt(mean(x²) + eps) · gamma over one row of n features (HF's LlamaRMSNorm, computed in F32 as it is
/// for F32 weights). y may be x.
struct rms_norm {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t n, const float* gamma, float eps, float* y) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        batch vsq(0.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch v = batch::load_unaligned(x + j);
            vsq = xsimd::fma(v, v, vsq);
        }
        float sq = xsimd::hadd(vsq);
        for (; j < n; ++j) sq += x[j] * x[j];
        // HF multiplies by rsqrt; 1/sqrt rounds the same to within an ulp.
        const float r = 1.f / std::sqrt(sq / float(n) + eps);
        const batch vr(r);
        for (j = 0; j + W <= n; j += W)
            (batch::load_unaligned(x + j) * vr * batch::load_unaligned(gamma + j)).store_unaligned(y + j);
        for (; j < n; ++j) y[j] = x[j] * r * gamma[j];
    }
};

}  // namespace kernels
}  // namespace attnscope
