// Element-wise kernels: each output element depends on the same element of the inputs only (scaling, adding a
// mask or a residual, GELU).
#pragma once

#include <cmath>
#include <cstddef>

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

/// x[j] *= factor.
struct scale_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, float factor) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch vfactor(factor);
        std::size_t j = 0;
        for (; j + W <= n; j += W) (batch::load_unaligned(x + j) * vfactor).store_unaligned(x + j);
        for (; j < n; ++j) x[j] *= factor;
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

/// x = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in place: the tanh approximation (HF's gelu_new, GPT-2's
/// activation_function, and PyTorch's GELU(approximate="tanh")).
struct gelu_tanh_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        constexpr float c = 0.7978845608028654f, k = 0.044715f;
        const batch vhalf(0.5f), vone(1.f), vc(c), vk(k);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch v = batch::load_unaligned(x + j);
            (vhalf * v * (vone + xsimd::tanh(vc * (v + vk * v * v * v)))).store_unaligned(x + j);
        }
        for (; j < n; ++j) x[j] = 0.5f * x[j] * (1.f + std::tanh(c * (x[j] + k * x[j] * x[j] * x[j])));
    }
};

/// x = cap·tanh(x / cap) in place: soft-capping of scores or logits (config.json's attn_logit_softcapping and
/// final_logit_softcapping, computed as HF does: divide, tanh, multiply).
struct softcap_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, float cap) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch vcap(cap);
        std::size_t j = 0;
        for (; j + W <= n; j += W) (xsimd::tanh(batch::load_unaligned(x + j) / vcap) * vcap).store_unaligned(x + j);
        for (; j < n; ++j) x[j] = std::tanh(x[j] / cap) * cap;
    }
};

/// x = max(x, 0) in place (nn.ReLU).
struct relu_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch zero(0.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) xsimd::max(batch::load_unaligned(x + j), zero).store_unaligned(x + j);
        for (; j < n; ++j) x[j] = x[j] > 0.f ? x[j] : 0.f;
    }
};

/// x = x·y element by element, in place (a gated MLP's act(gate)·up).
struct mul_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, const float* y) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        std::size_t j = 0;
        for (; j + W <= n; j += W) (batch::load_unaligned(x + j) * batch::load_unaligned(y + j)).store_unaligned(x + j);
        for (; j < n; ++j) x[j] *= y[j];
    }
};

}  // namespace kernels
}  // namespace attnscope
