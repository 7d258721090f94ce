// exp of x ≤ 0, vectorised for the softmax: the exp pass is where the attention spends its time after the two
// products, and its inputs (score − row maximum) are never positive, which lets it skip overflow handling.
#pragma once

#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// e^x for x ≤ 0 (and NaN) in every lane: within 3 ulp of the exact value for x ≥ -87.33 (where e^x is a normal
/// float); 0 below, so -inf gives 0 and the subnormal results of x in (-103.97, -87.33) are flushed to 0 (an
/// absolute error under 1.2e-38); NaN stays NaN. Small positive x (a rounding error past the maximum) are fine up
/// to 88; above that the result is garbage, as the overflow to inf is not handled.
///
/// Why not xsimd::exp: it also handles overflow and rounds with nearbyint + to_int + ldexp, about 30 SIMD128
/// operations; this is about 20. The range reduction is the classic one: n = round(x·log2 e) by adding a magic
/// number (the rounded n lands in the low mantissa bits, with the exponent bias already added), r = x − n·ln 2 in
/// two steps (hi + lo, so r is exact enough), e^r by a degree-5 polynomial on |r| ≤ ln2/2, times 2^n made by
/// shifting those mantissa bits into the exponent field.
template <class Arch>
inline xsimd::batch<float, Arch> exp_nonpositive(const xsimd::batch<float, Arch>& x)
{
    using batch = xsimd::batch<float, Arch>;
    using ibatch = xsimd::batch<std::int32_t, Arch>;
    // 1.5·2^23 + 127: adding it rounds to an integer (ties to even) and leaves n + 127 in the low bits.
    const batch magic(12583039.f);
    const batch log2e(1.44269504088896341f);
    const batch minus_ln2_hi(-0.693145751953125f);        // ln 2's leading bits: n·ln2_hi is exact for |n| < 2^9
    const batch minus_ln2_lo(-1.42860682030941723212e-6f);  // ln 2 − ln2_hi
    // Below this e^x is no longer a normal float, and 2^n would need an exponent field under 1.
    const batch normal_cutoff(-87.33654475f);
    // e^r ≈ 1 + r·(c1 + r·(c2 + r·(c3 + r·(c4 + r·c5)))) on |r| ≤ ln2/2, fitted for the least maximum relative
    // error (9.5e-8 with these float coefficients in exact arithmetic) by tests/reference/exp_polynomial_fit.py.
    const batch c1(0.9999997019767761f), c2(0.4999915063381195f), c3(0.1666763573884964f),
        c4(0.04189793020486832f), c5(0.008290315046906471f), one(1.f);

    batch n = xsimd::fma(x, log2e, magic);
    const batch biased = n;  // its bits: n + 127 in the low mantissa bits
    n -= magic;
    batch r = xsimd::fma(n, minus_ln2_hi, x);
    r = xsimd::fma(n, minus_ln2_lo, r);
    batch p = xsimd::fma(c5, r, c4);
    p = xsimd::fma(p, r, c3);
    p = xsimd::fma(p, r, c2);
    p = xsimd::fma(p, r, c1);
    p = xsimd::fma(p, r, one);
    const batch two_to_n = xsimd::bitwise_cast<batch>(xsimd::bitwise_cast<ibatch>(biased) << 23);
    // -inf and NaN go through the arithmetic as NaN; the compare is false for NaN, so a NaN input stays NaN.
    return xsimd::select(x < normal_cutoff, batch(0.f), p * two_to_n);
}

}  // namespace kernels
}  // namespace attnscope
