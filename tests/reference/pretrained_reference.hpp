// Scalar double-precision references of the pretrained models' kernels (RMSNorm, RoPE, SwiGLU, GELU-tanh, F16/BF16
// decoding), straight from their definitions, for the Catch2 tests and the fuzzer. Production code never includes it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace attnscope {
namespace reference {

/// x / sqrt(mean(x²) + eps) · gamma.
inline std::vector<double> rms_norm(const float* x, std::size_t n, const float* gamma, double eps)
{
    double sq = 0;
    for (std::size_t j = 0; j < n; ++j) sq += double(x[j]) * x[j];
    const double r = 1.0 / std::sqrt(sq / double(n) + eps);
    std::vector<double> y(n);
    for (std::size_t j = 0; j < n; ++j) y[j] = x[j] * r * gamma[j];
    return y;
}

/// HF's apply_rotary_pos_emb on one head of 2·half features: x·cos + rotate_half(x)·sin, rotate_half = cat(−x2, x1).
inline std::vector<double> rope(const float* x, std::size_t half, const float* cos, const float* sin)
{
    std::vector<double> y(2 * half);
    for (std::size_t i = 0; i < 2 * half; ++i) {
        const double rotated = i < half ? -double(x[i + half]) : double(x[i - half]);
        y[i] = double(x[i]) * cos[i % half] + rotated * sin[i % half];
    }
    return y;
}

/// silu(g)·u = g / (1 + e^−g) · u.
inline double silu_mul(double g, double u) { return g / (1.0 + std::exp(-g)) * u; }

/// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
inline double gelu_tanh(double x)
{
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

/// The value of an IEEE binary16 bit pattern (NaN for every NaN pattern).
inline double f16_value(std::uint16_t h)
{
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const int e = (h >> 10) & 31, m = h & 1023;
    if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
    if (e == 0) return sign * std::ldexp(double(m), -24);  // subnormal: m · 2^-24
    return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

/// The value of a bfloat16 bit pattern: 1 sign, 8 exponent and 7 mantissa bits (F32's top half).
inline double bf16_value(std::uint16_t h)
{
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const int e = (h >> 7) & 255, m = h & 127;
    if (e == 255) return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
    if (e == 0) return sign * std::ldexp(double(m), -133);  // subnormal: m · 2^-126 / 128
    return sign * std::ldexp(1.0 + m / 128.0, e - 127);
}

}  // namespace reference
}  // namespace attnscope
