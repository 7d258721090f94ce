// Every misuse of the C++ API throws, and the message names the argument, what was expected and what was given.
#include <catch2/catch.hpp>

#include <limits>
#include <stdexcept>

#include "attnscope/attnscope.hpp"
#include "test_utils.hpp"

namespace errors_test {

using namespace attnscope;
using Catch::Contains;

TEST_CASE("constructor rejects zero sizes and indivisible heads", "[errors]")
{
    REQUIRE_THROWS_AS(MultiHeadAttention({0, 1}), std::invalid_argument);
    REQUIRE_THROWS_WITH(MultiHeadAttention({0, 1}), Contains("embed_dim must be at least 1, got 0"));
    REQUIRE_THROWS_WITH(MultiHeadAttention({8, 0}), Contains("num_heads must be at least 1, got 0"));
    REQUIRE_THROWS_WITH(MultiHeadAttention({10, 3}), Contains("embed_dim (10) must be divisible by num_heads (3)"));
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
    REQUIRE_THROWS_AS(MultiHeadAttention({huge, 1}), std::length_error);
}

TEST_CASE("forward rejects wrong shapes and masks", "[errors]")
{
    MultiHeadAttention mha({8, 2, 0, 0, true, 0});
    const auto data = attnscope_test::random_floats(200, 1);
    const TensorView x(data.data(), {2, 3, 8});

    REQUIRE_THROWS_WITH(mha.forward(TensorView(data.data(), {2, 3, 7})),
                        Contains("query") && Contains("embed_dim = 8") && Contains("[2, 3, 7]"));
    REQUIRE_THROWS_WITH(mha.forward(TensorView(data.data(), {24})),
                        Contains("query: expected shape [batch, query_len, 8] or [query_len, 8], got [24]"));
    REQUIRE_THROWS_WITH(mha.forward(x, TensorView(data.data(), {2, 4, 6}), TensorView(data.data(), {2, 4, 8})),
                        Contains("key: expected shape [2, key_len, 8]") && Contains("got [2, 4, 6]"));
    REQUIRE_THROWS_WITH(mha.forward(x, TensorView(data.data(), {2, 4, 8}), TensorView(data.data(), {2, 5, 8})),
                        Contains("value") && Contains("got [2, 5, 8]"));
    REQUIRE_THROWS_WITH(mha.forward(TensorView(data.data(), {2, 0, 8})), Contains("query length must be at least 1, got 0"));

    std::vector<std::uint8_t> mask(64, 0);
    ForwardOptions options;
    options.key_padding_mask = MaskView::boolean(mask.data(), {3, 3});
    REQUIRE_THROWS_WITH(mha.forward(x, options), Contains("key_padding_mask: expected shape [2, 3], got [3, 3]"));
    options = {};
    options.attn_mask = MaskView::boolean(mask.data(), {3, 4});
    REQUIRE_THROWS_WITH(mha.forward(x, options), Contains("attn_mask: expected shape [3, 3] or [4, 3, 3], got [3, 4]"));
    options.attn_mask = MaskView::boolean(mask.data(), {2, 3, 3});
    REQUIRE_THROWS_WITH(mha.forward(x, options), Contains("got [2, 3, 3]"));

    std::vector<float> out(48);
    REQUIRE_THROWS_WITH(mha.forward(data.data(), data.data(), data.data(), {2, 3, 3}, {}, out.data(), nullptr),
                        Contains("weights must not be null"));
    // Still usable after every error above.
    REQUIRE(mha.forward(x).output.shape == Shape{2, 3, 8});
}

TEST_CASE("scaled_dot_product_attention rejects mismatched shapes", "[errors]")
{
    const auto data = attnscope_test::random_floats(100, 2);
    const TensorView q(data.data(), {2, 3, 4});
    REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, TensorView(data.data(), {2, 5, 3}), TensorView(data.data(), {2, 5, 4})),
                        Contains("k: expected shape [2, key_len, 4]") && Contains("got [2, 5, 3]"));
    REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, TensorView(data.data(), {2, 5, 4}), TensorView(data.data(), {2, 6, 4})),
                        Contains("v: expected shape [2, 5, value_dim]") && Contains("got [2, 6, 4]"));
    REQUIRE_THROWS_WITH(scaled_dot_product_attention(TensorView(data.data(), {4}), q, q),
                        Contains("q: expected at least 2 dimensions"));
    SdpaOptions options;
    std::vector<std::uint8_t> mask(100);
    options.attn_mask = MaskView::boolean(mask.data(), {3, 4});
    REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, q, q, options),
                        Contains("attn_mask: expected shape [3, 3] or [2, 3, 3], got [3, 4]"));
}

