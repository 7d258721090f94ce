// MultiHeadAttention's errors, thrown from both of its files (multihead_parameters.cpp and multihead_attention.cpp)
// and defined once, out of line: each throw site costs a call instead of the unwinding code of a chain of
// std::string temporaries. Internal to the core.
#pragma once

#include <cstddef>
#include <string>

namespace attnscope {
namespace multihead {

/// std::invalid_argument("where: message").
[[noreturn]] void fail(const char* where, const std::string& message);

/// `format` with its first three % replaced by a, b and c in turn: std::length_error when `length`, else
/// std::invalid_argument.
[[noreturn]] void fail_sizes(const char* format, std::size_t a, std::size_t b, std::size_t c, bool length);

}  // namespace multihead
}  // namespace attnscope
