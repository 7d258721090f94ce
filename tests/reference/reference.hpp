// Plain scalar double-precision reference of every kernel and of whole attention, shared by the Catch2 tests and
// the fuzzer (production code never includes it). Written for clarity, not speed: loops straight from the
// definitions, no SIMD, no workspace reuse. It sees only the public tensor and mask types.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {
namespace reference {

/// C[M×N] = A[M×K]·B + bias[N], in double, with B's element (k, j) at B[k·b_row + j·b_col]: both layouts of the
/// second factor, [K, N] (gemm) and PyTorch's [out, in] weights (linear), are this one loop.
inline std::vector<double> strided_product(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda,
                                           const float* B, std::size_t b_row, std::size_t b_col, const float* bias)
{
    std::vector<double> C(M * N);
    for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
            double sum = bias ? bias[j] : 0.0;
            for (std::size_t k = 0; k < K; ++k) sum += double(A[i * lda + k]) * double(B[k * b_row + j * b_col]);
            C[i * N + j] = sum;
        }
    return C;
}

/// C[M×N] = A[M×K]·B[K×N] + bias[N], in double.
inline std::vector<double> gemm(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda,
                                const float* B, std::size_t ldb, const float* bias)
{
    return strided_product(M, N, K, A, lda, B, ldb, 1, bias);
}

/// y[rows×out] = x[rows×in]·Wᵀ + b, in double (W is PyTorch's [out, in]).
inline std::vector<double> linear(const float* x, std::size_t rows, std::size_t in, const float* w, std::size_t out,
                                  const float* b)
{
    return strided_product(rows, out, in, x, in, w, 1, in, b);
}

/// Softmax of a row in double; a row that is entirely -inf gives zeros.
inline void softmax(std::vector<double>& row)
{
    double row_max = -std::numeric_limits<double>::infinity();
    for (double x : row) row_max = std::max(row_max, x);
    if (row_max == -std::numeric_limits<double>::infinity()) {
        for (double& x : row) x = 0.0;
        return;
    }
    double sum = 0.0;
    for (double& x : row) sum += (x = std::exp(x - row_max));
    for (double& x : row) x /= sum;
}

/// The value a mask adds to one score: -inf where a boolean mask blocks, the float where additive.
inline double mask_term(const MaskView& mask, std::size_t index)
{
    if (mask.empty()) return 0.0;
    if (mask.kind == MaskKind::boolean)
        return mask.blocked[index] ? -std::numeric_limits<double>::infinity() : 0.0;
    return mask.added[index];
}

struct Result {
    std::vector<double> output;
    std::vector<double> weights;
};

/// Scaled dot-product attention over `count` independent problems laid out back to back.
/// The mask is [Lq, Lk] when mask_broadcast, else [count, Lq, Lk].
inline Result sdpa(std::size_t count, std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, const float* q,
                   const float* k, const float* v, const MaskView& mask, bool mask_broadcast, bool causal, double scale)
{
    Result r;
    r.output.assign(count * Lq * Dv, 0.0);
    r.weights.assign(count * Lq * Lk, 0.0);
    for (std::size_t c = 0; c < count; ++c)
        for (std::size_t i = 0; i < Lq; ++i) {
            std::vector<double> row(Lk);
            for (std::size_t j = 0; j < Lk; ++j) {
                double dot = 0.0;
                for (std::size_t d = 0; d < D; ++d) dot += double(q[(c * Lq + i) * D + d]) * double(k[(c * Lk + j) * D + d]);
                const std::size_t mask_index = (mask_broadcast ? 0 : c * Lq * Lk) + i * Lk + j;
                row[j] = dot * scale + mask_term(mask, mask_index);
                if (causal && j > i) row[j] = -std::numeric_limits<double>::infinity();
            }
            softmax(row);
            for (std::size_t j = 0; j < Lk; ++j) {
                r.weights[(c * Lq + i) * Lk + j] = row[j];
                for (std::size_t d = 0; d < Dv; ++d) r.output[(c * Lq + i) * Dv + d] += row[j] * double(v[(c * Lk + j) * Dv + d]);
            }
        }
    return r;
}

