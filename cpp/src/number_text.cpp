// number_text: "%f" for error messages without printf (see number_text.hpp).
#include "number_text.hpp"

#include <cmath>
#include <cstdint>

namespace attnscope {
namespace detail {

std::string number_text(double value)
{
    if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
    const std::string sign = std::signbit(value) ? "-" : "";
    double a = std::fabs(value);
    if (std::isinf(a)) return sign + "inf";
    int exponent = 0;  // e-notation from 1e15 on: the whole part must fit in 64 bits
    if (a >= 1e15)
        while (a >= 10) {
            a /= 10;
            ++exponent;
        }
    unsigned long long whole = static_cast<unsigned long long>(a);
    // Rounded to six decimals as printf rounds: to nearest, ties (exact in binary, such as .0000005 of a
    // multiple of 2^-7) to even.
    const double scaled = (a - double(whole)) * 1e6;
    unsigned long long millionths = static_cast<unsigned long long>(scaled);
    const double rest = scaled - double(millionths);
    if (rest > 0.5 || (rest == 0.5 && millionths % 2 == 1)) ++millionths;
    if (millionths == 1000000) {  // rounded up into the next whole number
        ++whole;
        millionths = 0;
    }
    if (exponent && whole == 10) {  // 9.9999996e+20 rounds to 1.000000e+21
        whole = 1;
        ++exponent;
    }
    std::string fraction = std::to_string(millionths);
    std::string text = sign + std::to_string(whole) + "." + std::string(6 - fraction.size(), '0') + fraction;
    return exponent ? text + "e+" + std::to_string(exponent) : text;
}

}  // namespace detail
}  // namespace attnscope
