// The FileError helpers shared by the file readers (safetensors.cpp, model_file.cpp): messages are joined from
// pieces in one place, which keeps the readers' code small; a reader takes them all with `using namespace
// file_errors`. Internal to the core.
#pragma once

#include <initializer_list>
#include <string_view>

#include "attnscope/safetensors.hpp"
#include "json.hpp"

namespace attnscope {
namespace file_errors {

/// A number as a message piece.
using json::Num;

/// TypeError: "<field>: expected <expected>, got <JSON type> <value>".
[[noreturn]] void type_error(std::initializer_list<std::string_view> field, const char* expected, const json::Value& got);
/// RangeError with the pieces joined.
[[noreturn]] void range_error(std::initializer_list<std::string_view> parts);

}  // namespace file_errors
}  // namespace attnscope
