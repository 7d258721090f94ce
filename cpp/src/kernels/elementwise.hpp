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

/// x[j] = vector(x[j]) over whole batches and scalar(x[j]) over the tail: the loop of every in-place kernel below.
/// Both functions compute the same formula, one on W lanes at a time.
template <class Arch, class Vector, class Scalar>
inline void map_inplace(float* x, std::size_t n, Vector vector, Scalar scalar)
{
    using batch = xsimd::batch<float, Arch>;
    constexpr std::size_t W = batch::size;
    std::size_t j = 0;
    for (; j + W <= n; j += W) vector(batch::load_unaligned(x + j)).store_unaligned(x + j);
    for (; j < n; ++j) x[j] = scalar(x[j]);
}

/// The same with a second input read element by element: x[j] = f(x[j], y[j]).
template <class Arch, class Vector, class Scalar>
inline void zip_inplace(float* x, const float* y, std::size_t n, Vector vector, Scalar scalar)
{
    using batch = xsimd::batch<float, Arch>;
    constexpr std::size_t W = batch::size;
    std::size_t j = 0;
    for (; j + W <= n; j += W) vector(batch::load_unaligned(x + j), batch::load_unaligned(y + j)).store_unaligned(x + j);
    for (; j < n; ++j) x[j] = scalar(x[j], y[j]);
}

/// x[j] += added[j].
struct add_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, const float* added) const
    {
        zip_inplace<Arch>(x, added, n, [](auto a, auto b) { return a + b; }, [](float a, float b) { return a + b; });
    }
};

/// x[j] *= factor.
struct scale_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, float factor) const
    {
        const xsimd::batch<float, Arch> vfactor(factor);
        map_inplace<Arch>(x, n, [=](auto v) { return v * vfactor; }, [=](float v) { return v * factor; });
    }
};

/// x = x · Φ(x) = 0.5·x·(1 + erf(x/√2)) in place: the exact GELU (PyTorch's nn.GELU() default).
struct gelu_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr float inv_sqrt2 = 0.70710678118654752f;
        const batch vhalf(0.5f), vone(1.f), vinv_sqrt2(inv_sqrt2);
        map_inplace<Arch>(
            x, n, [=](batch v) { return vhalf * v * (vone + xsimd::erf(v * vinv_sqrt2)); },
            [](float v) { return 0.5f * v * (1.f + std::erf(v * inv_sqrt2)); });
    }
};

/// x = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) in place: the tanh approximation (HF's gelu_new, GPT-2's
/// activation_function, and PyTorch's GELU(approximate="tanh")).
struct gelu_tanh_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr float c = 0.7978845608028654f, k = 0.044715f;
        const batch vhalf(0.5f), vone(1.f), vc(c), vk(k);
        map_inplace<Arch>(
            x, n, [=](batch v) { return vhalf * v * (vone + xsimd::tanh(vc * (v + vk * v * v * v))); },
            [](float v) { return 0.5f * v * (1.f + std::tanh(c * (v + k * v * v * v))); });
    }
};

/// x = cap·tanh(x / cap) in place: soft-capping of scores or logits (config.json's attn_logit_softcapping and
/// final_logit_softcapping, computed as HF does: divide, tanh, multiply).
struct softcap_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, float cap) const
    {
        const xsimd::batch<float, Arch> vcap(cap);
        map_inplace<Arch>(x, n, [=](auto v) { return xsimd::tanh(v / vcap) * vcap; }, [=](float v) { return std::tanh(v / cap) * cap; });
    }
};

/// x = max(x, 0) in place (nn.ReLU).
struct relu_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n) const
    {
        const xsimd::batch<float, Arch> zero(0.f);
        map_inplace<Arch>(x, n, [=](auto v) { return xsimd::max(v, zero); }, [](float v) { return v > 0.f ? v : 0.f; });
    }
};

/// x = x·y element by element, in place (a gated MLP's act(gate)·up).
struct mul_inplace {
    template <class Arch>
    void operator()(Arch, float* x, std::size_t n, const float* y) const
    {
        zip_inplace<Arch>(x, y, n, [](auto a, auto b) { return a * b; }, [](float a, float b) { return a * b; });
    }
};

}  // namespace kernels
}  // namespace attnscope
