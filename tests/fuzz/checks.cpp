// Findings and the non-template checks of the fuzzer (see checks.hpp).
#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace attnscope {
namespace fuzz {

std::string g_case;  // what the current input decoded to, printed with every finding

void note(const char* name, std::size_t value)
{
    g_case += name;
    g_case += '=';
    g_case += std::to_string(value);
    g_case += ' ';
}

void note(const char* name, const std::string& value)
{
    g_case += name;
    g_case += '=';
    g_case += value;
    g_case += ' ';
}

namespace {

bool ignored(const char* id)
{
    static const std::string list = [] {
        const char* env = std::getenv("ATTNSCOPE_FUZZ_IGNORE");
        return "," + std::string(env ? env : "") + ",";
    }();
    return list.find("," + std::string(id) + ",") != std::string::npos;
}

}  // namespace

void announce(const char* call)
{
    static const bool verbose = std::getenv("ATTNSCOPE_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "calling %s\n  case: %s\n", call, g_case.c_str());
}

[[noreturn]] void die(const char* id, const std::string& message)
{
    std::fprintf(stderr, "\nFINDING [%s]: %s\n  case: %s\n", id, message.c_str(), g_case.c_str());
    std::fflush(stderr);
    std::abort();
}

void finding(const char* id, const std::string& message)
{
    if (!ignored(id)) die(id, message);
}

void expect_close(const char* what, const float* actual, std::size_t n, const std::vector<double>& expected, double widen,
                  double magnitude)
{
    if (expected.size() != n) die("harness", std::string(what) + ": reference has " + std::to_string(expected.size()) +
                                                 " values, library " + std::to_string(n));
    double largest = 0;
    for (double e : expected) {
        if (!std::isfinite(e)) die("harness", std::string(what) + ": the reference is not finite on a valid case");
        largest = std::max(largest, std::fabs(e));
    }
    largest = std::max(largest, magnitude);
    const double allowed = kTolerance * (largest > 0 ? largest : 1.0) + widen;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(actual[i])) {
            finding("nonfinite", std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(actual[i]) +
                                     " on finite input (reference " + std::to_string(expected[i]) + ")");
            return;
        }
        const double diff = std::fabs(double(actual[i]) - expected[i]);
        if (diff > allowed) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s[%zu] = %.9g, reference %.9g: |diff| %.3g > allowed %.3g (magnitude %.3g)", what,
                          i, double(actual[i]), expected[i], diff, allowed, largest);
            finding("mismatch", buf);
            return;
        }
    }
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void expect_shape(const char* what, const Shape& actual, const Shape& expected)
{
    if (actual != expected) finding("shape", std::string(what) + ": shape " + to_string(actual) + ", expected " + to_string(expected));
}

const char* verdict(int threw)
{
    return threw == 0 ? "returned" : threw == 1 ? "threw invalid_argument" : threw == 2 ? "threw length_error" : "threw something else";
}

}  // namespace fuzz
}  // namespace attnscope
