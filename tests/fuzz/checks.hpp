// The fuzzer's checks: how a finding is reported (with the decoded case, then abort so libFuzzer saves the
// input), closeness to the double-precision reference, exact shapes and bits, and which exceptions a call may throw.
#pragma once

#include <cfloat>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {
namespace fuzz {

// The project's tolerance: max |actual − expected| ≤ 1e-4 × max |expected| over each tensor.
constexpr double kTolerance = 1e-4;

// ---- findings -------------------------------------------------------------------------------------------

extern std::string g_case;  // what the current input decoded to, printed with every finding

void note(const char* name, std::size_t value);
void note(const char* name, const std::string& value);

// With ATTNSCOPE_FUZZ_VERBOSE set, each call into the library first prints the case it belongs to.
void announce(const char* call);

// Prints "FINDING [id]: message" with the case and aborts. For broken invariants of the harness itself too.
[[noreturn]] void die(const char* id, const std::string& message);

// A property of the library failed (skippable with ATTNSCOPE_FUZZ_IGNORE=id1,id2 once reported).
void finding(const char* id, const std::string& message);

// ---- checks ---------------------------------------------------------------------------------------------

// Within kTolerance of the largest |expected| (absolute when everything expected is 0), widened by `widen`
// (see widening() below); NaN or ±inf anywhere is a finding of its own.
// `magnitude`, when given, is the largest value the same computation takes on absolute values (Σ w·|v| for an
// attention output, from tests/reference/magnitude.hpp): outputs whose terms cancel to almost nothing everywhere
// (v = +1 and -1 under equal weights) keep only float's rounding of the terms, ~1e-8 of them, which can be all of
// the tiny result. Measuring against the terms keeps the check at 1e-4 of what was summed instead of failing on
// cancellation.
void expect_close(const char* what, const float* actual, std::size_t n, const std::vector<double>& expected, double widen,
                  double magnitude = 0);

// Bitwise equality (NaN payloads and signed zeros included); memcmp must not see the null data() of an empty vector.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b);

void expect_shape(const char* what, const Shape& actual, const Shape& expected);

// Calls `body` expecting std::invalid_argument or std::length_error. Returns which (1 or 2) for comparisons.
template <class F>
int expect_throw(const char* what, F&& body)
{
    announce(what);
    try {
        body();
    } catch (const std::invalid_argument&) {
        return 1;
    } catch (const std::length_error&) {
        return 2;
    } catch (const std::exception& e) {
        finding("wrong-exception", std::string(what) + ": threw " + typeid(e).name() + " (" + e.what() +
                                       "), expected std::invalid_argument or std::length_error");
        return 3;
    } catch (...) {
        finding("wrong-exception", std::string(what) + ": threw a non-std::exception");
        return 3;
    }
    finding("no-throw", std::string(what) + ": an invalid call returned normally");
    return 0;
}

// Valid and non-finite calls: nothing may throw.
template <class F>
bool expect_no_throw(const char* what, F&& body)
{
    announce(what);
    try {
        body();
        return true;
    } catch (const std::exception& e) {
        finding("unexpected-throw", std::string(what) + ": threw " + typeid(e).name() + ": " + e.what());
    } catch (...) {
        finding("unexpected-throw", std::string(what) + ": threw a non-std::exception");
    }
    return false;
}

// What expect_throw() returned, in words.
const char* verdict(int threw);

// Float rounding of a score s costs up to FLT_EPSILON·|s| (the scale-and-add pass and a second mask pass
// round once each). Scores near 1e4, from ±1e4 additive masks, so move by ~1e-3, and softmax turns an
// absolute score error δ into a weight error of at most 2δ·w: the weights may then differ from the double
// reference by more than 1e-4 without any bug. This widens the tolerance by exactly that bound (×2 margin),
// and is zero when no additive mask is large; the SDPA integer mode keeps its scores exact and uses none.
inline double widening(double largest_added) { return 4.0 * FLT_EPSILON * largest_added; }

}  // namespace fuzz
}  // namespace attnscope
