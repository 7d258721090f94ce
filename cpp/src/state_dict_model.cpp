// The models' state-dict registry: parameters registered by name with their shapes, checked against a state dict
// before anything is allocated, and loaded all at once (StateDictModel). Cold code: built for size.
#include <algorithm>
#include <stdexcept>

#include "model_parts.hpp"

namespace attnscope {
namespace detail {

[[noreturn]] void model_error(const std::string& message) { throw std::invalid_argument(message); }

std::vector<float> work_floats(std::initializer_list<std::size_t> factors, const char* call)
{
    std::vector<float> buffer;
    resize_floats(buffer, checked_product(factors, call, sizeof(float)), std::string(call) + ": work buffer");
    return buffer;
}

void ModelParts::expect(const std::string& name, const Shape& shape) const
{
    if (!expected) return;
    const auto it = expected->find(name);
    if (it == expected->end())
        model_error("the config implies a tensor '" + name + "' of shape " + to_string(shape) + ", which is missing");
    if (it->second.shape != shape)
        model_error("the config implies shape " + to_string(shape) + " for '" + name + "', got " +
                    to_string(it->second.shape));
}

const Parameter* ModelParts::add(const std::string& name, Shape shape)
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

MultiHeadAttention* ModelParts::add_attention(const std::string& prefix, std::size_t d, std::size_t heads)
{
    // The layer's two largest parameters (nn.MultiheadAttention with bias, kdim = vdim = d), checked before
    // the layer allocates its d² weights; its load_state_dict checks all of its keys.
    expect(prefix + ".in_proj_weight", {checked_mul(3, d, (prefix + ".in_proj_weight").c_str()), d});
    expect(prefix + ".out_proj.weight", {d, d});
    auto mha = std::make_unique<MultiHeadAttention>(MultiHeadAttentionConfig{d, heads, 0, 0, true, 0});
    for (const std::string& key : mha->state_dict_keys()) keys.push_back(prefix + "." + key);
    attentions.emplace_back(prefix, std::move(mha));
    return attentions.back().second.get();
}

LayerNorm ModelParts::add_layer_norm(const std::string& prefix, std::size_t d)
{
    return {add(prefix + ".weight", {d}), add(prefix + ".bias", {d})};
}

void ModelParts::add_linear(Linear& linear, const std::string& prefix, std::size_t in, std::size_t out)
{
    linear.in = in;
    linear.out = out;
    linear.weight = add(prefix + ".weight", {out, in});
    linear.bias = add(prefix + ".bias", {out});
    linears.push_back(&linear);
}

void ModelParts::add_tied_linear(Linear& linear, const Parameter* weight, const std::string& prefix, std::size_t in,
                                 std::size_t out)
{
    // Refused here, not left to load_state_dict's "unexpected key": the file says why the tensor is wrong.
    if (expected && expected->count(prefix + ".weight"))
        model_error("'" + prefix + ".weight' is in the state dict, but tie_head is true: the head's weight is the "
                    "token embedding, and a tied model has only '" + prefix + ".bias'");
    linear.in = in;
    linear.out = out;
    linear.weight = weight;
    linear.bias = add(prefix + ".bias", {out});
    linears.push_back(&linear);
}

void ModelParts::add_blocks(std::vector<Block>& blocks, const std::string& prefix, std::size_t count, bool decoder,
                            std::size_t d, std::size_t heads, std::size_t d_ff)
{
    // The last block must exist before `count` blocks are reserved: a config claiming a million layers is
    // refused without reserving them.
    if (count > 0) expect(prefix + "." + std::to_string(count - 1) + ".ln1.weight", {d});
    blocks.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        blocks.emplace_back();
        Block& b = blocks.back();
        const std::string p = prefix + "." + std::to_string(i);
        b.ln1 = add_layer_norm(p + ".ln1", d);
        b.self_attn = add_attention(p + (decoder ? ".self_attn" : ".attn"), d, heads);
        b.ln2 = add_layer_norm(p + ".ln2", d);
        if (decoder) {
            b.cross_attn = add_attention(p + ".cross_attn", d, heads);
            b.ln3 = add_layer_norm(p + ".ln3", d);
        }
        add_linear(b.fc1, p + ".mlp.fc1", d, d_ff);
        add_linear(b.fc2, p + ".mlp.fc2", d_ff, d);
    }
}

void ModelParts::repack_all()
{
    for (Linear* linear : linears) linear->repack();
}

void check_sizes(const char* model, std::initializer_list<std::pair<const char*, std::size_t>> sizes, std::size_t d,
                 std::size_t heads)
{
    for (const auto& size : sizes)
        if (size.second == 0)
            model_error(std::string(model) + ": " + size.first + " must be at least 1, got 0");
    if (d % heads != 0)
        model_error(std::string(model) + ": d_model (" + std::to_string(d) + ") must be divisible by num_heads (" +
                    std::to_string(heads) + ")");
}

// The messages are the JS API's (docs/errors.md): the wrapper passes ids on unchecked, so these are what a JS caller
// reads, after the call's name that `what` starts with.
void check_tokens(const char* what, const std::vector<std::int32_t>& tokens, std::size_t vocab, std::size_t max_len)
{
    if (tokens.empty() || tokens.size() > max_len)
        model_error(std::string(what) + ": expected from 1 to " + std::to_string(max_len) +
                    " token ids (the model's limit), got " + std::to_string(tokens.size()));
    for (std::size_t t = 0; t < tokens.size(); ++t)
        if (tokens[t] < 0 || std::size_t(tokens[t]) >= vocab)
            model_error(std::string(what) + "[" + std::to_string(t) + "]: expected a token id from 0 to " +
                        std::to_string(vocab - 1) + ", got " + std::to_string(tokens[t]));
}

void check_head_mask(const char* what, const HeadMask& mask, std::size_t layers, std::size_t heads)
{
    const std::size_t flags = checked_product({layers, heads}, what);
    if (!mask.empty() && mask.size() != flags)
        model_error(std::string(what) + ": expected " + std::to_string(flags) + " flags (" +
                    std::to_string(layers) + " layers of " + std::to_string(heads) + " heads) or none, got " +
                    std::to_string(mask.size()));
}

const std::uint8_t* layer_heads(const HeadMask& mask, std::size_t layer, std::size_t heads)
{
    return mask.empty() ? nullptr : mask.data() + layer * heads;
}

}  // namespace detail

