// The packed GEMM over 16-bit (BF16, F16) panels: against a double-precision reference that widens each bit
// pattern by its definition, and bit for bit against the same product over the panels widened to F32.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/gemm.hpp"
#include "kernels/half_panels.hpp"

namespace half_gemm_test {

using namespace attnscope;
using kernels::PanelType;

namespace {
using arch = xsimd::default_arch;
constexpr std::size_t W = xsimd::batch<float, arch>::size;
constexpr std::size_t NR = kernels::panel_width<arch>;
const std::vector<std::size_t> sizes = {1, W - 1 ? W - 1 : 1, W, W + 1, 2 * W, 2 * W + 3, 4 * W + 1, 13, 37};

// The value of a bit pattern from the formats' definitions, in double (not through the kernels' code).
double reference_value(std::uint16_t h, PanelType type)
{
    const double sign = h & 0x8000u ? -1.0 : 1.0;
    if (type == PanelType::bf16) {  // 1 sign, 8 exponent (bias 127), 7 mantissa bits
        const int e = (h >> 7) & 0xff, m = h & 0x7f;
        if (e == 0xff) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
        return e == 0 ? sign * std::ldexp(m, -126 - 7) : sign * std::ldexp(128 + m, e - 127 - 7);
    }
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;  // 1 sign, 5 exponent (bias 15), 10 mantissa bits
    if (e == 0x1f) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
    return e == 0 ? sign * std::ldexp(m, -14 - 10) : sign * std::ldexp(1024 + m, e - 15 - 10);
}

// Finite patterns: random ones, and every edge the widening treats apart (signed zeros, the smallest and largest
// subnormals, the smallest normal, the largest finite value), often enough that each tile's lanes see them.
std::vector<std::uint16_t> finite_patterns(std::size_t n, PanelType type, std::uint32_t seed)
{
    const std::vector<std::uint16_t> edges = type == PanelType::f16
        ? std::vector<std::uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00}
        : std::vector<std::uint16_t>{0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x3f80};  // BF16's largest: the all-patterns test
    std::mt19937 gen(seed);
    std::vector<std::uint16_t> out(n);
    for (std::uint16_t& h : out) {
        const std::uint32_t r = gen();
        if (r % 4 == 0) h = edges[(r >> 8) % edges.size()];
        // bf16 of a random value in about ±4; f16 with any finite exponent
        else if (type == PanelType::bf16) h = std::uint16_t(((r >> 8) & 0x8000u) | (0x3c00u + (r >> 12) % 0x0500u));
        else if (((h = std::uint16_t(r >> 8)) & 0x7c00u) == 0x7c00u) h = std::uint16_t(h ^ 0x4000u);  // no inf or NaN
    }
    return out;
}

std::vector<float> random_a(std::size_t n, std::uint32_t seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(gen);
    return v;
}

template <std::size_t MR, PanelType P>
void gemm16(std::size_t M, std::size_t N, std::size_t K, const float* A, const std::uint16_t* packed, float* C, const float* bias)
{
    kernels::gemm_packed_tiles<MR, P>{}(arch{}, M, N, K, A, K, packed, K * NR, C, N, bias, false);
}

template <PanelType P>
void check_type()
{
    for (std::size_t tile : {std::size_t(4), std::size_t(6)})
        for (std::size_t M : std::initializer_list<std::size_t>{1, 3, 4, 5, 7, 13})
            for (std::size_t N : sizes)
                for (std::size_t K : sizes)
                    for (bool with_bias : {false, true}) {
                        CAPTURE(tile, M, N, K, with_bias);
                        const auto A = random_a(M * K, unsigned(M * 1000 + N * 10 + K));
                        const auto B = finite_patterns(K * N, P, unsigned(N * 100 + K));  // row-major K × N
                        const auto bias = random_a(N, 7);
                        const float* b = with_bias ? bias.data() : nullptr;
                        std::vector<std::uint16_t> packed(kernels::packed_floats<arch>(K, N), 0xffff);
                        kernels::pack_half_panels<arch>(K, N, B.data(), N, 1, packed.data());
                        // The same matrix widened to F32 panels, by the scalar widening.
                        std::vector<float> wide(K * N), wide_packed(packed.size());
                        for (std::size_t i = 0; i < B.size(); ++i) wide[i] = kernels::half_to_f32(B[i], P);
                        kernels::pack_b{}(arch{}, K, N, wide.data(), N, wide_packed.data());
                        std::vector<float> C(M * N, -777.f), C32(M * N, -555.f);
                        if (tile == 6) {
                            gemm16<6, P>(M, N, K, A.data(), packed.data(), C.data(), b);
                            kernels::gemm_packed_tiles<6>{}(arch{}, M, N, K, A.data(), K, wide_packed.data(), K * NR, C32.data(), N, b, false);
                        } else {
                            gemm16<4, P>(M, N, K, A.data(), packed.data(), C.data(), b);
                            kernels::gemm_packed_tiles<4>{}(arch{}, M, N, K, A.data(), K, wide_packed.data(), K * NR, C32.data(), N, b, false);
                        }
                        // Bit for bit the F32 product (widening is exact), signed zeros included.
                        REQUIRE(std::memcmp(C.data(), C32.data(), C.size() * sizeof(float)) == 0);
                        // Against double: float accumulation of K terms errs by at most about K·2^-24 of Σ|a·b|, plus
                        // half of F32's smallest subnormal per rounding where a product of subnormals underflows.
                        for (std::size_t i = 0; i < M; ++i)
                            for (std::size_t j = 0; j < N; ++j) {
                                double exact = b ? b[j] : 0.0, magnitude = std::fabs(exact);
                                for (std::size_t k = 0; k < K; ++k) {
                                    const double term = double(A[i * K + k]) * reference_value(B[k * N + j], P);
                                    exact += term;
                                    magnitude += std::fabs(term);
                                }
                                REQUIRE(std::fabs(double(C[i * N + j]) - exact) <= double(K + 1) * (0x1p-23 * magnitude + 0x1p-149));
                            }
                    }
}
}  // namespace

