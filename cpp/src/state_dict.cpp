// The parameter registry (state_dict.hpp): parameters registered by name with their shapes, checked against a state
// dict before anything is allocated, and loaded all at once; and the input checks the trained models share. Cold code:
// built for size.
#include "state_dict.hpp"

#include <algorithm>
#include <stdexcept>

#include "attend.hpp"
#include "zeroed.hpp"

namespace attnscope {
namespace detail {

[[noreturn]] void model_error(const std::string& message) { throw std::invalid_argument(message); }

void Linear::repack()
{
    resize_zeroed(packed, packed_floats(in, out));
    pack_transposed(in, out, weight->data.data(), in, packed.data());
}

void Linear::apply(const float* x, std::size_t rows, float* y) const
{
    matmul_packed(rows, out, in, x, in, packed.data(), y, out, bias->data.data());
}

void ParameterRegistry::expect(const std::string& name, const Shape& shape) const
{
    if (!expected) return;
    const auto it = expected->find(name);
    if (it == expected->end())
        model_error("the config implies a tensor '" + name + "' of shape " + to_string(shape) + ", which is missing");
    if (it->second.shape != shape)
        model_error("the config implies shape " + to_string(shape) + " for '" + name + "', got " + to_string(it->second.shape));
}

const Parameter* ParameterRegistry::add(const std::string& name, Shape shape)
{
    expect(name, shape);
    Parameter& p = parameters[name];
    p.shape = std::move(shape);
    resize_floats(p.data, checked_product({checked_numel(p.shape, ("parameter '" + name + "'").c_str())},
                                          ("parameter '" + name + "'").c_str(), sizeof(float)),
                  "parameter '" + name + "' " + to_string(p.shape));
    keys.push_back(name);
    return &p;
}

void ParameterRegistry::add_linear(Linear& linear, const std::string& prefix, std::size_t in, std::size_t out)
{
    linear.in = in;
    linear.out = out;
    linear.weight = add(prefix + ".weight", {out, in});
    linear.bias = add(prefix + ".bias", {out});
    linears.push_back(&linear);
}

Shape ParameterRegistry::shape(const std::string& key) const
{
    const auto it = parameters.find(key);
    if (it != parameters.end()) return it->second.shape;
    model_error("load_state_dict: unexpected key '" + key + "' (the model has " + std::to_string(keys.size()) +
                " keys such as '" + keys.front() + "')");
}

void ParameterRegistry::load(const std::map<std::string, TensorView>& state)
{
    for (const auto& entry : state) {
        const Shape expected_shape = shape(entry.first);
        if (entry.second.shape != expected_shape)
            model_error("load_state_dict: '" + entry.first + "': expected shape " + to_string(expected_shape) + ", got " +
                        to_string(entry.second.shape));
        if (!entry.second.data) model_error("load_state_dict: '" + entry.first + "': data is null");
    }
    for (const std::string& key : keys)
        if (!state.count(key)) model_error("load_state_dict: missing key '" + key + "' of shape " + to_string(shape(key)));
    for (auto& p : parameters) {
        const TensorView& source = state.at(p.first);
        std::copy(source.data, source.data + p.second.data.size(), p.second.data.begin());
    }
    repack_all();
}

void ParameterRegistry::repack_all()
{
    for (Linear* linear : linears) linear->repack();
}

void check_sizes(const char* model, std::initializer_list<std::pair<const char*, std::size_t>> sizes, std::size_t d,
                 std::size_t heads)
{
    for (const auto& size : sizes)
        if (size.second == 0) model_error(std::string(model) + ": " + size.first + " must be at least 1, got 0");
    if (d % heads != 0)
        model_error(std::string(model) + ": d_model (" + std::to_string(d) + ") must be divisible by num_heads (" +
                    std::to_string(heads) + ")");
}

// The messages are the JS API's (docs/errors.md): the wrapper passes ids on unchecked, so these are what a JS caller
// reads, after the call's name that `what` starts with.
void check_tokens(const char* what, const std::vector<std::int32_t>& tokens, std::size_t vocab, std::size_t max_len)
{
    if (tokens.empty() || tokens.size() > max_len)
        model_error(std::string(what) + ": expected from 1 to " + std::to_string(max_len) + " token ids (the model's limit), got " +
                    std::to_string(tokens.size()));
    for (std::size_t t = 0; t < tokens.size(); ++t)
        if (tokens[t] < 0 || std::size_t(tokens[t]) >= vocab)
            model_error(std::string(what) + "[" + std::to_string(t) + "]: expected a token id from 0 to " + std::to_string(vocab - 1) +
                        ", got " + std::to_string(tokens[t]));
}

void check_head_mask(const char* what, const HeadMask& mask, std::size_t layers, std::size_t heads)
{
    const std::size_t flags = checked_product({layers, heads}, what);
    if (!mask.empty() && mask.size() != flags)
        model_error(std::string(what) + ": expected " + std::to_string(flags) + " flags (" + std::to_string(layers) + " layers of " +
                    std::to_string(heads) + " heads) or none, got " + std::to_string(mask.size()));
}

std::int32_t argmax(const float* logits, std::size_t n) { return std::int32_t(std::max_element(logits, logits + n) - logits); }

}  // namespace detail
}  // namespace attnscope
