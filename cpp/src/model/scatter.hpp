// A file tensor's elements to their places in the weights (a Destination): plain runs, columns of packed panels, a
// fused q|k|v regrouped head by head; widened from F16 or BF16 on the way, and counted when NaN or infinite.
// Internal to the loaders.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensors.hpp"

namespace attnscope {
namespace model {

/// Elements [e0, e0 + n) of a tensor, already F32, to their places. Returns how many are NaN or infinite.
std::size_t scatter(const Destination& d, std::size_t e0, const float* x, std::size_t n);

/// `size` bytes of a tensor's data starting at byte `at` of it (elements of `element_bytes`: 4 F32, 2 F16 or BF16),
/// to their places; an element split between two calls waits in `carry` (`carry_bytes` of it so far). Returns how
/// many elements were NaN or infinite.
std::size_t stream_elements(const Destination& d, std::size_t element_bytes, bool bf16, std::size_t at,
                            const std::uint8_t* data, std::size_t size, std::uint8_t* carry, std::size_t& carry_bytes);

}  // namespace model
}  // namespace attnscope
