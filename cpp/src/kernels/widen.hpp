// Widening of half-precision weights to F32: IEEE binary16 (F16) and bfloat16 (BF16), little-endian bytes in any
// alignment, as safetensors stores them. Both conversions are exact (every F16 and BF16 value is an F32 value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

namespace attnscope {
namespace kernels {

/// One F16 bit pattern as F32, scalar: the reference of the SIMD loop and its tail.
inline float f16_to_f32(std::uint16_t h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t magnitude = h & 0x7fffu;
    std::uint32_t bits;
    if (magnitude >= 0x7c00u) {
        bits = sign | 0x7f800000u | ((magnitude & 0x3ffu) << 13);  // inf, or NaN with its payload kept
    } else {
        // Shifting exponent and mantissa into F32's place and multiplying by 2^112 rebiases the exponent (15 → 127)
        // and turns F16 subnormals into normal F32 values in one exact step.
        float f;
        const std::uint32_t shifted = magnitude << 13;
        std::memcpy(&f, &shifted, 4);
        f *= 5.192296858534828e33f;  // 2^112
        std::memcpy(&bits, &f, 4);
        bits |= sign;
    }
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

/// One BF16 bit pattern as F32: BF16 is the top half of an F32.
inline float bf16_to_f32(std::uint16_t h)
{
    const std::uint32_t bits = std::uint32_t(h) << 16;
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

// GCC 12 at AVX2 width, inlining a call whose n it knows (a test's 65,536), misreads the scalar tail after the SIMD
// loop as a loop that could run 2^62 times and stops the -Werror build (-Waggressive-loop-optimizations); the tail
// runs fewer than W times. The warning is switched off for this kernel only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
#endif
/// out[i] = the F16 (`bf16` false) or BF16 value at bytes[2i, 2i + 2) (little-endian), for n elements.
struct widen_half {
    template <class Arch>
    void operator()(Arch, const std::uint8_t* bytes, std::size_t n, bool bf16, float* out) const
    {
        using fbatch = xsimd::batch<float, Arch>;
        using ubatch = xsimd::batch<std::uint32_t, Arch>;
        constexpr std::size_t W = fbatch::size;
        alignas(64) std::uint32_t lanes[W];
        std::size_t i = 0;
        const std::uint8_t* p = bytes;
        for (; i + W <= n; i += W) {
            // Bytes → 32-bit lanes by a scalar gather (a chunk of the file can start at any byte); the conversion
            // itself is vector work.
            for (std::size_t l = 0; l < W; ++l, p += 2) lanes[l] = std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8;
            const ubatch h = ubatch::load_aligned(lanes);
            ubatch bits;
            if (bf16) {
                bits = h << 16;
            } else {
                const ubatch sign = (h & ubatch(0x8000u)) << 16;
                const ubatch magnitude = h & ubatch(0x7fffu);
                const fbatch scaled = xsimd::bitwise_cast<fbatch>(magnitude << 13) * fbatch(5.192296858534828e33f);
                const ubatch finite = xsimd::bitwise_cast<ubatch>(scaled);
                const ubatch special = ubatch(0x7f800000u) | ((magnitude & ubatch(0x3ffu)) << 13);
                bits = xsimd::select(magnitude >= ubatch(0x7c00u), special, finite) | sign;
            }
            xsimd::bitwise_cast<fbatch>(bits).store_unaligned(out + i);
        }
        for (; i < n; ++i, p += 2) {
            const std::uint16_t h = std::uint16_t(p[0] | p[1] << 8);
            out[i] = bf16 ? bf16_to_f32(h) : f16_to_f32(h);
        }
    }
};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// out[i] = the little-endian F32 at bytes[4i, 4i + 4), for n elements (bytes in any alignment).
inline void read_f32(const std::uint8_t* bytes, std::size_t n, float* out)
{
    std::memcpy(out, bytes, n * 4);  // every target of the project is little-endian, as safetensors is
}

}  // namespace kernels
}  // namespace attnscope