/// Multi-head attention straight from the definition, parameters under PyTorch's state-dict names.
/// Inputs batched: query [B, Lq, E], key [B, Lk, kdim], value [B, Lk, vdim]. Weights come back per head
/// [B, H, Lq, Lk] or averaged [B, Lq, Lk] as options.average_weights says. `Options` is anything with
/// key_padding_mask, attn_mask, causal and average_weights (MultiHeadAttention's ForwardOptions), so the reference
/// does not depend on the class it checks.
template <class Options>
Result multihead_attention(const std::map<std::string, Tensor>& params, std::size_t E, std::size_t H,
                                  std::size_t kdim, std::size_t vdim, std::size_t B, std::size_t Lq, std::size_t Lk,
                                  const float* query, const float* key, const float* value,
                                  const Options& options)
{
    const std::size_t hd = E / H;
    const bool packed = kdim == E && vdim == E;
    auto param = [&](const std::string& name) -> const float* {
        auto it = params.find(name);
        return it == params.end() ? nullptr : it->second.data.data();
    };
    const float* wq = packed ? param("in_proj_weight") : param("q_proj_weight");
    const float* wk = packed ? param("in_proj_weight") + E * E : param("k_proj_weight");
    const float* wv = packed ? param("in_proj_weight") + 2 * E * E : param("v_proj_weight");
    const float* bin = param("in_proj_bias");
    const float* wo = param("out_proj.weight");
    const float* bo = param("out_proj.bias");

    const auto Q = linear(query, B * Lq, E, wq, E, bin);
    const auto K = linear(key, B * Lk, kdim, wk, E, bin ? bin + E : nullptr);
    const auto V = linear(value, B * Lk, vdim, wv, E, bin ? bin + 2 * E : nullptr);

    const double scale = 1.0 / std::sqrt(double(hd));
    const double neg_inf = -std::numeric_limits<double>::infinity();
    std::vector<double> concat(B * Lq * E, 0.0);
    std::vector<double> weights(B * H * Lq * Lk, 0.0);
    const bool mask_3d = options.attn_mask.shape.size() == 3;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < Lq; ++i) {
                std::vector<double> row(Lk);
                for (std::size_t j = 0; j < Lk; ++j) {
                    double dot = 0.0;
                    for (std::size_t d = 0; d < hd; ++d)
                        dot += Q[(b * Lq + i) * E + h * hd + d] * K[(b * Lk + j) * E + h * hd + d];
                    double s = dot * scale;
                    s += mask_term(options.attn_mask, (mask_3d ? (b * H + h) * Lq * Lk : 0) + i * Lk + j);
                    s += mask_term(options.key_padding_mask, b * Lk + j);
                    if (options.causal && j > i) s = neg_inf;
                    row[j] = s;
                }
                softmax(row);
                for (std::size_t j = 0; j < Lk; ++j) {
                    weights[((b * H + h) * Lq + i) * Lk + j] = row[j];
                    for (std::size_t d = 0; d < hd; ++d)
                        concat[(b * Lq + i) * E + h * hd + d] += row[j] * V[(b * Lk + j) * E + h * hd + d];
                }
            }

    // An ablated head's slice of the out-projection input is zero.
    if (options.ablate_heads)
        for (std::size_t n = 0; n < B * Lq; ++n)
            for (std::size_t h = 0; h < H; ++h)
                if (options.ablate_heads[h])
                    for (std::size_t d = 0; d < hd; ++d) concat[n * E + h * hd + d] = 0.0;

    Result r;
    r.output.assign(B * Lq * E, 0.0);
    for (std::size_t n = 0; n < B * Lq; ++n)
        for (std::size_t o = 0; o < E; ++o) {
            double s = bo ? bo[o] : 0.0;
            for (std::size_t i = 0; i < E; ++i) s += concat[n * E + i] * double(wo[o * E + i]);
            r.output[n * E + o] = s;
        }
    if (options.average_weights) {
        r.weights.assign(B * Lq * Lk, 0.0);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t x = 0; x < Lq * Lk; ++x) r.weights[b * Lq * Lk + x] += weights[(b * H + h) * Lq * Lk + x] / double(H);
    } else {
        r.weights = std::move(weights);
    }
    return r;
}

}  // namespace reference
}  // namespace attnscope
