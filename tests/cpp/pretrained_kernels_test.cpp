// The pretrained models' kernels (RMSNorm, RoPE, SwiGLU, GELU-tanh, F16/BF16 widening) against the double references
// of tests/reference/pretrained_reference.hpp at sizes around the SIMD width.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "kernels/elementwise.hpp"
#include "kernels/rms_norm.hpp"
#include "kernels/rope.hpp"
#include "kernels/swiglu.hpp"
#include "kernels/widen.hpp"
#include "reference/pretrained_reference.hpp"
#include "test_utils.hpp"

namespace pretrained_kernels_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using attnscope_test::random_floats;

namespace {
using arch = xsimd::default_arch;
// Below, at and past one and two SIMD vectors (4 lanes for SSE/SIMD128, 8 for AVX2), and odd sizes past them.
const std::size_t sizes[] = {1, 3, 4, 5, 7, 8, 9, 16, 17, 33};

std::uint32_t bits_of(float f)
{
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

// The bits of a float a function returned, as the ABI can keep them: 32-bit x86 returns a float in an x87 register,
// and loading a signalling NaN there quiets it (sets bit 22), unless the call was inlined. Both sides of a
// comparison go through it. x86-64 and WebAssembly return the bits as they are.
std::uint32_t returned_bits(std::uint32_t bits)
{
#if defined(__i386__)
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) return bits | 0x00400000u;
#endif
    return bits;
}
}  // namespace

TEST_CASE("rms_norm matches the double reference", "[pretrained][kernels]")
{
    for (std::size_t n : sizes) {
        CAPTURE(n);
        const auto x = random_floats(n, 1 + unsigned(n), -3.f, 3.f), gamma = random_floats(n, 100 + unsigned(n));
        std::vector<float> y(n);
        kernels::rms_norm{}(arch{}, x.data(), n, gamma.data(), 1e-6f, y.data());
        CHECK(max_relative_error(y, reference::rms_norm(x.data(), n, gamma.data(), 1e-6)) < 1e-6);
        std::vector<float> in_place = x;  // y may be x
        kernels::rms_norm{}(arch{}, in_place.data(), n, gamma.data(), 1e-6f, in_place.data());
        CHECK(in_place == y);
    }
    // eps matters when the row is tiny: zeros give zeros, not NaN.
    std::vector<float> zeros(9, 0.f), gamma(9, 1.f), y(9);
    kernels::rms_norm{}(arch{}, zeros.data(), 9, gamma.data(), 1e-6f, y.data());
    CHECK(y == zeros);
}

TEST_CASE("rope_rotate_half matches HF's rotate_half formula", "[pretrained][kernels]")
{
    for (std::size_t half : sizes) {
        CAPTURE(half);
        const auto x = random_floats(2 * half, 7 + unsigned(half), -2.f, 2.f);
        std::vector<float> cos(half), sin(half);
        for (std::size_t i = 0; i < half; ++i) {  // a real position's angles: 5 · 10000^(-2i/D)
            const double angle = 5.0 * std::pow(10000.0, -double(2 * i) / double(2 * half));
            cos[i] = float(std::cos(angle));
            sin[i] = float(std::sin(angle));
        }
        std::vector<float> y = x;
        kernels::rope_rotate_half{}(arch{}, y.data(), half, cos.data(), sin.data());
        CHECK(max_relative_error(y, reference::rope(x.data(), half, cos.data(), sin.data())) < 1e-6);
    }
}

TEST_CASE("silu_mul and gelu_tanh match the double reference", "[pretrained][kernels]")
{
    for (std::size_t n : sizes) {
        CAPTURE(n);
        const auto g = random_floats(n, 3 + unsigned(n), -8.f, 8.f), u = random_floats(n, 50 + unsigned(n), -2.f, 2.f);
        std::vector<float> out = g;
        kernels::silu_mul{}(arch{}, out.data(), u.data(), n);
        std::vector<double> expected(n), gelu_expected(n);
        for (std::size_t j = 0; j < n; ++j) {
            expected[j] = reference::silu_mul(g[j], u[j]);
            gelu_expected[j] = reference::gelu_tanh(g[j]);
        }
        CHECK(max_relative_error(out, expected) < 1e-6);
        std::vector<float> gelu = g;
        kernels::gelu_tanh_inplace{}(arch{}, gelu.data(), n);
        CHECK(max_relative_error(gelu, gelu_expected) < 1e-6);
    }
}

TEST_CASE("F16 and BF16 widen exactly: every bit pattern, subnormals, infinities and NaN", "[pretrained][kernels]")
{
    // All 65,536 patterns of each, as little-endian bytes starting at an odd address (a chunk starts anywhere).
    std::vector<std::uint8_t> bytes(2 * 65536 + 1);
    for (std::uint32_t h = 0; h < 65536; ++h) {
        bytes[1 + 2 * h] = std::uint8_t(h & 0xff);
        bytes[2 + 2 * h] = std::uint8_t(h >> 8);
    }
    for (bool bf16 : {false, true}) {
        CAPTURE(bf16);
        std::vector<float> out(65536);
        kernels::widen_half{}(arch{}, bytes.data() + 1, 65536, bf16, out.data());
        std::size_t wrong = 0;
        for (std::uint32_t h = 0; h < 65536; ++h) {
            const double expected = bf16 ? reference::bf16_value(std::uint16_t(h)) : reference::f16_value(std::uint16_t(h));
            const bool ok = std::isnan(expected) ? std::isnan(out[h]) && (bits_of(out[h]) >> 31) == (h >> 15)
                                                 : double(out[h]) == expected && std::signbit(out[h]) == bool(h & 0x8000);
            wrong += ok ? 0 : 1;
            // The scalar path (the SIMD loop's tail) agrees bit for bit.
            const float scalar = bf16 ? kernels::bf16_to_f32(std::uint16_t(h)) : kernels::f16_to_f32(std::uint16_t(h));
            if (returned_bits(bits_of(scalar)) != returned_bits(bits_of(out[h]))) ++wrong;
        }
        CHECK(wrong == 0);
        // Short runs take the tail: each size must give what the long run gave.
        for (std::size_t n : sizes) {
            CAPTURE(n);
            std::vector<float> part(n);
            kernels::widen_half{}(arch{}, bytes.data() + 1 + 2 * 0x3bf0, n, bf16, part.data());
            CHECK(std::memcmp(part.data(), out.data() + 0x3bf0, n * 4) == 0);
        }
    }
    // BF16 is F32's top half: widening and truncating back is the identity, and a value halfway between two BF16s
    // (the case rounding would decide) is never produced.
    for (std::uint32_t h = 0; h < 65536; ++h) {
        const float f = kernels::bf16_to_f32(std::uint16_t(h));
        REQUIRE(returned_bits(bits_of(f)) >> 16 == returned_bits(h << 16) >> 16);
        REQUIRE((bits_of(f) & 0xffff) == 0);
    }
    CHECK(kernels::f16_to_f32(0x0001) == std::ldexp(1.f, -24));   // the smallest subnormal
    CHECK(kernels::f16_to_f32(0x03ff) == std::ldexp(1023.f, -24)); // the largest subnormal
    CHECK(kernels::f16_to_f32(0x7bff) == 65504.f);                 // the largest finite
    CHECK(std::isinf(kernels::f16_to_f32(0xfc00)));
    CHECK(kernels::f16_to_f32(0xfc00) < 0);
    CHECK(bits_of(kernels::f16_to_f32(0x7e00)) == 0x7fc00000u);   // the quiet NaN keeps its payload bits
}

}  // namespace pretrained_kernels_test
