// Numbers in error messages without printf: std::to_string(double) and snprintf("%f") link printf's float
// formatter (kilobytes of .wasm) for a few messages. Internal to the core.
#pragma once

#include <string>

namespace attnscope {
namespace detail {

/// `value` as printf's "%f" writes it (six decimals; "nan", "inf", "-inf"), for error messages. From 1e15 on it is
/// written in e-notation, "1.797693e+308", instead of every integer digit.
std::string number_text(double value);

}  // namespace detail
}  // namespace attnscope
