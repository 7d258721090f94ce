// MultiHeadAttention's parameters: the sizes checked before anything is allocated, PyTorch's seeded initialisation,
// the state dict under PyTorch's names, and the weights packed into the products' panels. The forward pass is
// multihead_attention.cpp.
#include "attnscope/multihead_attention.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "attend.hpp"
#include "multihead_errors.hpp"

namespace attnscope {

namespace multihead {

void fail(const char* where, const std::string& message)
{
    throw std::invalid_argument(std::string(where) + ": " + message);
}

void fail_sizes(const char* format, std::size_t a, std::size_t b, std::size_t c, bool length)
{
    // `format` holds up to three %, replaced by a, b and c in turn.
    std::string message;
    const std::size_t values[3] = {a, b, c};
    std::size_t next = 0;
    for (const char* f = format; *f; ++f) {
        if (*f == '%' && next < 3)
            message += std::to_string(values[next++]);
        else
            message += *f;
    }
    if (length) throw std::length_error(message);
    throw std::invalid_argument(message);
}

}  // namespace multihead

namespace {

using multihead::fail;
using multihead::fail_sizes;

// splitmix64: tiny, seedable, and gives the same stream natively and in WASM.
class SeededUniform {
public:
    explicit SeededUniform(std::uint64_t seed) : state_(seed) {}
    // Uniform in [-bound, bound).
    float operator()(float bound)
    {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const float unit = float(z >> 40) * (1.0f / 16777216.0f);  // 24 random bits: exact in float
        return (2.f * unit - 1.f) * bound;
    }

private:
    std::uint64_t state_;
};

void fill_uniform(SeededUniform& rng, float* data, std::size_t n, float bound)
{
    for (std::size_t i = 0; i < n; ++i) data[i] = rng(bound);
}

// PyTorch's xavier_uniform_ on a [fan_out, fan_in] matrix.
float xavier_bound(std::size_t fan_in, std::size_t fan_out) { return std::sqrt(6.f / float(fan_in + fan_out)); }

}  // namespace

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionConfig& config)
    : embed_dim_(config.embed_dim),
      num_heads_(config.num_heads),
      kdim_(config.kdim ? config.kdim : config.embed_dim),
      vdim_(config.vdim ? config.vdim : config.embed_dim),
      bias_(config.bias)
{
    // Zero or indivisible sizes throw invalid_argument, sizes that cannot be addressed length_error,
    // before anything is allocated.
    parameter_bytes(config);
    const std::size_t E = embed_dim_;
    resize_floats(in_proj_weight_, packed_in_proj() ? 3 * E * E : E * (E + kdim_ + vdim_), "MultiHeadAttention: in_proj_weight");
    if (bias_) resize_floats(in_proj_bias_, 3 * E, "MultiHeadAttention: in_proj_bias");
    resize_floats(out_proj_weight_, E * E, "MultiHeadAttention: out_proj.weight");
    if (bias_) resize_floats(out_proj_bias_, E, "MultiHeadAttention: out_proj.bias");

    // PyTorch's _reset_parameters: Xavier-uniform in-projection(s), zero biases; out_proj keeps
    // nn.Linear's kaiming_uniform(a=√5), i.e. uniform(±1/√fan_in).
    SeededUniform rng(config.seed);
    if (packed_in_proj()) {
        fill_uniform(rng, in_proj_weight_.data(), 3 * E * E, xavier_bound(E, 3 * E));
    } else {
        fill_uniform(rng, in_proj_weight_.data(), E * E, xavier_bound(E, E));
        fill_uniform(rng, in_proj_weight_.data() + E * E, E * kdim_, xavier_bound(kdim_, E));
        fill_uniform(rng, in_proj_weight_.data() + E * (E + kdim_), E * vdim_, xavier_bound(vdim_, E));
    }
    fill_uniform(rng, out_proj_weight_.data(), E * E, 1.f / std::sqrt(float(E)));
    repack();
}

std::size_t MultiHeadAttention::parameter_bytes(const MultiHeadAttentionConfig& config)
{
    const char* where = "MultiHeadAttention";
    const std::size_t E = config.embed_dim, H = config.num_heads;
    if (E == 0) fail(where, "embed_dim must be at least 1, got 0");
    if (H == 0) fail(where, "num_heads must be at least 1, got 0");
    if (E % H != 0) fail_sizes("MultiHeadAttention: embed_dim (%) must be divisible by num_heads (%)", E, H, 0, false);
    const std::size_t kdim = config.kdim ? config.kdim : E, vdim = config.vdim ? config.vdim : E;
    const auto too_large = [&] {
        fail_sizes("MultiHeadAttention: embed_dim %, kdim %, vdim % need more parameter bytes than the address space has", E,
                   kdim, vdim, true);
    };
    const auto sum = [&](std::size_t a, std::size_t b) {
        if (a > SIZE_MAX - b) too_large();
        return a + b;
    };
    const auto mul = [&](std::size_t a, std::size_t b) {
        if (a != 0 && b > SIZE_MAX / a) too_large();
        return a * b;
    };
    // PyTorch's parameters, then the packed Wᵀ panels of the four projections made by repack().
    std::size_t floats = sum(sum(mul(E, sum(sum(E, kdim), vdim)), mul(E, E)), config.bias ? sum(mul(3, E), E) : 0);
    for (std::size_t in_features : {E, kdim, vdim, E}) {
        std::size_t packed = 0;
        try {
            packed = detail::packed_floats(in_features, E);
        } catch (const std::length_error&) {
            too_large();
        }
        floats = sum(floats, packed);
    }
    return mul(floats, sizeof(float));
}

