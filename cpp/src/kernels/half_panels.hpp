// Packed GEMM panels of 16-bit weights (BF16 or F16, as a checkpoint stores them): their layout, and their loads
// widened to F32 inside the GEMM's k loop. Widening is exact, so a product over 16-bit panels has the bits of the
// same product over the panels widened at load.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "panel_type.hpp"
#include "widen.hpp"

namespace attnscope {
namespace kernels {

/// The element type of panels of `P`.
template <PanelType P>
using panel_element_t = std::conditional_t<P == PanelType::f32, float, std::uint16_t>;

/// Where element (k, col) of a K-row matrix lives in its 16-bit panels. A panel's row k is W 32-bit words (W the F32
/// SIMD width), word l holding column l in its low half and column l + W in its high half: one vector load gives the
/// tile both its B vectors, each widened by a shift or a mask (little-endian, as every target of the project).
template <class Arch>
inline std::size_t half_panel_index(std::size_t K, std::size_t k, std::size_t col)
{
    constexpr std::size_t W = xsimd::batch<float, Arch>::size, NR = 2 * W;
    const std::size_t c = col % NR;
    return (col / NR) * K * NR + k * NR + (c % W) * 2 + c / W;
}

/// One 16-bit element as F32, scalar.
inline float half_to_f32(std::uint16_t h, PanelType type) { return type == PanelType::bf16 ? bf16_to_f32(h) : f16_to_f32(h); }

/// F16 bit patterns in the low 16 bits of each lane (the high bits zero) → F32, exactly: exponent and mantissa shifted
/// into F32's place and multiplied by 2^112 (the rebias 15 → 127, which also makes F16's subnormals F32 normals),
/// the sign ORed back; infinities and NaNs (payload kept) chosen apart, as the loader may let them in.
template <class Arch>
inline xsimd::batch<float, Arch> f16_lanes(const xsimd::batch<std::uint32_t, Arch>& h)
{
    using fbatch = xsimd::batch<float, Arch>;
    using ubatch = xsimd::batch<std::uint32_t, Arch>;
    const ubatch sign = (h & ubatch(0x8000u)) << 16;
    const ubatch magnitude = h & ubatch(0x7fffu);
    const ubatch finite = xsimd::bitwise_cast<ubatch>(xsimd::bitwise_cast<fbatch>(magnitude << 13) * fbatch(5.192296858534828e33f));
    const ubatch special = ubatch(0x7f800000u) | ((magnitude & ubatch(0x3ffu)) << 13);
    return xsimd::bitwise_cast<fbatch>(xsimd::select(magnitude >= ubatch(0x7c00u), special, finite) | sign);
}

/// Odd 16-bit lanes: a word's high half (xsimd's generator of a batch_bool_constant).
struct odd_halves {
    static constexpr bool get(std::size_t i, std::size_t) { return i % 2 == 1; }
};

/// A panel row's two B vectors (columns 0..W and W..2W of the panel), widened.
template <class Arch, PanelType P>
inline void load_panel_row(const panel_element_t<P>* row, xsimd::batch<float, Arch>& b0, xsimd::batch<float, Arch>& b1)
{
    using fbatch = xsimd::batch<float, Arch>;
    using ubatch = xsimd::batch<std::uint32_t, Arch>;
    if constexpr (P == PanelType::f32) {
        b0 = fbatch::load_unaligned(row);
        b1 = fbatch::load_unaligned(row + fbatch::size);
    } else {
        // An integer vector load (may alias any type, as the SIMD load intrinsics do).
        const ubatch v = ubatch::load_unaligned(reinterpret_cast<const std::uint32_t*>(row));
        if constexpr (P == PanelType::bf16) {  // BF16 is the top half of an F32
            using hbatch = xsimd::batch<std::uint16_t, Arch>;
            const ubatch low = v << 16;
            b0 = xsimd::bitwise_cast<fbatch>(low);
            // v & 0xffff0000, as v's high halves blended over low's zero low halves: the same bits, but no mask
            // constant, which V8 keeps in a register of its own; in the 4-row tile that 16th vector spilled an
            // accumulator to the stack (a store and a load on its chain every k step).
            b1 = xsimd::bitwise_cast<fbatch>(xsimd::select(xsimd::make_batch_bool_constant<hbatch, odd_halves>(),
                                                           xsimd::bitwise_cast<hbatch>(v), xsimd::bitwise_cast<hbatch>(low)));
        } else {
            b0 = f16_lanes<Arch>(v & ubatch(0xffffu));
            b1 = f16_lanes<Arch>(v >> 16);
        }
    }
}

/// Packs the K×N matrix of 16-bit patterns whose element (k, j) is src[k·k_stride + j·n_stride] into 16-bit panels
/// (half_panel_index), zero-padded past N: what the loader's scatter writes, element by element, for a checkpoint.
template <class Arch>
void pack_half_panels(std::size_t K, std::size_t N, const std::uint16_t* src, std::size_t k_stride, std::size_t n_stride,
                      std::uint16_t* packed)
{
    constexpr std::size_t NR = 2 * xsimd::batch<float, Arch>::size;
    const std::size_t padded = (N + NR - 1) / NR * NR;
    for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < padded; ++j) packed[half_panel_index<Arch>(K, k, j)] = j < N ? src[k * k_stride + j * n_stride] : 0;
}

}  // namespace kernels
}  // namespace attnscope