TEST_CASE("Tensor rejects data of the wrong size", "[errors]")
{
    REQUIRE_THROWS_WITH(Tensor({2, 3}, std::vector<float>(5)), Contains("5 values") && Contains("[2, 3]") && Contains("6"));
}

TEST_CASE("sizes whose workspace cannot exist: validate() and forward() both throw length_error", "[errors]")
{
    // Found by the fuzzer: one workspace part alone above SIZE_MAX/4 floats used to wrap the size check, and
    // validate() used to pass sizes forward() rejects.
    MultiHeadAttention mha({4, 4, 0, 0, true, 0});
    std::vector<float> x(4), out(4);
    ForwardOptions options;
    options.need_weights = false;
    for (std::size_t batch : {std::size_t(1) << (sizeof(std::size_t) * 8 - 3), std::size_t(1) << (sizeof(std::size_t) * 8 - 5)}) {
        CAPTURE(batch);
        const ForwardDims dims{batch, 1, 1};
        REQUIRE_THROWS_AS(mha.validate(dims, options), std::length_error);
        REQUIRE_THROWS_AS(mha.forward(x.data(), x.data(), x.data(), dims, options, out.data(), nullptr), std::length_error);
        REQUIRE_THROWS_AS(mha.forward_projected(x.data(), batch, x.data(), x.data(), 1, options, out.data(), nullptr), std::length_error);
    }
}

TEST_CASE("misuse that used to pass silently: null masks, a NaN scale, sizes beyond memory", "[errors]")
{
    // A null pointer is not "no mask": MaskView{} is.
    REQUIRE_THROWS_AS(MaskView::boolean(nullptr, {3, 3}), std::invalid_argument);
    REQUIRE_THROWS_WITH(MaskView::boolean(nullptr, {3, 3}), Contains("MaskView::boolean: blocked must not be null"));
    REQUIRE_THROWS_WITH(MaskView::additive(nullptr, {3, 3}), Contains("MaskView::additive: added must not be null"));

    const auto data = attnscope_test::random_floats(24, 3);
    const TensorView q(data.data(), {2, 3, 4});
    SdpaOptions options;
    for (float scale : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        options.scale = scale;
        REQUIRE_THROWS_AS(scaled_dot_product_attention(q, q, q, options), std::invalid_argument);
        REQUIRE_THROWS_WITH(scaled_dot_product_attention(q, q, q, options), Contains("scale: expected a finite number"));
    }

    // Sizes whose results cannot be addressed: length_error naming the call, never bad_alloc or "vector".
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 8;
    REQUIRE_THROWS_AS(plan_scaled_dot_product_attention({huge, 2, 4}, {huge, 3, 4}, {huge, 3, 4}), std::length_error);
    REQUIRE_THROWS_WITH(plan_scaled_dot_product_attention({huge, 2, 4}, {huge, 3, 4}, {huge, 3, 4}),
                        Contains("scaled_dot_product_attention"));
    REQUIRE_THROWS_WITH(Tensor(Shape{huge, 16}), Contains("Tensor"));
    std::vector<float> buffer;
    REQUIRE_THROWS_AS(resize_floats(buffer, huge * 4, "my buffer"), std::length_error);
    REQUIRE_THROWS_WITH(resize_floats(buffer, huge * 4, "my buffer"), Contains("my buffer") && Contains("address space"));
    REQUIRE_THROWS_AS(MultiHeadAttention::parameter_bytes({huge, 1}), std::length_error);
    REQUIRE_THROWS_WITH(MultiHeadAttention::parameter_bytes({10, 3}), Contains("embed_dim (10) must be divisible by num_heads (3)"));
}

}  // namespace errors_test
