// trace() of LanguageModel and Seq2SeqModel (encoder, decoder and cross-attention): the weights are forward()'s own
// row bit for bit; q, k, v, the scores, the softmax, the context, the head's output and the attention's output
// agree with a double-precision reference computed here from the layer's weights and the trace's own inputs; the
// heads' outputs add up to the attention's; ablation shows; every index out of range is refused by name.
#include <catch2/catch.hpp>

#include <cmath>

#include "../reference/reference.hpp"
#include "attnscope/transformer.hpp"
#include "test_utils.hpp"

namespace transformer_trace_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using Catch::Contains;

namespace {

using State = std::map<std::string, Tensor>;

// Random parameters (attnscope_test::random_state), loaded and returned by name.
template <class Model>
State randomise(Model& model, std::uint32_t seed)
{
    State state = attnscope_test::random_state(model, seed);
    model.load_state_dict(attnscope_test::views(state));
    return state;
}

// One attention sublayer: its MultiHeadAttention parameters and LayerNorm, by their names in the model.
struct Sublayer {
    State attention;  // in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias
    const Tensor* gamma;
    const Tensor* beta;
};

Sublayer sublayer(const State& state, const std::string& attention, const std::string& norm)
{
    Sublayer s;
    for (const char* key : {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"})
        s.attention.emplace(key, state.at(attention + "." + key));
    s.gamma = &state.at(norm + ".weight");
    s.beta = &state.at(norm + ".bias");
    return s;
}

// nn.LayerNorm (eps 1e-5) of each row, in double.
std::vector<double> layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta)
{
    const std::size_t rows = x.shape[0], d = x.shape[1];
    std::vector<double> y(rows * d);
    for (std::size_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (std::size_t c = 0; c < d; ++c) mean += x.data[r * d + c];
        mean /= double(d);
        for (std::size_t c = 0; c < d; ++c) var += (x.data[r * d + c] - mean) * (x.data[r * d + c] - mean);
        const double inv = 1.0 / std::sqrt(var / double(d) + 1e-5);
        for (std::size_t c = 0; c < d; ++c) y[r * d + c] = (x.data[r * d + c] - mean) * inv * gamma.data[c] + beta.data[c];
    }
    return y;
}

// Rows [first, first + count) of W·x + b for one input row x (W [out, in] as PyTorch stores it), in double.
std::vector<double> project(const float* x, std::size_t in, const Tensor& w, const Tensor& b, std::size_t first,
                            std::size_t count)
{
    std::vector<double> y(count);
    for (std::size_t o = 0; o < count; ++o) {
        double s = b.data[first + o];
        for (std::size_t i = 0; i < in; ++i) s += double(w.data[(first + o) * in + i]) * x[i];
        y[o] = s;
    }
    return y;
}

// Everything a trace shows checked against the reference, for a model of width E with H heads. `forward_row` is
// forward()'s weights row of this layer, head and query; `ablated` the layer's head flags (null: none).
void check_trace(const AttentionTrace& t, const Sublayer& p, std::size_t E, std::size_t H, bool causal,
                 const float* forward_row, const std::uint8_t* ablated)
{
    const std::size_t hd = E / H, T = t.attention_input.shape[0], i = t.query, col = t.head * hd;
    const Tensor& kv = t.key_input.data.empty() ? t.attention_input : t.key_input;
    const std::size_t S = kv.shape[0];
    const Tensor &w_in = p.attention.at("in_proj_weight"), &b_in = p.attention.at("in_proj_bias");
    const Tensor& w_out = p.attention.at("out_proj.weight");
    REQUIRE(t.layer_input.shape == Shape{T, E});
    REQUIRE(t.weights.shape == Shape{S});
    CHECK(t.kv_head == t.head);

    // The weights are forward()'s own row, bit for bit.
    CHECK(t.weights.data == std::vector<float>(forward_row, forward_row + S));
    // What q is projected from is the LayerNorm of the layer's input.
    CHECK(max_relative_error(t.attention_input.data, layer_norm(t.layer_input, *p.gamma, *p.beta)) < 1e-5);

    // q, k, v of the head: the q, k and v blocks of in_proj (rows 0, E, 2E), this head's slice of each.
    const auto q = project(t.attention_input.data.data() + i * E, E, w_in, b_in, col, hd);
    CHECK(max_relative_error(t.query_raw.data, q) < 1e-5);
    CHECK(t.query_final.data == t.query_raw.data);  // no RoPE or QK-norm here
    std::vector<double> k(S * hd), v(S * hd), scores(S), weights(S);
    for (std::size_t j = 0; j < S; ++j) {
        const auto kj = project(kv.data.data() + j * E, E, w_in, b_in, E + col, hd);
        const auto vj = project(kv.data.data() + j * E, E, w_in, b_in, 2 * E + col, hd);
        std::copy(kj.begin(), kj.end(), k.begin() + j * hd);
        std::copy(vj.begin(), vj.end(), v.begin() + j * hd);
        for (std::size_t c = 0; c < hd; ++c) scores[j] += q[c] * kj[c];
    }
    CHECK(max_relative_error(t.keys_raw.data, k) < 1e-5);
    CHECK(t.keys_final.data == t.keys_raw.data);
    CHECK(max_relative_error(t.values.data, v) < 1e-5);
    CHECK(max_relative_error(t.scores.data, scores) < 1e-5);
    CHECK(t.scale == Approx(1.0 / std::sqrt(double(hd))));

    // softmax(scores / √hd) over the visible keys.
    double largest = -INFINITY, sum = 0;
    for (std::size_t j = 0; j < S; ++j) {
        const bool visible = !causal || j <= i;
        CHECK(t.visible[j] == (visible ? 1 : 0));
        if (visible) largest = std::max(largest, scores[j] / std::sqrt(double(hd)));
    }
    for (std::size_t j = 0; j < S; ++j)
        sum += weights[j] = t.visible[j] ? std::exp(scores[j] / std::sqrt(double(hd)) - largest) : 0.0;
    for (std::size_t j = 0; j < S; ++j) CHECK(std::fabs(weights[j] / sum - t.weights.data[j]) < 1e-6);

    // The context (zero when the head is off) and its share of the output projection.
    const bool off = ablated && ablated[t.head];
    std::vector<double> context(hd, 0.0), head_output(E, 0.0);
    for (std::size_t c = 0; c < hd && !off; ++c)
        for (std::size_t j = 0; j < S; ++j) context[c] += weights[j] / sum * v[j * hd + c];
    for (std::size_t o = 0; o < E; ++o)
        for (std::size_t c = 0; c < hd; ++c) head_output[o] += double(w_out.data[o * E + col + c]) * context[c];
    if (off) CHECK(t.context.data == std::vector<float>(hd, 0.f));
    else CHECK(max_relative_error(t.context.data, context) < 1e-5);
    CHECK(max_relative_error(t.head_output.data, head_output) < 1e-5);

    // The attention's output row: the whole layer, every head, in the reference.
    ForwardOptions options;
    options.causal = causal;
    options.ablate_heads = ablated;
    const auto ref = reference::multihead_attention(p.attention, E, H, E, E, 1, T, S, t.attention_input.data.data(),
                                                    kv.data.data(), kv.data.data(), options);
    CHECK(max_relative_error(t.attention_output.data, std::vector<double>(ref.output.begin() + i * E,
                                                                          ref.output.begin() + (i + 1) * E)) < 1e-5);
}

// Σ over heads of head_output + out_proj.bias is the attention's output row.
void check_heads_add_up(const std::vector<AttentionTrace>& heads, const Sublayer& p)
{
    const Tensor& bias = p.attention.at("out_proj.bias");
    std::vector<double> sum(bias.data.begin(), bias.data.end());
    for (const AttentionTrace& t : heads) {
        CHECK(t.attention_output.data == heads[0].attention_output.data);
        for (std::size_t o = 0; o < sum.size(); ++o) sum[o] += t.head_output.data[o];
    }
    CHECK(max_relative_error(heads[0].attention_output.data, sum) < 1e-5);
}

}  // namespace

TEST_CASE("LanguageModel.trace: forward()'s weights, and every number against the reference", "[transformer][trace]")
{
    const std::size_t E = 16, H = 4, L = 3;
    LanguageModel lm({/*vocab*/ 11, /*max_len*/ 12, E, H, /*d_ff*/ 24, L});
    const State state = randomise(lm, 7);
    const std::vector<std::int32_t> tokens = {1, 5, 2, 9, 3, 3, 10};
    const std::size_t T = tokens.size();
    HeadMask ablate(L * H, 0);
    ablate[0 * H + 2] = 1;  // layer 0 head 2 off: a later layer's input changes, layer 0's own trace shows it
    for (const HeadMask& mask : {HeadMask{}, ablate}) {
        const auto out = lm.forward(tokens, true, mask);
        for (std::size_t layer = 0; layer < L; ++layer) {
            const Sublayer p = sublayer(state, "blocks." + std::to_string(layer) + ".attn", "blocks." + std::to_string(layer) + ".ln1");
            for (std::size_t query : {std::size_t(0), std::size_t(4), T - 1}) {
                std::vector<AttentionTrace> heads;
                for (std::size_t head = 0; head < H; ++head) {
                    CAPTURE(mask.size(), layer, query, head);
                    heads.push_back(lm.trace(tokens, layer, head, query, mask));
                    const AttentionTrace& t = heads.back();
                    CHECK((t.layer == layer && t.head == head && t.query == query));
                    CHECK(t.key_input.data.empty());
                    const float* row = out.attention.data.data() + ((layer * H + head) * T + query) * T;
                    check_trace(t, p, E, H, true, row, mask.empty() ? nullptr : mask.data() + layer * H);
                }
                check_heads_add_up(heads, p);
            }
        }
    }
    // Layer 0's input is the token and position embeddings; the ablation of layer 0 changes layer 1's input only.
    const AttentionTrace first = lm.trace(tokens, 0, 0, 0);
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t c = 0; c < E; ++c)
            CHECK(first.layer_input.data[t * E + c] == state.at("tok_emb.weight").data[std::size_t(tokens[t]) * E + c] +
                                                          state.at("pos_emb.weight").data[t * E + c]);
    CHECK(lm.trace(tokens, 0, 1, 3, ablate).layer_input.data == lm.trace(tokens, 0, 1, 3).layer_input.data);
    CHECK(lm.trace(tokens, 1, 1, 3, ablate).layer_input.data != lm.trace(tokens, 1, 1, 3).layer_input.data);
    const AttentionTrace off = lm.trace(tokens, 0, 2, 5, ablate);
    CHECK(off.weights.data == lm.trace(tokens, 0, 2, 5).weights.data);  // still shown
    CHECK(off.head_output.data == std::vector<float>(E, 0.f));
}

