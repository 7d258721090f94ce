// number_text (cpp/src/number_text.hpp), the printf-free "%f" of the error messages, checked against the C
// library's own snprintf: "%f" below 1e15, "%e" from there on.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "number_text.hpp"

namespace number_text_test {

using attnscope::detail::number_text;

namespace {

std::string printf_text(const char* format, double value)
{
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

}  // namespace

TEST_CASE("number_text writes what printf's %f writes", "[number_text]")
{
    std::vector<double> values = {0.0, -0.0, 1.0, -1.0, 1.5, -2.25, 0.1, 1e-7, -1e-7, 0.9999996, 0.9999994, 7.0000004,
                                  17.376709, 123456.789, 4294967296.5, 18446744073.25, 999999999999999.0,
                                  -123456789012.125, DBL_MIN, -DBL_TRUE_MIN};
    std::uint64_t state = 12345;  // a fixed LCG: values from 1e-6 to 1e14 across every magnitude, both signs
    for (int i = 0; i < 4000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double unit = double(state >> 11) / double(1ULL << 53);
        values.push_back((i % 2 ? -1 : 1) * std::pow(10.0, -6 + 20 * unit));
        // Odd multiples of 1/128 end in a 5 at the seventh decimal: exact ties, which printf rounds to even.
        if (i % 8 == 0) values.push_back(std::floor(unit * 1e6) + double(2 * (i % 64) + 1) / 128.0);
    }
    for (double v : values) {
        INFO("value " << printf_text("%.17g", v));
        CHECK(number_text(v) == printf_text("%f", v));
    }
}

TEST_CASE("number_text writes nan and infinities as %f does, and large values as %e", "[number_text]")
{
    CHECK(number_text(std::numeric_limits<double>::quiet_NaN()) == "nan");
    CHECK(number_text(-std::numeric_limits<double>::quiet_NaN()) == "-nan");
    CHECK(number_text(std::numeric_limits<double>::infinity()) == "inf");
    CHECK(number_text(-std::numeric_limits<double>::infinity()) == "-inf");
    std::vector<double> values = {1e15, -1e15, 1.5e20, 18446744073709551616.0, 9.9999999e20, 1.234567e100, -DBL_MAX,
                                  DBL_MAX};
    std::uint64_t state = 678;  // a fixed LCG: values from 1e15 to 1e308, both signs
    for (int i = 0; i < 2000; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        values.push_back((i % 2 ? -1 : 1) * std::pow(10.0, 15 + 293 * (double(state >> 11) / double(1ULL << 53))));
    }
    for (double v : values) {
        INFO("value " << printf_text("%.17g", v));
        CHECK(number_text(v) == printf_text("%e", v));
    }
}

}  // namespace number_text_test
