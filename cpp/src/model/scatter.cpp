// Scattering file tensors into the weights (scatter.hpp). Built -O2: it runs once per element of every weight file.
#include "scatter.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../kernels/gemm.hpp"
#include "../kernels/widen.hpp"

namespace attnscope {
namespace model {
namespace {

using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;

// GPT-NeoX's fused rows [heads, 3, head_dim] → our columns: the q heads, then the k heads, then the v heads.
std::size_t regrouped(const Destination& d, std::size_t r)
{
    const std::size_t hd = d.head_dim, per_head = 3 * hd, h = r / per_head, which = r % per_head / hd, i = r % hd;
    return which * d.heads * hd + h * hd + i;
}

// The (segment, column) of a matrix destination's output feature j.
std::size_t segment_of(const Destination& d, std::size_t& j)
{
    std::size_t s = 0;
    while (s + 1 < d.segments && j >= d.seg[s].rows) j -= d.seg[s++].rows;
    return s;
}

// Elements [e0, e0 + n) of a 16-bit tensor whose matrices keep 16 bits: the bit patterns themselves to their panels.
// Returns how many are NaN or infinite (the exponent all ones).
std::size_t scatter_half(const Destination& d, std::size_t e0, const std::uint8_t* bytes, std::size_t n, bool bf16)
{
    const std::uint16_t exponent = bf16 ? 0x7f80u : 0x7c00u;
    const bool conv1d = d.layout == Layout::conv1d, permuted = d.layout == Layout::per_head_qkv;
    const std::size_t cols = d.shape[1];
    std::size_t r = e0 / cols, c = e0 % cols, bad = 0;
    for (std::size_t i = 0; i < n; ++i, bytes += 2) {
        const std::uint16_t h = std::uint16_t(bytes[0] | bytes[1] << 8);
        bad += (h & exponent) == exponent;
        std::size_t j = conv1d ? c : r;
        const std::size_t k = conv1d ? r : c;
        if (permuted) j = regrouped(d, j);
        const Segment& g = d.seg[segment_of(d, j)];
        g.half[kernels::half_panel_index<arch>(g.K, k, g.col0 + j)] = h;
        if (++c == cols) {
            c = 0;
            ++r;
        }
    }
    return bad;
}

}  // namespace

std::size_t scatter(const Destination& d, std::size_t e0, const float* x, std::size_t n)
{
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += !std::isfinite(x[i]);
    const bool permuted = d.layout == Layout::per_head_qkv;
    if (!d.matrix) {
        if (d.segments == 1 && !permuted && d.offset == 0.f) {
            std::memcpy(d.seg[0].base + d.seg[0].col0 + e0, x, n * sizeof(float));
            return bad;
        }
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t e = e0 + i, s = 0;
            if (permuted) e = regrouped(d, e);
            while (s + 1 < d.segments && e >= d.seg[s].rows) e -= d.seg[s++].rows;
            d.seg[s].base[d.seg[s].col0 + e] = x[i] + d.offset;
        }
        return bad;
    }
    // A matrix: the file's element (r, c) is (output feature, input) for nn.Linear, (input, output feature) for
    // Conv1D. Output feature j of a segment is column col0 + j of its packed matrix, whose row is the input k.
    const bool conv1d = d.layout == Layout::conv1d;
    const std::size_t cols = d.shape[1];
    std::size_t r = e0 / cols, c = e0 % cols;
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t j = conv1d ? c : r;
        const std::size_t k = conv1d ? r : c;
        if (permuted) j = regrouped(d, j);
        std::size_t s = 0;
        while (s + 1 < d.segments && j >= d.seg[s].rows) j -= d.seg[s++].rows;
        const Segment& g = d.seg[s];
        const std::size_t col = g.col0 + j;
        g.base[(col / NR) * g.K * NR + k * NR + col % NR] = x[i] + d.offset;
        if (++c == cols) {
            c = 0;
            ++r;
        }
    }
    return bad;
}

std::size_t stream_elements(const Destination& d, std::size_t eb, bool bf16, std::size_t at, const std::uint8_t* data,
                            std::size_t size, std::uint8_t* carry, std::size_t& carry_bytes)
{
    std::size_t bad = 0;
    // A 16-bit matrix is one only every file tensor of which has its type (the loader's panel_types): kept as it is.
    const bool keep = eb == 2 && d.matrix && d.seg[0].half && (d.segments < 2 || d.seg[1].half);
    // Whole elements of `bytes` (F32, F16 or BF16) from element e0, widened through a small buffer.
    const auto convert = [&](std::size_t e0, const std::uint8_t* bytes, std::size_t n) {
        if (keep) {
            bad += scatter_half(d, e0, bytes, n, bf16);
            return;
        }
        float buffer[256];
        for (std::size_t i = 0; i < n; i += 256) {
            const std::size_t m = std::min<std::size_t>(256, n - i);
            if (eb == 4) kernels::read_f32(bytes + 4 * i, m, buffer);
            else kernels::widen_half{}(arch{}, bytes + 2 * i, m, bf16, buffer);
            bad += scatter(d, e0 + i, buffer, m);
        }
    };
    if (carry_bytes > 0) {  // finish the element the previous chunk split
        const std::size_t more = std::min(size, eb - carry_bytes);
        std::memcpy(carry + carry_bytes, data, more);
        carry_bytes += more;
        data += more;
        size -= more;
        at += more;
        if (carry_bytes == eb) {
            convert(at / eb - 1, carry, 1);
            carry_bytes = 0;
        }
    }
    const std::size_t whole = size / eb;
    convert(at / eb, data, whole);
    const std::size_t rest = size - whole * eb;
    std::memcpy(carry + carry_bytes, data + whole * eb, rest);
    carry_bytes += rest;
    return bad;
}

}  // namespace model
}  // namespace attnscope