TEST_CASE("Seq2SeqModel.trace: encoder, decoder and cross-attention against forward() and the reference",
          "[transformer][trace]")
{
    const std::size_t E = 16, H = 4, Le = 2, Ld = 3;
    Seq2SeqModel model({/*src_vocab*/ 13, /*tgt_vocab*/ 9, /*max_src*/ 10, /*max_tgt*/ 8, E, H, /*d_ff*/ 24, Le, Ld});
    const State state = randomise(model, 11);
    const std::vector<std::int32_t> source = {3, 12, 4, 4, 7, 1}, target = {0, 5, 8, 2};
    const std::size_t S = source.size(), T = target.size();
    Seq2SeqAblation ablate;
    ablate.encoder_self.assign(Le * H, 0);
    ablate.encoder_self[1 * H + 3] = 1;
    ablate.decoder_cross.assign(Ld * H, 0);
    ablate.decoder_cross[0 * H + 1] = 1;
    for (const Seq2SeqAblation& mask : {Seq2SeqAblation{}, ablate}) {
        const auto out = model.forward(source, target, true, mask);
        struct Kind {
            Seq2SeqAttention which;
            std::size_t layers, rows, keys;
            const Tensor& forward;
            const HeadMask& flags;
            const char *attention, *norm;
            bool causal;
        };
        const Kind kinds[] = {
            {Seq2SeqAttention::encoder_self, Le, S, S, out.encoder_attention, mask.encoder_self, "enc_blocks.%.attn", "enc_blocks.%.ln1", false},
            {Seq2SeqAttention::decoder_self, Ld, T, T, out.decoder_attention, mask.decoder_self, "dec_blocks.%.self_attn", "dec_blocks.%.ln1", true},
            {Seq2SeqAttention::decoder_cross, Ld, T, S, out.cross_attention, mask.decoder_cross, "dec_blocks.%.cross_attn", "dec_blocks.%.ln2", false},
        };
        for (const Kind& k : kinds)
            for (std::size_t layer = 0; layer < k.layers; ++layer) {
                auto name = [&](std::string pattern) { return pattern.replace(pattern.find('%'), 1, std::to_string(layer)); };
                const Sublayer p = sublayer(state, name(k.attention), name(k.norm));
                for (std::size_t query : {std::size_t(0), k.rows - 1}) {
                    std::vector<AttentionTrace> heads;
                    for (std::size_t head = 0; head < H; ++head) {
                        CAPTURE(int(k.which), mask.encoder_self.size(), layer, query, head);
                        heads.push_back(model.trace(source, target, k.which, layer, head, query, mask));
                        const AttentionTrace& t = heads.back();
                        // Cross-attention reads the encoder's output [S, d]; the other two read their own input.
                        CHECK(t.key_input.shape == (k.which == Seq2SeqAttention::decoder_cross ? Shape{S, E} : Shape{}));
                        const float* row = k.forward.data.data() + ((layer * H + head) * k.rows + query) * k.keys;
                        check_trace(t, p, E, H, k.causal, row, k.flags.empty() ? nullptr : k.flags.data() + layer * H);
                    }
                    check_heads_add_up(heads, p);
                }
            }
    }
    // The encoder's trace needs no target, and is the same with one; every cross-attention layer reads one memory.
    CHECK(model.trace(source, {}, Seq2SeqAttention::encoder_self, 1, 2, 3).weights.data ==
          model.trace(source, target, Seq2SeqAttention::encoder_self, 1, 2, 3).weights.data);
    CHECK(model.trace(source, target, Seq2SeqAttention::decoder_cross, 0, 0, 1).key_input.data ==
          model.trace(source, target, Seq2SeqAttention::decoder_cross, 2, 3, 2).key_input.data);
}

