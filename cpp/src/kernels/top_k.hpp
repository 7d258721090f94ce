// A row of logits read once for its k largest entries and their softmax probabilities: the logit lens's per-row
// step, (layers + 1) × T rows of a whole vocabulary each, where a sort or a full softmax would cost more than the
// head's product that made the row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "exp.hpp"

namespace attnscope {
namespace kernels {

/// Offers x[v] for v in [from, to) to the `kept` (≤ k) largest so far, ids[0..kept) sorted largest first: an entry
/// enters only when it is larger than the smallest kept, so a tie keeps the lower index first; NaN never enters
/// once k are kept. Insertion into a sorted list: small code, and k ≤ 100.
inline void offer_to_top_k(const float* x, std::size_t from, std::size_t to, std::size_t k, std::int32_t* ids, std::size_t& kept)
{
    for (std::size_t v = from; v < to; ++v) {
        if (kept == k && !(x[v] > x[ids[k - 1]])) continue;
        std::size_t at = kept < k ? kept++ : k - 1;
        for (; at > 0 && x[v] > x[ids[at - 1]]; --at) ids[at] = ids[at - 1];
        ids[at] = std::int32_t(v);
    }
}

/// ids[0..k) = the indices of the k largest of x[0..n) (1 ≤ k ≤ n), largest first, a tie keeping the lower index
/// first; probabilities[0..k) = their softmax probabilities e^(x_i − max) / Σ_j e^(x_j − max).
///
/// One pass over blocks of 64 vectors (small enough to stay in L1 for a second look). A block's maximum says whether
/// any of its entries could enter the k kept: after the first blocks almost none can, so the scalar insertion sees a
/// few hundred entries of a 50,257-token row. The maximum also raises the running one, and the sum so far is scaled
/// by e^(old − new) (the online softmax); then the block's e^(x − max) are summed in four float vectors (16 terms a
/// lane) and added to a double, so the sum's rounding stays near float's epsilon whatever n is.
///
/// A row holding NaN has a NaN sum and so NaN probabilities, as the softmax would. Its ids are then those of a plain
/// scan, as a block maximum computed next to a NaN may be too small (SSE's max is not NaN-aware).
struct top_k_softmax {
    template <class Arch>
    void operator()(Arch, const float* x, std::size_t n, std::size_t k, std::int32_t* ids, float* probabilities) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size, block = 64 * W;
        std::size_t kept = 0;
        offer_to_top_k(x, 0, k, k, ids, kept);
        float top = -std::numeric_limits<float>::infinity();
        double sum = 0;
        alignas(64) float lanes[W];
        for (std::size_t b = 0; b < n; b += block) {
            const float* p = x + b;
            const std::size_t m = std::min(block, n - b), whole = m / (4 * W) * (4 * W);
            float largest = -std::numeric_limits<float>::infinity();
            if (whole) {
                batch m0 = batch::load_unaligned(p), m1 = batch::load_unaligned(p + W), m2 = batch::load_unaligned(p + 2 * W),
                      m3 = batch::load_unaligned(p + 3 * W);
                for (std::size_t j = 4 * W; j < whole; j += 4 * W) {
                    m0 = xsimd::max(m0, batch::load_unaligned(p + j));
                    m1 = xsimd::max(m1, batch::load_unaligned(p + j + W));
                    m2 = xsimd::max(m2, batch::load_unaligned(p + j + 2 * W));
                    m3 = xsimd::max(m3, batch::load_unaligned(p + j + 3 * W));
                }
                xsimd::max(xsimd::max(m0, m1), xsimd::max(m2, m3)).store_aligned(lanes);
                for (std::size_t l = 0; l < W; ++l) largest = std::max(largest, lanes[l]);
            }
            for (std::size_t j = whole; j < m; ++j) largest = std::max(largest, p[j]);
            if (b + m > k && !(largest <= x[ids[k - 1]])) offer_to_top_k(x, std::max(b, k), b + m, k, ids, kept);
            if (largest > top) {
                sum *= std::exp(double(top) - double(largest));  // 0 · e^-inf = 0 before the first block
                top = largest;
            }
            const batch shift(-top);
            batch s0(0.f), s1(0.f), s2(0.f), s3(0.f);
            for (std::size_t j = 0; j < whole; j += 4 * W) {
                s0 += exp_nonpositive(batch::load_unaligned(p + j) + shift);
                s1 += exp_nonpositive(batch::load_unaligned(p + j + W) + shift);
                s2 += exp_nonpositive(batch::load_unaligned(p + j + 2 * W) + shift);
                s3 += exp_nonpositive(batch::load_unaligned(p + j + 3 * W) + shift);
            }
            float tail = 0.f;
            for (std::size_t j = whole; j < m; ++j) tail += std::exp(p[j] - top);
            sum += double(xsimd::hadd((s0 + s1) + (s2 + s3))) + double(tail);
        }
        if (std::isnan(sum)) {
            kept = 0;
            offer_to_top_k(x, 0, n, k, ids, kept);
        }
        for (std::size_t i = 0; i < k; ++i) probabilities[i] = float(std::exp(double(x[ids[i]]) - double(top)) / sum);
    }
};

}  // namespace kernels
}  // namespace attnscope
