// Helpers shared by the Catch2 tests: seeded random data and the error measure the tolerances refer to.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attnscope/multihead_attention.hpp"

namespace attnscope_test {

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo = -1.f, float hi = 1.f)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(gen);
    return v;
}

/// max |actual − expected| divided by max |expected|: the "relative to each tensor's largest
/// magnitude" measure of the project's tolerances. NaN anywhere gives +inf so it cannot pass.
template <class A, class E>
double max_relative_error(const A& actual, const E& expected)
{
    if (actual.size() != expected.size()) return INFINITY;
    double largest = 0.0, worst = 0.0;
    for (std::size_t i = 0; i < expected.size(); ++i) largest = std::max(largest, std::fabs(double(expected[i])));
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const double diff = std::fabs(double(actual[i]) - double(expected[i]));
        if (std::isnan(diff)) return INFINITY;
        worst = std::max(worst, diff);
    }
    return largest > 0.0 ? worst / largest : worst;
}

// Random weights everywhere, biases included (PyTorch's zero biases would hide a missing bias add).
inline void randomise(attnscope::MultiHeadAttention& mha, std::uint32_t seed)
{
    std::map<std::string, attnscope::Tensor> state;
    for (const std::string& key : mha.state_dict_keys()) {
        const attnscope::Shape shape = mha.state_dict_shape(key);
        state.emplace(key, attnscope::Tensor(shape, random_floats(attnscope::checked_numel(shape, "test"), seed++, -0.5f, 0.5f)));
    }
    mha.load_state_dict(state);
}

}  // namespace attnscope_test