std::vector<std::string> MultiHeadAttention::state_dict_keys() const
{
    std::vector<std::string> keys;
    if (packed_in_proj())
        keys = {"in_proj_weight"};
    else
        keys = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
    if (bias_) keys.push_back("in_proj_bias");
    keys.push_back("out_proj.weight");
    if (bias_) keys.push_back("out_proj.bias");
    return keys;
}

Shape MultiHeadAttention::state_dict_shape(const std::string& key) const
{
    const std::size_t E = embed_dim_;
    if (packed_in_proj() && key == "in_proj_weight") return {3 * E, E};
    if (!packed_in_proj() && key == "q_proj_weight") return {E, E};
    if (!packed_in_proj() && key == "k_proj_weight") return {E, kdim_};
    if (!packed_in_proj() && key == "v_proj_weight") return {E, vdim_};
    if (bias_ && key == "in_proj_bias") return {3 * E};
    if (key == "out_proj.weight") return {E, E};
    if (bias_ && key == "out_proj.bias") return {E};
    std::string expected;
    for (const std::string& k : state_dict_keys()) expected += (expected.empty() ? "'" : ", '") + k + "'";
    fail("state_dict", "unexpected key '" + key + "' (this layer has " + expected + ")");
}

template <class Self>
auto MultiHeadAttention::parameter_in(Self& self, const std::string& key) -> decltype(self.in_proj_weight_.data())
{
    const std::size_t E = self.embed_dim_;
    if (key == "in_proj_weight" || key == "q_proj_weight") return self.in_proj_weight_.data();
    if (key == "k_proj_weight") return self.in_proj_weight_.data() + E * E;
    if (key == "v_proj_weight") return self.in_proj_weight_.data() + E * (E + self.kdim_);
    if (key == "in_proj_bias") return self.in_proj_bias_.data();
    if (key == "out_proj.weight") return self.out_proj_weight_.data();
    return self.out_proj_bias_.data();  // "out_proj.bias": callers validate keys with state_dict_shape() first
}

float* MultiHeadAttention::parameter(const std::string& key) { return parameter_in(*this, key); }
const float* MultiHeadAttention::parameter(const std::string& key) const { return parameter_in(*this, key); }

std::map<std::string, Tensor> MultiHeadAttention::state_dict() const
{
    std::map<std::string, Tensor> state;
    for (const std::string& key : state_dict_keys()) {
        const Shape shape = state_dict_shape(key);
        const float* data = parameter(key);
        state.emplace(key, Tensor(shape, std::vector<float>(data, data + checked_numel(shape, "state_dict"))));
    }
    return state;
}

void MultiHeadAttention::load_state_dict(const std::map<std::string, TensorView>& state)
{
    // Check everything first so that a bad state dict leaves the current weights untouched.
    for (const auto& entry : state) {
        const Shape expected = state_dict_shape(entry.first);  // throws for unknown keys
        if (entry.second.shape != expected)
            fail("load_state_dict", "'" + entry.first + "': expected shape " + to_string(expected) + ", got " +
                                        to_string(entry.second.shape));
        if (!entry.second.data) fail("load_state_dict", "'" + entry.first + "': data is null");
    }
    for (const std::string& key : state_dict_keys())
        if (!state.count(key)) fail("load_state_dict", "missing key '" + key + "' of shape " + to_string(state_dict_shape(key)));

    for (const auto& entry : state)
        std::memcpy(parameter(entry.first), entry.second.data,
                    checked_numel(entry.second.shape, "load_state_dict") * sizeof(float));
    repack();
}

void MultiHeadAttention::load_state_dict(const std::map<std::string, Tensor>& state)
{
    std::map<std::string, TensorView> views;
    for (const auto& entry : state) views.emplace(entry.first, TensorView(entry.second));
    load_state_dict(views);
}

void MultiHeadAttention::repack()
{
    // PyTorch stores [out, in]; the products want Wᵀ in panels. Packed once here, not per call.
    const std::size_t E = embed_dim_;
    const std::size_t in_features[3] = {E, kdim_, vdim_};
    const float* weights[3] = {in_proj_weight_.data(), in_proj_weight_.data() + E * E,
                               in_proj_weight_.data() + E * (E + kdim_)};
    for (int which = 0; which < 3; ++which) {
        std::vector<float>& packed = packed_in_proj_[which];
        resize_floats(packed, detail::packed_floats(in_features[which], E), "MultiHeadAttention: packed in_proj");
        detail::pack_transposed(in_features[which], E, weights[which], in_features[which], packed.data());
    }
    resize_floats(packed_out_proj_, detail::packed_floats(E, E), "MultiHeadAttention: packed out_proj");
    detail::pack_transposed(E, E, out_proj_weight_.data(), E, packed_out_proj_.data());
}

}  // namespace attnscope
