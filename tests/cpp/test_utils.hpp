// Helpers shared by the Catch2 tests: seeded random data and the error measure the tolerances refer to.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
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

/// n token ids drawn uniformly from 0..vocab − 1 (a seeded input for the model tests).
inline std::vector<std::int32_t> random_ids(std::size_t n, std::size_t vocab, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<std::int32_t> ids(n);
    for (auto& id : ids) id = std::int32_t(rng() % vocab);
    return ids;
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

// Random parameters under a layer's or model's names, seeded in state_dict_keys() order: 2-D weights scaled by
// 1/√fan_in so activations stay O(1) through the layers, LayerNorm gains ("ln….weight") near 1.
template <class Module>
std::map<std::string, attnscope::Tensor> random_state(const Module& module, std::uint32_t seed)
{
    std::map<std::string, attnscope::Tensor> state;
    for (const std::string& key : module.state_dict_keys()) {
        const attnscope::Shape shape = module.state_dict_shape(key);
        const float bound = shape.size() == 2 ? 1.5f / std::sqrt(float(shape[1])) : 0.3f;
        attnscope::Tensor t(shape, random_floats(attnscope::checked_numel(shape, "test"), seed++, -bound, bound));
        if (key.find("ln") != std::string::npos && key.find(".weight") != std::string::npos)
            for (float& g : t.data) g += 1.f;
        state.emplace(key, std::move(t));
    }
    return state;
}

// Views of `state` for the models' load_state_dict (valid while `state` lives).
inline std::map<std::string, attnscope::TensorView> views(const std::map<std::string, attnscope::Tensor>& state)
{
    std::map<std::string, attnscope::TensorView> out;
    for (const auto& entry : state) out.emplace(entry.first, attnscope::TensorView(entry.second));
    return out;
}

}  // namespace attnscope_test
