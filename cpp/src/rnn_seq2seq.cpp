// RnnSeq2SeqModel: the GRU encoder–decoder of tools/training/rnn_nets.py: its parameters in the state-dict registry, the
// encoder's states, and the decoder's steps (teacher-forced or greedy) with the fixed context or dot attention.
#include "attnscope/rnn.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/gru.hpp"
#include "sizes.hpp"
#include "state_dict.hpp"

namespace attnscope {
namespace detail {

// One GRU layer as its two projections (gi = W_ih·x + b_ih, gh = W_hh·h + b_hh) and the model's two output layers.
struct RnnLayers {
    Linear encoder_input, encoder_hidden, decoder_input, decoder_hidden, combine, out;
    const Parameter *source_embedding = nullptr, *target_embedding = nullptr;
};

}  // namespace detail

namespace {

using arch = xsimd::default_arch;
using detail::checked_mul;
using detail::Linear;
using detail::ParameterRegistry;
using detail::RnnLayers;

void add_gru(ParameterRegistry& m, Linear& input, Linear& hidden, const std::string& prefix, std::size_t in, std::size_t h)
{
    const std::size_t gates = checked_mul(3, h, "RnnSeq2SeqModel: 3 × hidden_size");
    // nn.GRU's own names and order: weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0.
    input.in = in, input.out = gates, hidden.in = h, hidden.out = gates;
    input.weight = m.add(prefix + ".weight_ih_l0", {gates, in});
    hidden.weight = m.add(prefix + ".weight_hh_l0", {gates, h});
    input.bias = m.add(prefix + ".bias_ih_l0", {gates});
    hidden.bias = m.add(prefix + ".bias_hh_l0", {gates});
    m.linears.push_back(&input);
    m.linears.push_back(&hidden);
}

void add_linear(ParameterRegistry& m, Linear& linear, const std::string& prefix, std::size_t in, std::size_t out)
{
    m.add_linear(linear, prefix, in, out);
}

// A decoder's working buffers, sized once per call from the config (not from the steps).
struct Step {
    std::vector<float> embedded, gi, gh, joined, hidden, logits, scores;
};

// The encoder's states [S × H] for `source`, h_0 = 0.
std::vector<float> encode(const RnnLayers& L, const RnnSeq2SeqConfig& c, const std::vector<std::int32_t>& source)
{
    const std::size_t S = source.size(), E = c.embedding_dim, H = c.hidden_size;
    std::vector<float> x(checked_mul(S, E, "RnnSeq2SeqModel: source × embedding_dim"));
    for (std::size_t s = 0; s < S; ++s)
        std::copy_n(L.source_embedding->data.data() + std::size_t(source[s]) * E, E, x.data() + s * E);
    // The input projections of every word at once: one product instead of S.
    std::vector<float> gi(checked_mul(S, L.encoder_input.out, "RnnSeq2SeqModel: source × 3 × hidden_size"));
    L.encoder_input.apply(x.data(), S, gi.data());
    std::vector<float> states(checked_mul(S, H, "RnnSeq2SeqModel: source × hidden_size")), h(H, 0.f), gh(3 * H);
    for (std::size_t s = 0; s < S; ++s) {
        L.encoder_hidden.apply(h.data(), 1, gh.data());
        kernels::gru_gates{}(arch{}, gi.data() + s * 3 * H, gh.data(), h.data(), H);
        std::copy(h.begin(), h.end(), states.begin() + s * H);
    }
    return states;
}

// One decoder step from `token`: updates the state in st.hidden, writes the logits to st.logits and, for dot
// attention, the weights over the S encoder states to `weights`.
void decode_step(const RnnLayers& L, const RnnSeq2SeqConfig& c, std::int32_t token, const float* states, std::size_t S,
                 Step& st, float* weights)
{
    const std::size_t E = c.embedding_dim, H = c.hidden_size;
    std::copy_n(L.target_embedding->data.data() + std::size_t(token) * E, E, st.embedded.data());
    L.decoder_input.apply(st.embedded.data(), 1, st.gi.data());
    L.decoder_hidden.apply(st.hidden.data(), 1, st.gh.data());
    kernels::gru_gates{}(arch{}, st.gi.data(), st.gh.data(), st.hidden.data(), H);
    float* ctx = st.joined.data();
    if (c.attention == RnnAttention::dot) {
        // Luong's dot score, unscaled: a_s = softmax_s(h · h̄_s), context = Σ_s a_s h̄_s.
        float top = -INFINITY;
        for (std::size_t s = 0; s < S; ++s) {
            float dot = 0.f;
            for (std::size_t j = 0; j < H; ++j) dot += st.hidden[j] * states[s * H + j];
            st.scores[s] = dot;
            top = std::max(top, dot);
        }
        double sum = 0.0;
        for (std::size_t s = 0; s < S; ++s) sum += (st.scores[s] = std::exp(st.scores[s] - top));
        std::fill_n(ctx, H, 0.f);
        for (std::size_t s = 0; s < S; ++s) {
            const float w = float(st.scores[s] / sum);
            weights[s] = w;
            for (std::size_t j = 0; j < H; ++j) ctx[j] += w * states[s * H + j];
        }
        std::copy(st.hidden.begin(), st.hidden.end(), st.joined.begin() + H);  // [context; h], as torch.cat
    } else {
        std::copy(st.hidden.begin(), st.hidden.end(), st.joined.begin());
    }
    std::vector<float>& u = st.gi;  // free again: H ≤ 3H floats
    L.combine.apply(st.joined.data(), 1, u.data());
    for (std::size_t j = 0; j < H; ++j) u[j] = std::tanh(u[j]);
    L.out.apply(u.data(), 1, st.logits.data());
}

Step make_step(const RnnSeq2SeqConfig& c, const std::vector<float>& states, std::size_t S)
{
    const std::size_t H = c.hidden_size;
    Step st;
    st.embedded.resize(c.embedding_dim);
    st.gi.resize(3 * H);
    st.gh.resize(3 * H);
    st.joined.resize(c.attention == RnnAttention::dot ? 2 * H : H);
    st.hidden.assign(states.end() - std::ptrdiff_t(H), states.end());  // the fixed context vector
    st.logits.resize(c.tgt_vocab_size);
    st.scores.resize(S);
    return st;
}

}  // namespace

RnnSeq2SeqModel::RnnSeq2SeqModel(const RnnSeq2SeqConfig& c) : config_(c) { build(nullptr); }

RnnSeq2SeqModel::RnnSeq2SeqModel(const RnnSeq2SeqConfig& c, const std::map<std::string, TensorView>& state) : config_(c) { build(&state); }

RnnSeq2SeqModel::~RnnSeq2SeqModel() = default;

std::vector<std::string> RnnSeq2SeqModel::state_dict_keys() const { return parts_->keys; }
Shape RnnSeq2SeqModel::state_dict_shape(const std::string& key) const { return parts_->shape(key); }
void RnnSeq2SeqModel::load_state_dict(const std::map<std::string, TensorView>& state) { parts_->load(state); }

void RnnSeq2SeqModel::build(const std::map<std::string, TensorView>* state)
{
    parts_ = std::make_unique<ParameterRegistry>();
    ParameterRegistry& m = *parts_;
    m.expected = state;
    const RnnSeq2SeqConfig& c = config_;
    detail::check_sizes("RnnSeq2SeqModel", {{"src_vocab_size", c.src_vocab_size}, {"tgt_vocab_size", c.tgt_vocab_size},
                                            {"embedding_dim", c.embedding_dim}, {"hidden_size", c.hidden_size},
                                            {"max_src_len", c.max_src_len}, {"max_tgt_len", c.max_tgt_len}},
                        1, 1);
    if (c.max_tgt_len < 2) detail::model_error("RnnSeq2SeqModel: max_tgt_len must be at least 2 (BOS + one token), got 1");
    layers_ = std::make_unique<RnnLayers>();
    RnnLayers& L = *layers_;
    L.source_embedding = m.add("src_emb.weight", {c.src_vocab_size, c.embedding_dim});
    L.target_embedding = m.add("tgt_emb.weight", {c.tgt_vocab_size, c.embedding_dim});
    add_gru(m, L.encoder_input, L.encoder_hidden, "encoder", c.embedding_dim, c.hidden_size);
    add_gru(m, L.decoder_input, L.decoder_hidden, "decoder", c.embedding_dim, c.hidden_size);
    const std::size_t joined = c.attention == RnnAttention::dot ? checked_mul(2, c.hidden_size, "RnnSeq2SeqModel: 2 × hidden_size")
                                                                : c.hidden_size;
    add_linear(m, L.combine, "combine", joined, c.hidden_size);
    add_linear(m, L.out, "out", c.hidden_size, c.tgt_vocab_size);
    m.expected = nullptr;
    if (state) m.load(*state);  // repacks every Linear
    else m.repack_all();
}

RnnSeq2SeqModel::Output RnnSeq2SeqModel::forward(const std::vector<std::int32_t>& source,
                                                 const std::vector<std::int32_t>& target)
{
    detail::check_tokens("RnnSeq2SeqModel.forward: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("RnnSeq2SeqModel.forward: target", target, config_.tgt_vocab_size, config_.max_tgt_len);
    const std::size_t S = source.size(), T = target.size(), V = config_.tgt_vocab_size;
    const std::vector<float> states = encode(*layers_, config_, source);
    Step st = make_step(config_, states, S);
    Output out;
    out.logits = Tensor({T, V});
    const bool dot = config_.attention == RnnAttention::dot;
    if (dot) out.attention = Tensor({T, S});
    for (std::size_t t = 0; t < T; ++t) {
        decode_step(*layers_, config_, target[t], states.data(), S, st, dot ? out.attention.data.data() + t * S : nullptr);
        std::copy(st.logits.begin(), st.logits.end(), out.logits.data.begin() + t * V);
    }
    return out;
}

RnnSeq2SeqModel::Translation RnnSeq2SeqModel::translate(const std::vector<std::int32_t>& source, std::int32_t bos,
                                                        std::int32_t eos, std::size_t max_steps)
{
    detail::check_tokens("RnnSeq2SeqModel.translate: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("RnnSeq2SeqModel.translate: bos", {bos}, config_.tgt_vocab_size, 1);
    detail::check_tokens("RnnSeq2SeqModel.translate: eos", {eos}, config_.tgt_vocab_size, 1);
    const std::size_t S = source.size(), H = config_.hidden_size;
    const std::size_t steps = std::min(max_steps, max_steps_limit());
    const bool dot = config_.attention == RnnAttention::dot;
    Translation out;
    std::vector<float> states = encode(*layers_, config_, source);
    Step st = make_step(config_, states, S);
    out.context = st.hidden;
    std::vector<float> weights, decoder_states, row(dot ? S : 0);
    std::int32_t token = bos;
    for (std::size_t t = 0; t < steps; ++t) {
        decode_step(*layers_, config_, token, states.data(), S, st, row.data());
        token = detail::argmax(st.logits.data(), st.logits.size());
        out.tokens.push_back(token);
        weights.insert(weights.end(), row.begin(), row.end());
        decoder_states.insert(decoder_states.end(), st.hidden.begin(), st.hidden.end());
        if (token == eos) break;
    }
    const std::size_t N = out.tokens.size();
    out.decoder_states = Tensor({N, H}, std::move(decoder_states));
    if (dot) out.attention = Tensor({N, S}, std::move(weights));
    out.encoder_states = Tensor({S, H}, std::move(states));
    return out;
}

}  // namespace attnscope
