// Decoding of the fuzzer's input: bytes become sizes, options, masks and values. Any input decodes to a complete
// case (past its end, a stream seeded from the whole input takes over), and the layout never shifts with earlier
// choices, so libFuzzer's mutations stay local. The entry points read in the order documented in
// attention_fuzzer.cpp.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {
namespace fuzz {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Buffers of wrongly shaped or huge arguments are allocated as declared only up to this many elements;
// beyond it the library must reject the call before reading them.
constexpr std::size_t kMaxBuffer = 1 << 16;

inline std::uint64_t splitmix(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class Input {
public:
    Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size)
    {
        std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the whole input seeds the stream past its end
        for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
        state_ = h;
    }
    std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : std::uint8_t(splitmix(state_) >> 56); }
    // Always one byte, whatever n, so the layout does not shift with earlier choices. n ≤ 256.
    std::size_t below(std::size_t n) { return byte() % n; }
    bool flag() { return byte() & 1; }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
    std::uint64_t state_;
};

// Seeded values for the parameters, so the input's bytes go to sizes, options, masks and activations.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed * 0x2545F4914F6CDD1Dull + 1) {}
    float uniform(float lo, float hi) { return lo + (hi - lo) * float(splitmix(state_) >> 40) * (1.f / 16777216.f); }
    std::uint32_t bits() { return std::uint32_t(splitmix(state_) >> 32); }

private:
    std::uint64_t state_;
};

inline constexpr float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, FLT_MAX, -FLT_MAX, 1e30f,
                                          -1e30f, std::numeric_limits<float>::denorm_min(), -0.f, 3e38f};
constexpr std::size_t kSpecialCount = sizeof(kSpecial) / sizeof(kSpecial[0]);

// Sizes near SIZE_MAX: every one is at least SIZE_MAX / 8 floats (2^61 in 64 bits, 2^29 in the 32-bit build),
// more than std::vector<float> can hold, so any allocation sized by one of them must fail with std::length_error,
// and products of two overflow.
constexpr int kSizeBits = std::numeric_limits<std::size_t>::digits;
inline constexpr std::size_t kHuge[] = {SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / 3, std::size_t(1) << (kSizeBits - 3),
                                             (std::size_t(1) << (kSizeBits - 2)) + 1, std::size_t(1) << (kSizeBits - 1), SIZE_MAX - 15};
constexpr std::size_t kHugeCount = sizeof(kHuge) / sizeof(kHuge[0]);

enum class Mode { valid, invalid, nonfinite };

struct ValueKind {
    float scale = 1.f;
    bool integers = false;   // whole numbers in [-100, 100]: q·k is then exact in float
    bool nonfinite = false;  // some NaN, ±inf, FLT_MAX, denormals
};

inline float draw_value(Input& in, const ValueKind& kind)
{
    const std::uint8_t b = in.byte();
    if (kind.nonfinite && b < 24) return kSpecial[b % kSpecialCount];
    if (kind.integers) return float(int(b % 201) - 100);
    return (float(b) - 127.5f) / 127.5f * kind.scale;
}

inline std::vector<float> draw_values(Input& in, std::size_t n, const ValueKind& kind)
{
    std::vector<float> v(n);
    for (float& x : v) x = draw_value(in, kind);
    return v;
}

inline std::size_t saturating_mul(std::size_t a, std::size_t b) { return (a != 0 && b > SIZE_MAX / a) ? SIZE_MAX : a * b; }

inline std::size_t numel_or_max(const Shape& shape)
{
    std::size_t n = 1;
    for (std::size_t d : shape) n = saturating_mul(n, d);
    return n;
}

// The elements the harness actually allocates for a declared shape: all of them when small, at least one
// (an empty std::vector may have a null data(), which the API reads as "no tensor"/"no mask").
inline std::size_t buffer_size(const Shape& shape) { return std::max<std::size_t>(1, std::min(numel_or_max(shape), kMaxBuffer)); }

// A mask the harness owns, with the shape it declares to the library.
struct OwnedMask {
    bool present = false;
    MaskKind kind = MaskKind::boolean;
    Shape shape;
    std::vector<std::uint8_t> blocked;
    std::vector<float> added;

    MaskView view() const
    {
        if (!present) return {};
        return kind == MaskKind::boolean ? MaskView::boolean(blocked.data(), shape) : MaskView::additive(added.data(), shape);
    }
    // Whether element `index` blocks its key outright (boolean nonzero or additive -inf).
    bool blocks(std::size_t index) const
    {
        if (!present) return false;
        return kind == MaskKind::boolean ? blocked[index] != 0 : added[index] == -kInf;
    }
    // The largest finite |value| an additive mask adds to a score; it sets how far float rounding may move it.
    double largest_added() const
    {
        double m = 0;
        if (present && kind == MaskKind::additive)
            for (float x : added)
                if (std::isfinite(x)) m = std::max(m, double(std::fabs(x)));
        return m;
    }
};

// kind: 0 none, 1 boolean, 2 additive. Boolean: a density byte, then one byte per element (below the density
// blocks; any nonzero value blocks, so several are used). Additive: -inf, ±1e4 (the large logits) or about [-3, 3].
inline OwnedMask draw_mask(Input& in, int kind, const Shape& shape, const ValueKind& values)
{
    OwnedMask m;
    if (kind == 0) return m;
    m.present = true;
    m.shape = shape;
    const std::size_t n = std::max<std::size_t>(1, numel_or_max(shape));  // shapes drawn here are always small
    if (kind == 1) {
        m.kind = MaskKind::boolean;
        m.blocked.resize(n);
        const std::uint8_t density = in.byte();
        for (std::uint8_t& x : m.blocked) {
            const std::uint8_t b = in.byte();
            x = b < density ? std::uint8_t(1 + b) : 0;
        }
    } else {
        m.kind = MaskKind::additive;
        m.added.resize(n);
        for (float& x : m.added) {
            const std::uint8_t b = in.byte();
            if (values.nonfinite && b < 16) x = kSpecial[b % kSpecialCount];
            else if (b < 48) x = -kInf;
            else if (b < 64) x = -1e4f;
            else if (b < 72) x = 1e4f;
            else x = values.integers ? float(int(b) - 164) / 8.f : (float(b) - 164.f) / 92.f * 3.f;
        }
    }
    return m;
}

// A shape that is none of `allowed`: one dimension changed, one dropped or one added.
inline Shape wrong_shape(Input& in, const Shape& valid, const std::vector<Shape>& allowed)
{
    Shape s = valid;
    const std::size_t how = in.below(4), where = in.byte();
    if (how == 0 && !s.empty()) s[where % s.size()] += 1 + in.below(3);
    else if (how == 1 && !s.empty()) s.erase(s.begin() + std::ptrdiff_t(where % s.size()));
    else if (how == 2) s.insert(s.begin() + std::ptrdiff_t(where % (s.size() + 1)), 1 + in.below(3));
    else if (!s.empty()) s[where % s.size()] = s[where % s.size()] > 1 ? 1 : 2;
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) s = Shape{2, 3, 5, 7, 11};  // no API takes rank 5
    return s;
}

}  // namespace fuzz
}  // namespace attnscope
