// What a packed matrix's panels hold: a header of its own, without xsimd, for the code that only records the type
// (the weights' declaration, and every family through it). xsimd's headers are most of a source's compile time.
#pragma once

#include <cstdint>

namespace attnscope {
namespace kernels {

/// What a packed matrix's panels hold.
enum class PanelType : std::uint8_t { f32, bf16, f16 };

}  // namespace kernels
}  // namespace attnscope