TEST_CASE("BF16 panels: the double reference, and the bits of the product widened at load", "[kernels][gemm]") { check_type<PanelType::bf16>(); }

TEST_CASE("F16 panels: subnormals, signed zeros, the largest finite value; the bits of the product widened at load",
          "[kernels][gemm]")
{
    check_type<PanelType::f16>();
}

TEST_CASE("16-bit panels widen every pattern as the scalar widening and the formats' definitions do", "[kernels][gemm]")
{
    // Every one of the 65,536 patterns (infinities and NaNs included, which allowNonFinite lets in), as B of a
    // 1 × 65,536 × 1 product with A = 1: C is B widened.
    for (PanelType P : {PanelType::bf16, PanelType::f16}) {
        const std::size_t N = 65536;
        std::vector<std::uint16_t> B(N), packed(kernels::packed_floats<arch>(1, N));
        for (std::size_t i = 0; i < N; ++i) B[i] = std::uint16_t(i);
        kernels::pack_half_panels<arch>(1, N, B.data(), N, 1, packed.data());
        std::vector<float> C(N);
        const float one = 1.f;
        if (P == PanelType::bf16) kernels::gemm_packed_bf16{}(arch{}, 1, N, 1, &one, 1, packed.data(), NR, C.data(), N, nullptr, false);
        else kernels::gemm_packed_f16{}(arch{}, 1, N, 1, &one, 1, packed.data(), NR, C.data(), N, nullptr, false);
        for (std::size_t i = 0; i < N; ++i) {
            CAPTURE(int(P), i);
            const double expected = reference_value(B[i], P);
            if (std::isnan(expected)) {
                REQUIRE(std::isnan(C[i]));
                continue;
            }
            // 1·b + 0 keeps every value (a -0 plus the +0 accumulator start is +0, as F32 panels give too)
            const float scalar = kernels::half_to_f32(B[i], P);
            REQUIRE(double(C[i]) == (expected == 0.0 ? 0.0 : expected));
            REQUIRE((expected == 0.0 || scalar == C[i]));
        }
    }
}

}  // namespace half_gemm_test
