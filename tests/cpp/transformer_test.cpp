// LanguageModel and Seq2SeqModel: the cached greedy paths agree with the teacher-forced passes, state dicts are strict,
// misuse is reported. (Agreement with PyTorch is in model_golden_test.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "attnscope/transformer.hpp"
#include "test_utils.hpp"

namespace transformer_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using Catch::Contains;

namespace {

// Random parameters (attnscope_test::random_state), loaded.
template <class Model>
void randomise(Model& model, std::uint32_t seed)
{
    model.load_state_dict(attnscope_test::views(attnscope_test::random_state(model, seed)));
}

std::int32_t argmax_row(const Tensor& logits, std::size_t row)
{
    const std::size_t V = logits.shape[1];
    const float* r = logits.data.data() + row * V;
    return std::int32_t(std::max_element(r, r + V) - r);
}

}  // namespace

TEST_CASE("LanguageModel: names, shapes, and every attention row sums to 1", "[transformer]")
{
    LanguageModel lm({/*vocab*/ 11, /*max_len*/ 16, /*d*/ 8, /*heads*/ 2, /*d_ff*/ 12, /*layers*/ 2});
    const auto keys = lm.state_dict_keys();
    REQUIRE(keys.front() == "tok_emb.weight");
    REQUIRE(std::count(keys.begin(), keys.end(), "blocks.1.attn.in_proj_weight") == 1);
    REQUIRE(lm.state_dict_shape("blocks.0.mlp.fc1.weight") == Shape{12, 8});
    REQUIRE(lm.state_dict_shape("head.weight") == Shape{11, 8});
    randomise(lm, 1);
    const auto out = lm.forward({1, 5, 2, 9, 3});
    REQUIRE(out.logits.shape == Shape{5, 11});
    REQUIRE(out.attention.shape == Shape{2, 2, 5, 5});
    for (std::size_t row = 0; row < 2 * 2 * 5; ++row) {
        const std::size_t i = row % 5;
        float sum = 0.f;
        for (std::size_t j = 0; j < 5; ++j) {
            const float w = out.attention.data[row * 5 + j];
            if (j > i) REQUIRE(w == 0.f);  // causal
            sum += w;
        }
        REQUIRE(sum == Approx(1.f).epsilon(1e-5));
    }
    const auto without = lm.forward({1, 5, 2, 9, 3}, false);
    REQUIRE(without.attention.data.empty());
    REQUIRE(max_relative_error(without.logits.data, out.logits.data) < 1e-5);
}

TEST_CASE("LanguageModel: cached greedy generation equals argmax of full passes", "[transformer]")
{
    LanguageModel lm({13, 12, 16, 4, 32, 3});
    randomise(lm, 2);
    std::vector<std::int32_t> tokens = {3, 1, 4};
    const auto generated = lm.generate(tokens, 6);
    REQUIRE(generated.size() == 6);
    for (std::int32_t next : generated) {
        const auto full = lm.forward(tokens, false);
        REQUIRE(next == argmax_row(full.logits, tokens.size() - 1));
        tokens.push_back(next);
    }
    // It stops at max_len, and right after the stop token.
    REQUIRE(lm.generate({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 20).size() == 3);
    const std::int32_t first = lm.generate({3, 1, 4}, 1)[0];
    REQUIRE(lm.generate({3, 1, 4}, 5, first) == std::vector<std::int32_t>{first});
}

TEST_CASE("Seq2SeqModel: greedy decoding with caches matches the teacher-forced pass on its own output", "[transformer]")
{
    Seq2SeqModel model({/*src vocab*/ 9, /*tgt vocab*/ 7, /*max src*/ 10, /*max tgt*/ 8, /*d*/ 8, /*heads*/ 2, /*d_ff*/ 16, 2, 2});
    randomise(model, 3);
    const std::vector<std::int32_t> source = {1, 4, 2, 8, 5};
    const std::int32_t bos = 1, eos = 2;
    const auto decoded = model.translate(source, bos, eos, 8);
    REQUIRE(!decoded.tokens.empty());
    const std::size_t N = decoded.tokens.size();
    REQUIRE(decoded.cross_attention.shape == Shape{2, 2, N, 5});
    REQUIRE(decoded.decoder_attention.shape == Shape{2, 2, N, N});

    std::vector<std::int32_t> target = {bos};
    target.insert(target.end(), decoded.tokens.begin(), decoded.tokens.end() - 1);
    const auto forced = model.forward(source, target);
    for (std::size_t t = 0; t < N; ++t) REQUIRE(argmax_row(forced.logits, t) == decoded.tokens[t]);
    REQUIRE(max_relative_error(decoded.cross_attention.data, forced.cross_attention.data) < 1e-5);
    REQUIRE(max_relative_error(decoded.decoder_attention.data, forced.decoder_attention.data) < 1e-5);
    REQUIRE(max_relative_error(decoded.encoder_attention.data, forced.encoder_attention.data) < 1e-6);
    REQUIRE(forced.cross_attention.shape == Shape{2, 2, N, 5});
}

TEST_CASE("models reject bad sizes, tokens and state dicts", "[transformer][errors]")
{
    REQUIRE_THROWS_WITH(LanguageModel({10, 8, 6, 4, 8, 1}), Contains("d_model (6) must be divisible by num_heads (4)"));
    REQUIRE_THROWS_WITH(LanguageModel({10, 8, 8, 2, 8, 0}), Contains("num_layers must be at least 1, got 0"));
    LanguageModel lm({10, 4, 8, 2, 8, 1});
    REQUIRE_THROWS_WITH(lm.forward({1, 10}), Contains("tokens[1]: expected a token id from 0 to 9, got 10"));
    REQUIRE_THROWS_WITH(lm.forward({1, 2, 3, 4, 5}), Contains("tokens: expected from 1 to 4 token ids (the model's limit), got 5"));
    REQUIRE_THROWS_WITH(lm.forward({}), Contains("tokens: expected from 1 to 4 token ids (the model's limit), got 0"));
    REQUIRE_THROWS_WITH(lm.state_dict_shape("blocks.0.attn.bias_k"), Contains("unexpected key 'blocks.0.attn.bias_k'"));

    std::vector<Tensor> storage;
    std::map<std::string, TensorView> state;
    for (const std::string& key : lm.state_dict_keys()) {
        storage.emplace_back(lm.state_dict_shape(key));
        state.emplace(key, TensorView(storage.back()));
    }
    auto missing = state;
    missing.erase("ln_f.bias");
    REQUIRE_THROWS_WITH(lm.load_state_dict(missing), Contains("missing key 'ln_f.bias' of shape [8]"));
    auto wrong = state;
    const Tensor small({3, 3});
    wrong.at("blocks.0.attn.out_proj.weight") = TensorView(small);
    REQUIRE_THROWS_WITH(lm.load_state_dict(wrong), Contains("'blocks.0.attn.out_proj.weight': expected shape [8, 8], got [3, 3]"));
    REQUIRE_NOTHROW(lm.load_state_dict(state));
}

}  // namespace transformer_test
