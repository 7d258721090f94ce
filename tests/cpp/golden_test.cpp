// The PyTorch golden cases (tests/fixtures/golden, made by make_fixtures.py) through the C++ API.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnscope/attnscope.hpp"
#include "fixture_reader.hpp"
#include "test_utils.hpp"

namespace golden_test {

using namespace attnscope;
using attnscope_test::FixtureCase;
using attnscope_test::FixtureTensor;
using attnscope_test::max_relative_error;

namespace {

// PyTorch's float32 round-off on these cases is about 2e-6 of the largest magnitude; ours must stay within 1e-5.
constexpr double tolerance = 1e-5;

const std::vector<FixtureCase>& fixtures()
{
    static const auto all = attnscope_test::load_fixture_dir(ATTNSCOPE_FIXTURE_DIR);
    return all;
}

TensorView view(const FixtureTensor& t) { return TensorView(t.f32.data(), t.shape); }

MaskView mask_view(const FixtureTensor& t)
{
    return t.dtype == "u8" ? MaskView::boolean(t.u8.data(), t.shape) : MaskView::additive(t.f32.data(), t.shape);
}

std::size_t count_kind(const std::string& kind)
{
    std::size_t n = 0;
    for (const auto& c : fixtures()) n += c.strs.count("kind") && c.strs.at("kind") == kind;
    return n;
}

}  // namespace

TEST_CASE("golden fixtures are present", "[golden]")
{
    REQUIRE(count_kind("mha") >= 30);
    REQUIRE(count_kind("sdpa") >= 10);
}

TEST_CASE("multi-head attention matches PyTorch on every golden case", "[golden][mha]")
{
    for (const FixtureCase& c : fixtures()) {
        if (c.strs.at("kind") != "mha") continue;
        SECTION(c.name)
        {
            MultiHeadAttentionConfig config;
            config.embed_dim = std::size_t(c.get_int("embed_dim"));
            config.num_heads = std::size_t(c.get_int("num_heads"));
            config.kdim = std::size_t(c.get_int("kdim"));
            config.vdim = std::size_t(c.get_int("vdim"));
            config.bias = c.get_int("bias") != 0;
            MultiHeadAttention mha(config);

            std::map<std::string, TensorView> state;
            for (const std::string& key : mha.state_dict_keys()) state.emplace(key, view(c.tensor(key)));
            mha.load_state_dict(state);

            ForwardOptions options;
            options.causal = c.get_int("causal") != 0;
            options.need_weights = c.get_int("need_weights") != 0;
            options.average_weights = c.get_int("average_weights") != 0;
            if (c.has("key_padding_mask")) options.key_padding_mask = mask_view(c.tensor("key_padding_mask"));
            if (c.has("attn_mask")) options.attn_mask = mask_view(c.tensor("attn_mask"));

            const TensorView query = view(c.tensor("query"));
            const bool self = c.get_int("self_attention") != 0;
            const AttentionResult r = self ? mha.forward(query, options)
                                           : mha.forward(query, view(c.tensor("key")), view(c.tensor("value")), options);

            const FixtureTensor& expected_output = c.tensor("expected_output");
            REQUIRE(r.output.shape == expected_output.shape);
            const double output_error = max_relative_error(r.output.data, expected_output.f32);
            CAPTURE(output_error);
            CHECK(output_error < tolerance);
            if (options.need_weights) {
                const FixtureTensor& expected_weights = c.tensor("expected_weights");
                REQUIRE(r.weights.shape == expected_weights.shape);
                const double weights_error = max_relative_error(r.weights.data, expected_weights.f32);
                CAPTURE(weights_error);
                CHECK(weights_error < tolerance);
            } else {
                CHECK(!c.has("expected_weights"));
                CHECK(r.weights.data.empty());
            }
        }
    }
}

TEST_CASE("scaled_dot_product_attention matches PyTorch on every golden case", "[golden][sdpa]")
{
    for (const FixtureCase& c : fixtures()) {
        if (c.strs.at("kind") != "sdpa") continue;
        SECTION(c.name)
        {
            SdpaOptions options;
            options.causal = c.get_int("causal") != 0;
            if (c.floats.count("scale")) options.scale = float(c.floats.at("scale"));
            if (c.has("attn_mask")) options.attn_mask = mask_view(c.tensor("attn_mask"));
            const AttentionResult r =
                scaled_dot_product_attention(view(c.tensor("q")), view(c.tensor("k")), view(c.tensor("v")), options);
            const FixtureTensor& expected_output = c.tensor("expected_output");
            const FixtureTensor& expected_weights = c.tensor("expected_weights");
            REQUIRE(r.output.shape == expected_output.shape);
            REQUIRE(r.weights.shape == expected_weights.shape);
            CHECK(max_relative_error(r.output.data, expected_output.f32) < tolerance);
            CHECK(max_relative_error(r.weights.data, expected_weights.f32) < tolerance);
        }
    }
}

}  // namespace golden_test
