// Overflow-checked size arithmetic: the bottom layer, shared by the tensors, the attention workspace and the
// GEMM's packed panels, so every size that could wrap around throws the same std::length_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnscope {
namespace detail {

/// a·b, throwing std::length_error naming `what` when it overflows size_t.
inline std::size_t checked_mul(std::size_t a, std::size_t b, const char* what)
{
    if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
        throw std::length_error(std::string(what) + ": sizes too large (" + std::to_string(a) + " × " +
                                std::to_string(b) + " overflows the address space)");
    return a * b;
}

/// a + b, throwing std::length_error naming `what` when it overflows size_t.
inline std::size_t checked_add(std::size_t a, std::size_t b, const char* what)
{
    if (a > std::numeric_limits<std::size_t>::max() - b)
        throw std::length_error(std::string(what) + ": sizes too large (" + std::to_string(a) + " + " +
                                std::to_string(b) + " overflows the address space)");
    return a + b;
}

/// Sums and products of counts in 64 bits that saturate at 2^62, far beyond any memory, instead of wrapping: the
/// memory plan counts what an absurd config would take without throwing, then compares the total with the limit.
constexpr std::uint64_t saturated = std::uint64_t(1) << 62;
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a + b > saturated ? saturated : a + b; }
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b)
{
    return a != 0 && b > saturated / a ? saturated : a * b;
}

/// The product of `factors` as a count of elements of `element_bytes` each: throws std::length_error naming `what`
/// and every factor when the product, or its size in bytes, overflows size_t. size_t is 32 bits in WASM, where a
/// product of four config sizes wraps easily; the bytes are checked too so that `n × sizeof(float)` never wraps.
inline std::size_t checked_product(std::initializer_list<std::size_t> factors, const char* what,
                                   std::size_t element_bytes = 1)
{
    for (std::size_t f : factors)
        if (f == 0) return 0;  // an empty product never overflows, whatever the other factors
    std::size_t n = 1;
    bool overflow = false;
    for (std::size_t f : factors) {
        if (n != 0 && f > std::numeric_limits<std::size_t>::max() / n) overflow = true;
        n *= f;
    }
    if (!overflow && (element_bytes <= std::numeric_limits<std::size_t>::max() / n)) return n;
    std::string product;
    for (std::size_t f : factors) product += (product.empty() ? "" : " × ") + std::to_string(f);
    throw std::length_error(std::string(what) + ": sizes too large (" + product +
                            (element_bytes > 1 ? " elements of " + std::to_string(element_bytes) + " bytes" : "") +
                            " overflows the address space)");
}

/// Floats of a K×N matrix packed into panels of `panel_width` columns (N rounded up to whole panels);
/// throws std::length_error naming `what` when that overflows size_t.
inline std::size_t packed_floats(std::size_t K, std::size_t N, std::size_t panel_width, const char* what)
{
    return checked_mul((N + panel_width - 1) / panel_width * panel_width, K, what);
}

}  // namespace detail
}  // namespace attnscope
