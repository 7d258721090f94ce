// The absolute-value reference: the same sums as reference.hpp taken over |terms|. A float result can only be
// trusted to about FLT_EPSILON of what was summed, not of the (possibly cancelled) result, so the fuzzer measures
// its tolerance against these magnitudes. Double precision, loops straight from the definitions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace attnscope {
namespace reference {

/// max over rows o of Σ_i |W[o, i]|·input_scale + |bias[o]|: a bound on |W·x + b| for inputs within ±input_scale.
inline double largest_row_abs_sum(const float* w, std::size_t rows, std::size_t cols, std::size_t row_stride,
                                  double input_scale, const float* bias)
{
    double m = 0;
    for (std::size_t o = 0; o < rows; ++o) {
        double s = 0;
        for (std::size_t i = 0; i < cols; ++i) s += std::fabs(double(w[o * row_stride + i]));
        s = s * input_scale + (bias ? std::fabs(double(bias[o])) : 0.0);
        m = std::max(m, s);
    }
    return m;
}

/// y[rows×out] = x·Wᵀ + b in double (W is PyTorch's [out, in]); `magnitude` becomes the largest Σ_i |x·w| + |b|.
inline std::vector<double> linear_with_magnitude(const float* x, std::size_t rows, std::size_t in_features,
                                                 const float* w, const float* b, std::size_t out_features,
                                                 double& magnitude)
{
    magnitude = 0;
    std::vector<double> y(rows * out_features);
    for (std::size_t j = 0; j < rows; ++j)
        for (std::size_t o = 0; o < out_features; ++o) {
            double sum = b ? b[o] : 0.0, abs_sum = b ? std::fabs(double(b[o])) : 0.0;
            for (std::size_t i = 0; i < in_features; ++i) {
                sum += double(x[j * in_features + i]) * double(w[o * in_features + i]);
                abs_sum += std::fabs(double(x[j * in_features + i]) * double(w[o * in_features + i]));
            }
            y[j * out_features + o] = sum;
            magnitude = std::max(magnitude, abs_sum);
        }
    return y;
}

/// The largest multi-head attention output computed on absolute values: |V| = |value|·|Wv|ᵀ + |bv|, each head
/// Σ_j w·|V|, then |concat|·|Wo|ᵀ + |bo|. `weights` are the reference's per-head weights [B, H, Lq, Lk];
/// wv is [E, vdim], wo [E, E]; biases may be null.
inline double mha_output_magnitude(std::size_t B, std::size_t H, std::size_t Lq, std::size_t Lk, std::size_t E,
                                   std::size_t vdim, const float* value, const float* wv, const float* bv,
                                   const float* wo, const float* bo, const std::vector<double>& weights)
{
    double output_magnitude = 0;
    std::vector<double> v_abs(B * Lk * E), concat_abs(E);
    for (std::size_t n = 0; n < B * Lk; ++n)
        for (std::size_t c = 0; c < E; ++c) {
            double sum = bv ? std::fabs(double(bv[c])) : 0.0;
            for (std::size_t i = 0; i < vdim; ++i) sum += std::fabs(double(value[n * vdim + i])) * std::fabs(double(wv[c * vdim + i]));
            v_abs[n * E + c] = sum;
        }
    const std::size_t hd = E / H;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < Lq; ++i) {
            for (std::size_t c = 0; c < E; ++c) {
                double sum = 0;
                for (std::size_t j = 0; j < Lk; ++j) sum += weights[((b * H + c / hd) * Lq + i) * Lk + j] * v_abs[(b * Lk + j) * E + c];
                concat_abs[c] = sum;
            }
            for (std::size_t o = 0; o < E; ++o) {
                double sum = bo ? std::fabs(double(bo[o])) : 0.0;
                for (std::size_t c = 0; c < E; ++c) sum += concat_abs[c] * std::fabs(double(wo[o * E + c]));
                output_magnitude = std::max(output_magnitude, sum);
            }
        }
    return output_magnitude;
}

/// The largest scaled dot-product attention output on absolute values, Σ_j w·|v|, over `count` problems laid out
/// back to back; `weights` are the reference's [count, Lq, Lk], v is [count, Lk, Dv].
inline double sdpa_output_magnitude(std::size_t count, std::size_t Lq, std::size_t Lk, std::size_t Dv,
                                    const std::vector<double>& weights, const float* v)
{
    double output_magnitude = 0;
    for (std::size_t c = 0; c < count; ++c)
        for (std::size_t i = 0; i < Lq; ++i)
            for (std::size_t d = 0; d < Dv; ++d) {
                double sum = 0;
                for (std::size_t j = 0; j < Lk; ++j) sum += weights[(c * Lq + i) * Lk + j] * std::fabs(double(v[(c * Lk + j) * Dv + d]));
                output_magnitude = std::max(output_magnitude, sum);
            }
    return output_magnitude;
}

}  // namespace reference
}  // namespace attnscope
