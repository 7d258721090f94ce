// A registry of named parameters for the models that keep PyTorch's state-dict layout as it is (the GRU
// encoder–decoders: RnnSeq2SeqModel): parameters registered by name with their shapes, checked against a state dict
// before anything is allocated, and loaded all at once; and the checks of a model's inputs that the trained models'
// C++ API shares. Not public API.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/tensor.hpp"
#include "attnscope/transformer.hpp"
#include "sizes.hpp"

namespace attnscope {
namespace detail {

[[noreturn]] void model_error(const std::string& message);

struct Parameter {
    Shape shape;
    std::vector<float> data;
};

/// y = x·Wᵀ + b over a registered weight [out, in] and bias [out], packed into the GEMM's panels after every load.
struct Linear {
    std::size_t in = 0, out = 0;
    const Parameter* weight = nullptr;
    const Parameter* bias = nullptr;
    std::vector<float> packed;

    void repack();
    void apply(const float* x, std::size_t rows, float* y) const;
};

/// Every parameter by name, in registration order.
struct ParameterRegistry {
    std::map<std::string, Parameter> parameters;
    std::vector<std::string> keys;  // registration order
    std::vector<Linear*> linears;   // repacked after every load
    /// When set, every parameter's shape is checked against it before the parameter is allocated.
    const std::map<std::string, TensorView>* expected = nullptr;

    void expect(const std::string& name, const Shape& shape) const;
    const Parameter* add(const std::string& name, Shape shape);
    void add_linear(Linear& linear, const std::string& prefix, std::size_t in, std::size_t out);
    Shape shape(const std::string& key) const;
    /// Every key with its shape and no other, checked before anything changes; then every Linear repacked.
    void load(const std::map<std::string, TensorView>& state);
    void repack_all();
};

/// Config and input checks ("<model>: <size> must be at least 1, got 0", "<what>: expected from 1 to N token ids").
void check_sizes(const char* model, std::initializer_list<std::pair<const char*, std::size_t>> sizes, std::size_t d,
                 std::size_t heads);
void check_tokens(const char* what, const std::vector<std::int32_t>& tokens, std::size_t vocab, std::size_t max_len);
/// A head mask must be empty or have one flag per head of every layer of its stack.
void check_head_mask(const char* what, const HeadMask& mask, std::size_t layers, std::size_t heads);
std::int32_t argmax(const float* logits, std::size_t n);

}  // namespace detail
}  // namespace attnscope