using detail::ModelParts;

StateDictModel::StateDictModel() : parts_(std::make_unique<ModelParts>()) {}
StateDictModel::~StateDictModel() = default;

void StateDictModel::build(const std::map<std::string, TensorView>* state)
{
    ModelParts& m = *parts_;
    m.expected = state;
    add_parts(m);
    m.expected = nullptr;
    if (state) load_state_dict(*state);  // repacks every Linear
    else m.repack_all();
}

std::vector<std::string> StateDictModel::state_dict_keys() const { return parts_->keys; }

Shape StateDictModel::state_dict_shape(const std::string& key) const
{
    auto it = parts_->parameters.find(key);
    if (it != parts_->parameters.end()) return it->second.shape;
    for (const auto& attention : parts_->attentions) {
        const std::string& prefix = attention.first;
        if (key.size() > prefix.size() + 1 && key.compare(0, prefix.size(), prefix) == 0 && key[prefix.size()] == '.') {
            const std::string inner = key.substr(prefix.size() + 1);
            for (const std::string& k : attention.second->state_dict_keys())
                if (k == inner) return attention.second->state_dict_shape(inner);
        }
    }
    detail::model_error("load_state_dict: unexpected key '" + key + "' (the model has " +
                        std::to_string(parts_->keys.size()) + " keys such as '" + parts_->keys.front() + "')");
}

void StateDictModel::load_state_dict(const std::map<std::string, TensorView>& state)
{
    for (const auto& entry : state) {
        const Shape expected = state_dict_shape(entry.first);
        if (entry.second.shape != expected)
            detail::model_error("load_state_dict: '" + entry.first + "': expected shape " + to_string(expected) +
                                ", got " + to_string(entry.second.shape));
        if (!entry.second.data) detail::model_error("load_state_dict: '" + entry.first + "': data is null");
    }
    for (const std::string& key : parts_->keys)
        if (!state.count(key))
            detail::model_error("load_state_dict: missing key '" + key + "' of shape " + to_string(state_dict_shape(key)));

    for (auto& p : parts_->parameters) {
        const TensorView& source = state.at(p.first);
        std::copy(source.data, source.data + p.second.data.size(), p.second.data.begin());
    }
    for (auto& attention : parts_->attentions) {
        std::map<std::string, TensorView> inner;
        for (const std::string& k : attention.second->state_dict_keys()) inner.emplace(k, state.at(attention.first + "." + k));
        attention.second->load_state_dict(inner);
    }
    parts_->repack_all();
}

}  // namespace attnscope
