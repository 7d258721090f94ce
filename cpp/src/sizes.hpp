// Overflow-checked size arithmetic: the bottom layer, shared by the tensors, the attention workspace and the
// GEMM's packed panels, so every size that could wrap around throws the same std::length_error.
#pragma once

#include <cstddef>
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

/// Floats of a K×N matrix packed into panels of `panel_width` columns (N rounded up to whole panels);
/// throws std::length_error naming `what` when that overflows size_t.
inline std::size_t packed_floats(std::size_t K, std::size_t N, std::size_t panel_width, const char* what)
{
    return checked_mul((N + panel_width - 1) / panel_width * panel_width, K, what);
}

}  // namespace detail
}  // namespace attnscope