TEST_CASE("trace refuses a layer, head or query out of range, and bad input, naming the call", "[transformer][trace][errors]")
{
    LanguageModel lm({11, 8, 8, 2, 12, 3});
    const std::vector<std::int32_t> tokens = {1, 2, 3};
    REQUIRE_THROWS_WITH(lm.trace(tokens, 3, 0, 0), "LanguageModel.trace: layer: expected 0 to 2, got 3");
    REQUIRE_THROWS_WITH(lm.trace(tokens, 0, 2, 0), "LanguageModel.trace: head: expected 0 to 1, got 2");
    REQUIRE_THROWS_WITH(lm.trace(tokens, 0, 0, 3), "LanguageModel.trace: query: expected 0 to 2 (one per token), got 3");
    REQUIRE_THROWS_WITH(lm.trace({1, 11}, 0, 0, 0), Contains("LanguageModel.trace: tokens[1]: expected a token id from 0 to 10, got 11"));
    REQUIRE_THROWS_WITH(lm.trace({}, 0, 0, 0), Contains("LanguageModel.trace: tokens: expected from 1 to 8 token ids (the model's limit), got 0"));
    REQUIRE_THROWS_WITH(lm.trace(tokens, 0, 0, 0, HeadMask(5, 0)), Contains("LanguageModel.trace: ablate"));
    REQUIRE_NOTHROW(lm.trace(tokens, 2, 1, 2));

    Seq2SeqModel s2s({13, 9, 10, 8, 8, 2, 12, /*encoder layers*/ 2, /*decoder layers*/ 3});
    const std::vector<std::int32_t> source = {1, 2, 3, 4, 5}, target = {0, 1};
    using A = Seq2SeqAttention;
    REQUIRE_THROWS_WITH(s2s.trace(source, target, A::encoder_self, 2, 0, 0),
                        "Seq2SeqModel.trace: layer: expected 0 to 1 (the encoder's layers), got 2");
    REQUIRE_THROWS_WITH(s2s.trace(source, target, A::decoder_cross, 3, 0, 0),
                        "Seq2SeqModel.trace: layer: expected 0 to 2 (the decoder's layers), got 3");
    REQUIRE_THROWS_WITH(s2s.trace(source, target, A::decoder_self, 0, 2, 0), "Seq2SeqModel.trace: head: expected 0 to 1, got 2");
    REQUIRE_THROWS_WITH(s2s.trace(source, target, A::encoder_self, 0, 0, 5),
                        "Seq2SeqModel.trace: query: expected 0 to 4 (one per source token), got 5");
    REQUIRE_THROWS_WITH(s2s.trace(source, target, A::decoder_cross, 0, 0, 2),
                        "Seq2SeqModel.trace: query: expected 0 to 1 (one per target token), got 2");
    REQUIRE_THROWS_WITH(s2s.trace(source, {}, A::decoder_self, 0, 0, 0),
                        Contains("Seq2SeqModel.trace: target: expected from 1 to 8 token ids (the model's limit), got 0"));
    REQUIRE_THROWS_WITH(s2s.trace({13}, target, A::encoder_self, 0, 0, 0), Contains("Seq2SeqModel.trace: source[0]"));
    REQUIRE_THROWS_WITH(s2s.trace(source, {9}, A::encoder_self, 0, 0, 0), Contains("Seq2SeqModel.trace: target[0]"));
    Seq2SeqAblation wrong;
    wrong.decoder_cross.assign(4, 0);
    REQUIRE_THROWS_WITH(s2s.trace(source, target, A::decoder_cross, 0, 0, 0, wrong), Contains("Seq2SeqModel.trace: ablate.decoder_cross"));
    REQUIRE_NOTHROW(s2s.trace(source, target, A::decoder_cross, 2, 1, 1));
}

}  // namespace transformer_trace_test
