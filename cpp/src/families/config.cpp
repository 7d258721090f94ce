// Reading a config's fields (families::Config): every read checked for type and range, the field named in the message;
// JSON numbers' values; tensor-name patterns. Cold code.
#include <algorithm>
#include <cmath>

#include "../file_errors.hpp"
#include "family.hpp"

namespace attnscope {
namespace families {

using json::Num;
using json::Type;
using json::Value;

// Exact (correctly rounded) for up to 19 significant digits times 10^±22, which covers every value a config holds
// (1e-06, 10000.0, 500000.0, 8.0); beyond that within an ulp or so. Not strtod: its long-double arithmetic would cost
// the .wasm more than all of this file.
double decimal_value(std::string_view text)
{
    std::size_t i = 0;
    const bool negative = i < text.size() && text[i] == '-';
    if (negative) ++i;
    std::uint64_t digits = 0;
    long exponent = 0;
    bool fraction = false;
    for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
        if (text[i] == '.') {
            fraction = true;
            continue;
        }
        if (digits < 1000000000000000000ull) {
            digits = digits * 10 + std::uint64_t(text[i] - '0');
            if (fraction) --exponent;
        } else if (!fraction) {
            ++exponent;  // digits past the 19th only scale the value
        }
    }
    if (i < text.size()) {  // the exponent: JSON guarantees [eE][+-]?digits
        ++i;
        const bool minus = text[i] == '-';
        if (text[i] == '-' || text[i] == '+') ++i;
        long e = 0;
        for (; i < text.size(); ++i) e = std::min(e * 10 + long(text[i] - '0'), 100000L);
        exponent += minus ? -e : e;
    }
    double value = double(digits);
    const long magnitude = exponent < 0 ? -exponent : exponent;
    if (digits < (std::uint64_t(1) << 53) && magnitude <= 22) {
        double power = 1;  // 10^k is exact in a double up to k = 22, so one rounding: the product or quotient
        for (long k = 0; k < magnitude; ++k) power *= 10;
        value = exponent < 0 ? value / power : value * power;
    } else {
        value *= std::pow(10.0, double(std::max(-400L, std::min(400L, exponent))));
    }
    return negative ? -value : value;
}

bool Config::has(const char* name) const
{
    Value v(object_);
    return object_.find(name, v) && !(null_is_absent_ && v.is(Type::null));
}

Value Config::get(const char* name) const
{
    Value v(object_);
    object_.find(name, v);
    return v;
}

void Config::fail(std::initializer_list<std::string_view> parts) const
{
    file_errors::range_error({prefix_, json::join(parts)});
}

void Config::type_fail(const char* name, const char* expected, const Value& got) const
{
    file_errors::type_error({prefix_, name}, expected, got);
}

std::size_t Config::size(const char* name, std::size_t fallback, std::size_t min, std::size_t max) const
{
    if (!has(name)) {
        if (fallback == 0) fail({name, ": missing (a required field)"});
        return fallback;
    }
    const Value v = get(name);
    if (!v.is(Type::number)) type_fail(name, "an integer", v);
    std::uint64_t out = 0;
    if (!v.to_index(max, out) || out < min)
        fail({name, ": expected an integer from ", Num(min), " to ", Num(max), ", got ", v.excerpt()});
    return std::size_t(out);
}

double Config::real_of(const Value& v, const char* name, double low, double high, bool low_open) const
{
    if (!v.is(Type::number)) type_fail(name, "a number", v);
    const double x = decimal_value(v.raw());
    if (!std::isfinite(x) || x > high || x < low || (low_open && x == low)) {
        // Bounds as integers, or 1/n below 1; an upper bound beyond any real value goes unsaid.
        const auto bound = [](double b) {
            if (b > 0 && b < 1) return "1/" + std::string(Num(std::uint64_t(1 / b + 0.5)));  // a fraction as written: 1/1024
            return b >= 0 ? std::string(Num(std::uint64_t(b))) : "-" + std::string(Num(std::uint64_t(-b)));
        };
        fail({name, ": expected a number ", low_open ? "above " : "from ", bound(low), high < 1e15 ? " to " : "",
              high < 1e15 ? bound(high) : "", ", got ", v.excerpt()});
    }
    return x;
}

double Config::real(const char* name, double fallback, double low, double high, bool low_open) const
{
    if (!has(name)) return fallback;
    return real_of(get(name), name, low, high, low_open);
}

bool Config::flag(const char* name, bool fallback) const
{
    if (!has(name)) return fallback;
    const Value v = get(name);
    if (!v.is(Type::boolean)) type_fail(name, "a boolean", v);
    return v.boolean();
}

std::string Config::text(const char* name, const char* fallback) const
{
    if (!has(name)) return fallback;
    const Value v = get(name);
    if (!v.is(Type::string)) type_fail(name, "a string", v);
    return v.string();
}

void Config::require_flag(const char* name, bool expected, const char* why) const
{
    if (has(name) && flag(name, expected) != expected) fail({name, ": ", expected ? "false" : "true", " is not supported (", why, ")"});
}

void Config::require_absent(const char* name, const char* why) const
{
    if (has(name)) fail({name, ": ", get(name).excerpt(), " is not supported (", why, ")"});
}

void Config::require_text(const char* name, const char* implemented, bool required) const
{
    if (!has(name)) {
        if (required) fail({name, ": missing"});
        return;
    }
    const Value v = get(name);
    if (!v.is(Type::string)) type_fail(name, "a string", v);
    if (v.string() != implemented) fail({name, ": attnscope implements \"", implemented, "\", got ", v.excerpt()});
}

void Config::require_decimal(const char* name, std::string_view digits, long exponent, const char* text) const
{
    if (!has(name)) return;
    const Value v = get(name);
    if (!v.is(Type::number)) type_fail(name, "a number", v);
    if (!v.equals_decimal(digits, exponent)) fail({name, ": attnscope implements ", text, ", got ", v.excerpt()});
}

void Config::require_bool(const char* name, bool implemented) const
{
    if (has(name) && flag(name, implemented) != implemented)
        fail({name, ": attnscope implements ", implemented ? "true" : "false", ", got ", get(name).excerpt()});
}

Config Config::nested(const char* name) const
{
    static const json::Document empty = [] {
        json::Document d;
        std::string error;
        d.parse("{}", error);
        return d;
    }();
    if (!has(name)) return Config(empty.root(), prefix_ + name + ".", null_is_absent_);
    const Value v = get(name);
    if (!v.is(Type::object)) type_fail(name, "an object or null", v);
    return Config(v, prefix_ + name + ".", null_is_absent_);
}

bool match_name(std::string_view pattern, std::string_view name, std::size_t& layer)
{
    const std::size_t hole = pattern.find("{}");
    if (hole == std::string_view::npos) return pattern == name;
    const std::string_view head = pattern.substr(0, hole), tail = pattern.substr(hole + 2);
    if (name.size() < head.size() + tail.size() + 1 || name.substr(0, head.size()) != head ||
        name.substr(name.size() - tail.size()) != tail)
        return false;
    const std::string_view digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    // A layer number as saved: decimal, no sign, no leading zero (so "h.01." is another name), at most 9 digits.
    if (digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return false;
    std::size_t n = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + std::size_t(c - '0');
    }
    layer = n;
    return true;
}

}  // namespace families
}  // namespace attnscope
