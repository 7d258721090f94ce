// The softmax of a score row and its parts (row maximum, exp-and-sum), fused as one kernel for the
// materialising attention and used piecewise by the streaming one (online softmax).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "elementwise.hpp"  // scale_inplace
#include "exp.hpp"

namespace attnscope {
namespace kernels {

/// The largest of x[0..n): -inf for n == 0 or a row of -inf, NaN if any entry is NaN (so NaN scores propagate
/// through the softmax as IEEE arithmetic would, instead of being mistaken for a fully blocked row).
///
/// Four independent maxima, because a SIMD128 max is a compare and a select (SSE's maxps semantics) whose latency
/// would otherwise set the pace. NaN is not looked for lane by lane: a sum of the row rides along, and only when it
/// comes out NaN or infinite (a NaN, an infinity, or a huge row) does a scalar scan decide whether a NaN is there.
struct row_max {
    template <class Arch>
    float operator()(Arch, const float* x, std::size_t n) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        float result = -std::numeric_limits<float>::infinity();
        float sum = 0.f;
        std::size_t j = 0;
        if (n >= 4 * W) {
            batch m0 = batch::load_unaligned(x), m1 = batch::load_unaligned(x + W),
                  m2 = batch::load_unaligned(x + 2 * W), m3 = batch::load_unaligned(x + 3 * W);
            batch s0 = m0 + m1, s1 = m2 + m3;
            for (j = 4 * W; j + 4 * W <= n; j += 4 * W) {
                const batch v0 = batch::load_unaligned(x + j), v1 = batch::load_unaligned(x + j + W),
                            v2 = batch::load_unaligned(x + j + 2 * W), v3 = batch::load_unaligned(x + j + 3 * W);
                m0 = xsimd::max(m0, v0);
                m1 = xsimd::max(m1, v1);
                m2 = xsimd::max(m2, v2);
                m3 = xsimd::max(m3, v3);
                s0 += v0 + v1;
                s1 += v2 + v3;
            }
            alignas(64) float lanes[W];
            xsimd::max(xsimd::max(m0, m1), xsimd::max(m2, m3)).store_aligned(lanes);
            for (std::size_t l = 0; l < W; ++l) result = lanes[l] > result ? lanes[l] : result;
            sum = xsimd::hadd(s0 + s1);
        }
        for (; j < n; ++j) {
            sum += x[j];
            result = x[j] > result ? x[j] : result;
        }
        if (!std::isfinite(sum))  // rare: a NaN or an infinity somewhere (or a sum that overflowed)
            for (std::size_t i = 0; i < n; ++i)
                if (std::isnan(x[i])) return x[i];
        return result;
    }
};

/// x[j] = exp(x[j]·scale − shift) in place; returns the sum. Every x[j]·scale − shift must be ≤ 0 (shift is the
/// scaled row maximum), the domain of exp_nonpositive. Folding the scale in here saves the softmax a pass over the
/// row. (One vector a step: two were no faster in V8, and cost .wasm bytes. Never inlined: callers use it in several
/// places each, a whole row a call, and every inlined copy of the exp loop is a kilobyte of .wasm.)
struct exp_sum {
    template <class Arch>
    [[gnu::noinline]] float operator()(Arch, float* x, std::size_t n, float shift, float scale = 1.f) const
    {
        using batch = xsimd::batch<float, Arch>;
        constexpr std::size_t W = batch::size;
        const batch vshift(-shift), vscale(scale);
        batch vsum(0.f);
        std::size_t j = 0;
        for (; j + W <= n; j += W) {
            const batch e = exp_nonpositive(xsimd::fma(batch::load_unaligned(x + j), vscale, vshift));
            e.store_unaligned(x + j);
            vsum += e;
        }
        float sum = xsimd::hadd(vsum);
        for (; j < n; ++j) sum += (x[j] = std::exp(x[j] * scale - shift));
        return sum;
    }
};

/// Softmax of x[0..n)·scale in place (scale > 0) given the row's largest entry `largest` (unscaled), e.g. found
/// while the scores were computed. `largest` may have missed a NaN (SSE's max does not propagate it): a NaN entry
/// still makes the sum, and so every weight, NaN; only a row that looks fully blocked is searched for one.
struct softmax_given_max {
    template <class Arch>
    void operator()(Arch arch, float* x, std::size_t n, float scale, float largest) const
    {
        if (largest == -std::numeric_limits<float>::infinity()) {  // every key blocked: zeros, unless a NaN is there
            float fill = 0.f;
            for (std::size_t j = 0; j < n; ++j)
                if (std::isnan(x[j])) fill = x[j];
            std::fill(x, x + n, fill);
            return;
        }
        if (std::isnan(largest)) {  // softmax of a row holding NaN is NaN everywhere, as in PyTorch
            std::fill(x, x + n, largest);
            return;
        }
        scale_inplace{}(arch, x, n, 1.f / exp_sum{}(arch, x, n, largest * scale, scale));
    }
};

/// Softmax of x[0..n)·scale in place (scale > 0), subtracting the row maximum first so large logits cannot
/// overflow. A row whose entries are all -inf (every key blocked) becomes all zeros instead of 0/0 = NaN.
struct softmax_inplace {
    template <class Arch>
    void operator()(Arch arch, float* x, std::size_t n, float scale = 1.f) const
    {
        // max(x·scale) = max(x)·scale, as scale > 0
        softmax_given_max{}(arch, x, n, scale, row_max{}(arch, x, n));
    }
};

}  // namespace kernels
}  // namespace attnscope
