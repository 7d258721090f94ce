// MultiHeadAttention and scaled_dot_product_attention against the scalar reference on random data,
// and the properties the API promises (state dict round trip, seeding, unbatched = batched, masks).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnscope/attnscope.hpp"
#include "kernels/gemm.hpp"
#include "reference/reference.hpp"
#include "test_utils.hpp"

namespace multihead_attention_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using attnscope_test::random_floats;
using attnscope_test::randomise;

namespace {

struct Case {
    std::size_t E, H, kdim, vdim, B, Lq, Lk;
    bool bias;
};

}  // namespace

TEST_CASE("multi-head attention matches the reference across sizes, masks and options", "[mha]")
{
    const Case cases[] = {
        {4, 1, 4, 4, 1, 1, 1, true},   {4, 4, 4, 4, 2, 3, 3, true},    {8, 2, 8, 8, 2, 5, 5, false},
        {12, 3, 12, 12, 1, 7, 7, true}, {10, 2, 6, 9, 3, 4, 11, true}, {16, 4, 16, 16, 2, 9, 13, true},
        {15, 5, 15, 15, 3, 7, 3, true}, {24, 3, 7, 5, 1, 8, 9, false}, {64, 8, 64, 64, 1, 33, 33, true},
    };
    std::uint32_t seed = 100;
    for (const Case& c : cases)
        for (int mask_variant = 0; mask_variant < 6; ++mask_variant)
            for (bool average : {false, true}) {
                CAPTURE(c.E, c.H, c.kdim, c.vdim, c.B, c.Lq, c.Lk, c.bias, mask_variant, average);
                MultiHeadAttention mha({c.E, c.H, c.kdim, c.vdim, c.bias, 0});
                randomise(mha, seed++);
                const bool self = c.kdim == c.E && c.vdim == c.E && c.Lq == c.Lk;
                const auto query = random_floats(c.B * c.Lq * c.E, seed++);
                const auto key = self ? query : random_floats(c.B * c.Lk * c.kdim, seed++);
                const auto value = self ? query : random_floats(c.B * c.Lk * c.vdim, seed++);

                std::vector<std::uint8_t> kpm(c.B * c.Lk, 0), am_bool(c.B * c.H * c.Lq * c.Lk, 0);
                std::vector<float> am_float = random_floats(c.Lq * c.Lk, seed++, -2.f, 2.f);
                for (std::size_t j = 1; j < kpm.size(); j += 3) kpm[j] = 1;
                for (std::size_t x = 0; x < am_bool.size(); x += 4) am_bool[x] = 1;
                if (!am_float.empty()) am_float[0] = -std::numeric_limits<float>::infinity();

                ForwardOptions options;
                options.average_weights = average;
                switch (mask_variant) {
                case 1: options.key_padding_mask = MaskView::boolean(kpm.data(), {c.B, c.Lk}); break;
                case 2: options.attn_mask = MaskView::additive(am_float.data(), {c.Lq, c.Lk}); break;
                case 3: options.attn_mask = MaskView::boolean(am_bool.data(), {c.B * c.H, c.Lq, c.Lk}); break;
                case 4: options.causal = true; break;
                case 5:
                    options.causal = true;
                    options.key_padding_mask = MaskView::boolean(kpm.data(), {c.B, c.Lk});
                    options.attn_mask = MaskView::additive(am_float.data(), {c.Lq, c.Lk});
                    break;
                default: break;
                }
                const ForwardDims dims{c.B, c.Lq, c.Lk};
                std::vector<float> output(c.B * c.Lq * c.E), weights(mha.weights_numel(dims, options));
                const float* k = self ? query.data() : key.data();
                const float* v = self ? query.data() : value.data();
                mha.forward(query.data(), k, v, dims, options, output.data(), weights.data());

                const auto expected = reference::multihead_attention(mha.state_dict(), c.E, c.H, c.kdim, c.vdim, c.B,
                                                                     c.Lq, c.Lk, query.data(), k, v, options);
                REQUIRE(max_relative_error(output, expected.output) < 1e-5);
                REQUIRE(max_relative_error(weights, expected.weights) < 1e-5);
            }
}

TEST_CASE("need_weights = false (streaming tiles) matches the reference across tile boundaries", "[mha][streaming]")
{
    // Query tiles are 32 rows and key tiles 256 keys: sizes on both sides of each boundary, masks that block
    // whole tiles, whole rows, and the causal triangle.
    std::uint32_t seed = 900;
    for (std::size_t Lq : {std::size_t(1), std::size_t(31), std::size_t(33), std::size_t(70)})
        for (std::size_t Lk : {std::size_t(1), std::size_t(255), std::size_t(257), std::size_t(600)})
            for (int variant = 0; variant < 4; ++variant) {
                CAPTURE(Lq, Lk, variant);
                const std::size_t E = 8, H = 2, B = 2;
                MultiHeadAttention mha({E, H, 0, 0, true, 0});
                randomise(mha, seed++);
                const auto query = random_floats(B * Lq * E, seed++, -3.f, 3.f);
                const auto key = random_floats(B * Lk * E, seed++, -3.f, 3.f);
                const auto value = random_floats(B * Lk * E, seed++);
                std::vector<std::uint8_t> kpm(B * Lk, 0), am_bool(B * H * Lq * Lk, 0);
                auto am_float = random_floats(Lq * Lk, seed++, -2.f, 2.f);
                for (std::size_t j = 0; j < std::min<std::size_t>(Lk, 300); ++j) kpm[j] = 1;  // batch 0: the first tile and more
                for (std::size_t i = 0; i < Lq; i += 3)
                    for (std::size_t j = 0; j < Lk; ++j) am_bool[i * Lk + j] = 1;  // head 0 of batch 0: whole rows blocked
                for (std::size_t x = 0; x < am_float.size(); x += 7) am_float[x] = -std::numeric_limits<float>::infinity();

                ForwardOptions options;
                options.need_weights = false;
                // Averaging means nothing without weights and must be ignored (the threaded split once took the
                // averaged-weights branch here and streamed into a null scratch).
                options.average_weights = variant % 2 == 0;
                if (variant == 1) options.key_padding_mask = MaskView::boolean(kpm.data(), {B, Lk});
                if (variant == 2) options.attn_mask = MaskView::boolean(am_bool.data(), {B * H, Lq, Lk});
                if (variant == 3) {
                    options.causal = true;
                    options.attn_mask = MaskView::additive(am_float.data(), {Lq, Lk});
                }
                std::vector<float> output(B * Lq * E);
                mha.forward(query.data(), key.data(), value.data(), {B, Lq, Lk}, options, output.data(), nullptr);
                const auto expected = reference::multihead_attention(mha.state_dict(), E, H, E, E, B, Lq, Lk,
                                                                     query.data(), key.data(), value.data(), options);
                REQUIRE(max_relative_error(output, expected.output) < 1e-5);
            }
}

TEST_CASE("unbatched input equals a batch of one without the batch dimension", "[mha]")
{
    MultiHeadAttention mha({12, 3, 5, 7, true, 1});
    randomise(mha, 9);
    const auto q = random_floats(4 * 12, 1), k = random_floats(6 * 5, 2), v = random_floats(6 * 7, 3);
    std::vector<std::uint8_t> kpm = {0, 1, 0, 0, 1, 0};
    ForwardOptions batched_options, unbatched_options;
    batched_options.key_padding_mask = MaskView::boolean(kpm.data(), {1, 6});
    unbatched_options.key_padding_mask = MaskView::boolean(kpm.data(), {6});
    const auto batched = mha.forward(TensorView(q.data(), {1, 4, 12}), TensorView(k.data(), {1, 6, 5}),
                                     TensorView(v.data(), {1, 6, 7}), batched_options);
    const auto unbatched = mha.forward(TensorView(q.data(), {4, 12}), TensorView(k.data(), {6, 5}),
                                       TensorView(v.data(), {6, 7}), unbatched_options);
    REQUIRE(unbatched.output.shape == Shape{4, 12});
    REQUIRE(unbatched.weights.shape == Shape{3, 4, 6});
    REQUIRE(batched.weights.shape == Shape{1, 3, 4, 6});
    REQUIRE(unbatched.output.data == batched.output.data);
    REQUIRE(unbatched.weights.data == batched.weights.data);
}

TEST_CASE("a query whose keys are all masked gets zero weights and the output bias", "[mha]")
{
    MultiHeadAttention mha({8, 2, 0, 0, true, 5});
    randomise(mha, 11);
    const Tensor x({2, 3, 8}, random_floats(48, 12));
    std::vector<std::uint8_t> kpm = {1, 1, 1, 0, 1, 0};  // batch 0: every key padded
    ForwardOptions options;
    options.key_padding_mask = MaskView::boolean(kpm.data(), {2, 3});
    const auto r = mha.forward(x, options);
    const auto bias = mha.state_dict().at("out_proj.bias").data;
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t e = 0; e < 8; ++e) REQUIRE(r.output.data[i * 8 + e] == bias[e]);
    for (std::size_t x_ = 0; x_ < 2 * 3 * 3; ++x_) REQUIRE(r.weights.data[x_] == 0.f);
    for (float w : r.output.data) REQUIRE(std::isfinite(w));
    // Batch 1 is untouched by batch 0's mask: its rows sum to 1 over the two open keys.
    for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 0; i < 3; ++i) {
            const float* row = r.weights.data.data() + ((1 * 2 + h) * 3 + i) * 3;
            REQUIRE(row[1] == 0.f);
            REQUIRE(row[0] + row[2] == Approx(1.f).epsilon(1e-6));
        }
}

TEST_CASE("state dict: PyTorch names and shapes, round trip, strict loading keeps old weights", "[mha]")
{
    MultiHeadAttention packed({8, 2, 0, 0, true, 0});
    REQUIRE(packed.state_dict_keys() == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
    REQUIRE(packed.state_dict_shape("in_proj_weight") == Shape{24, 8});
    MultiHeadAttention separate({8, 2, 3, 5, false, 0});
    REQUIRE(separate.state_dict_keys() == std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"});
    REQUIRE(separate.state_dict_shape("k_proj_weight") == Shape{8, 3});
    REQUIRE(separate.state_dict_shape("v_proj_weight") == Shape{8, 5});

    randomise(separate, 1);
    const auto before = separate.state_dict();
    MultiHeadAttention copy({8, 2, 3, 5, false, 99});
    copy.load_state_dict(before);
    REQUIRE(copy.state_dict().at("v_proj_weight").data == before.at("v_proj_weight").data);

    auto bad = before;
    bad.at("out_proj.weight") = Tensor({8, 7});
    REQUIRE_THROWS_WITH(copy.load_state_dict(bad), Catch::Contains("out_proj.weight") && Catch::Contains("[8, 8]") && Catch::Contains("[8, 7]"));
    bad = before;
    bad.emplace("in_proj_bias", Tensor({24}));
    REQUIRE_THROWS_WITH(copy.load_state_dict(bad), Catch::Contains("in_proj_bias"));
    bad = before;
    bad.erase("q_proj_weight");
    REQUIRE_THROWS_WITH(copy.load_state_dict(bad), Catch::Contains("missing key 'q_proj_weight'"));
    REQUIRE(copy.state_dict().at("q_proj_weight").data == before.at("q_proj_weight").data);
}

TEST_CASE("seeded initialisation: deterministic, PyTorch's bounds, zero biases", "[mha]")
{
    MultiHeadAttention a({16, 4, 0, 0, true, 42}), b({16, 4, 0, 0, true, 42}), c({16, 4, 0, 0, true, 43});
    const auto sa = a.state_dict(), sb = b.state_dict(), sc = c.state_dict();
    REQUIRE(sa.at("in_proj_weight").data == sb.at("in_proj_weight").data);
    REQUIRE(sa.at("in_proj_weight").data != sc.at("in_proj_weight").data);
    const float xavier = std::sqrt(6.f / (16 + 48)), kaiming = 1.f / 4.f;
    float largest_in = 0.f, largest_out = 0.f;
    for (float w : sa.at("in_proj_weight").data) largest_in = std::max(largest_in, std::fabs(w));
    for (float w : sa.at("out_proj.weight").data) largest_out = std::max(largest_out, std::fabs(w));
    REQUIRE(largest_in <= xavier);
    REQUIRE(largest_in > 0.9f * xavier);  // 768 draws: the largest is near the bound
    REQUIRE(largest_out <= kaiming);
    REQUIRE(largest_out > 0.9f * kaiming);
    for (float x : sa.at("in_proj_bias").data) REQUIRE(x == 0.f);
    for (float x : sa.at("out_proj.bias").data) REQUIRE(x == 0.f);
}

TEST_CASE("scaled_dot_product_attention matches the reference", "[sdpa]")
{
    struct S { Shape leading; std::size_t Lq, Lk, D, Dv; };
    const S cases[] = {{{}, 1, 1, 1, 1}, {{2}, 3, 5, 4, 4}, {{2, 3}, 4, 9, 5, 3}, {{1}, 7, 3, 8, 11}, {{}, 13, 17, 9, 9}};
    std::uint32_t seed = 500;
    for (const S& c : cases)
        for (int variant = 0; variant < 4; ++variant) {
            CAPTURE(c.Lq, c.Lk, c.D, c.Dv, variant);
            std::size_t count = 1;
            for (auto d : c.leading) count *= d;
            auto shape = [&](std::size_t a, std::size_t b) { Shape s = c.leading; s.push_back(a); s.push_back(b); return s; };
            const auto q = random_floats(count * c.Lq * c.D, seed++), k = random_floats(count * c.Lk * c.D, seed++),
                       v = random_floats(count * c.Lk * c.Dv, seed++);
            std::vector<std::uint8_t> blocked(count * c.Lq * c.Lk, 0);
            for (std::size_t x = 1; x < blocked.size(); x += 3) blocked[x] = 1;
            const auto added = random_floats(c.Lq * c.Lk, seed++);
            SdpaOptions options;
            bool broadcast = true;
            if (variant == 1) options.attn_mask = MaskView::boolean(blocked.data(), shape(c.Lq, c.Lk)), broadcast = false;
            if (variant == 2) options.attn_mask = MaskView::additive(added.data(), {c.Lq, c.Lk});
            if (variant == 3) options.causal = true, options.scale = 0.3f;
            const auto r = scaled_dot_product_attention(TensorView(q.data(), shape(c.Lq, c.D)),
                                                        TensorView(k.data(), shape(c.Lk, c.D)),
                                                        TensorView(v.data(), shape(c.Lk, c.Dv)), options);
            REQUIRE(r.output.shape == shape(c.Lq, c.Dv));
            REQUIRE(r.weights.shape == shape(c.Lq, c.Lk));
            const double scale = options.scale ? *options.scale : 1.0 / std::sqrt(double(c.D));
            const auto expected = reference::sdpa(count, c.Lq, c.Lk, c.D, c.Dv, q.data(), k.data(), v.data(),
                                                  options.attn_mask, broadcast, options.causal, scale);
            REQUIRE(max_relative_error(r.output.data, expected.output) < 1e-5);
            REQUIRE(max_relative_error(r.weights.data, expected.weights) < 1e-5);
        }
}

TEST_CASE("a key/value cache step by step gives the rows of the causal forward pass", "[mha][cache]")
{
    const std::size_t E = 12, H = 3, L = 9;
    MultiHeadAttention mha({E, H, 0, 0, true, 0});
    randomise(mha, 77);
    const auto x = random_floats(L * E, 78);
    ForwardOptions causal;
    causal.causal = true;
    const auto full = mha.forward(TensorView(x.data(), {L, E}), causal);

    std::vector<float> key_cache(L * E), value_cache(L * E), out(E), weights(H * L);
    ForwardOptions step;  // the cache only holds the past: no mask needed
    for (std::size_t t = 0; t < L; ++t) {
        CAPTURE(t);
        mha.project_key_value(x.data() + t * E, x.data() + t * E, 1, key_cache.data() + t * E, value_cache.data() + t * E);
        mha.forward_projected(x.data() + t * E, 1, key_cache.data(), value_cache.data(), t + 1, step, out.data(), weights.data());
        const std::vector<float> expected_out(full.output.data.begin() + t * E, full.output.data.begin() + (t + 1) * E);
        REQUIRE(max_relative_error(out, expected_out) < 1e-6);
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t j = 0; j <= t; ++j) REQUIRE(weights[h * (t + 1) + j] == Approx(full.weights.data[(h * L + t) * L + j]).margin(1e-6));
    }
}

TEST_CASE("NaN and infinities: NaN propagates to its rows only, -inf in a float mask blocks", "[mha][numbers]")
{
    const std::size_t E = 8, H = 2, L = 5;
    MultiHeadAttention mha({E, H, 0, 0, true, 0});
    randomise(mha, 31);
    auto x = random_floats(L * E, 32);
    x[2 * E + 3] = std::numeric_limits<float>::quiet_NaN();  // one feature of query/key row 2
    for (bool need_weights : {true, false}) {
        CAPTURE(need_weights);
        ForwardOptions options;
        options.causal = true;
        options.need_weights = need_weights;
        const auto r = mha.forward(TensorView(x.data(), {L, E}), options);
        // Weights: rows 0 and 1 never score key 2 (causal) and stay finite; rows 2.. score it NaN: NaN.
        // Outputs: value row 2 is NaN, and 0·NaN = NaN, so every context row is NaN — as torch's bmm gives.
        for (float v : r.output.data) REQUIRE(std::isnan(v));
        if (need_weights)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < L; ++i) REQUIRE(std::isnan(r.weights.data[(h * L + i) * L]) == (i >= 2));
    }

    // NaN in one query row only (cross-attention, clean keys and values): only that row is NaN.
    auto q = random_floats(L * E, 34);
    q[3 * E] = std::numeric_limits<float>::quiet_NaN();
    const auto kv = random_floats(7 * E, 35);
    for (bool need_weights : {true, false}) {
        ForwardOptions options;
        options.need_weights = need_weights;
        const auto r = mha.forward(TensorView(q.data(), {L, E}), TensorView(kv.data(), {7, E}), TensorView(kv.data(), {7, E}), options);
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t e = 0; e < E; ++e) REQUIRE(std::isnan(r.output.data[i * E + e]) == (i == 3));
    }

    const auto y = random_floats(L * E, 33);
    std::vector<float> mask(L * L, 0.f);
    for (std::size_t i = 0; i < L; ++i) mask[i * L + 1] = -std::numeric_limits<float>::infinity();
    ForwardOptions options;
    options.attn_mask = MaskView::additive(mask.data(), {L, L});
    const auto r = mha.forward(TensorView(y.data(), {L, E}), options);
    for (std::size_t row = 0; row < H * L; ++row) REQUIRE(r.weights.data[row * L + 1] == 0.f);
    for (float v : r.output.data) REQUIRE(std::isfinite(v));
}

TEST_CASE("sizes come from the library: workspace without weights is O(seq), plans give result shapes", "[mha][plan]")
{
    const std::size_t E = 4, L = 32768;
    MultiHeadAttention mha({E, 1, 0, 0, true, 0});
    ForwardOptions streaming;
    streaming.need_weights = false;
    // Projections, concatenated heads, packed k and v, one 32×256 tile: no L·L term. The packed v of a head has its
    // head_dim columns padded to whole panels (8 floats with SSE, 16 with AVX2), so that term is L · panel width.
    const std::size_t panel = kernels::panel_width<xsimd::default_arch>;
    const std::size_t bytes = mha.workspace_bytes({1, L, L}, streaming);
    REQUIRE(bytes >= 4 * L * E * sizeof(float));
    REQUIRE(bytes < (5 * L * E + L * std::max(E, panel)) * sizeof(float) + 64 * 1024);
    ForwardOptions averaged;
    averaged.average_weights = true;  // one 64-query-row block of a head's scores per thread besides the averaged weights
    REQUIRE(mha.workspace_bytes({1, 100, 100}, averaged) >= 64 * 100 * sizeof(float));
    REQUIRE(MultiHeadAttention::parameter_bytes({E, 1}) >= 2 * 4 * E * E * sizeof(float));

    const SdpaPlan plan = plan_scaled_dot_product_attention({2, 3, 5, 4}, {2, 3, 7, 4}, {2, 3, 7, 6});
    REQUIRE(plan.output_shape == Shape{2, 3, 5, 6});
    REQUIRE(plan.weights_shape == Shape{2, 3, 5, 7});
    REQUIRE(plan.workspace_bytes >= (4 * 7 + 7 * 6) * sizeof(float));
}

TEST_CASE("need_weights true and false agree on NaN at every length", "[mha][numbers][streaming]")
{
    // attend() multiplies blocked keys' values by zero weights (0·NaN = NaN); the streaming tiles skip causally
    // blocked keys and must bring that NaN in too, at every length around the 32-query and 256-key tiles.
    const std::size_t E = 4, H = 2;
    MultiHeadAttention mha({E, H, 0, 0, true, 0});
    randomise(mha, 41);
    for (std::size_t L : {1, 2, 31, 32, 33, 64, 65, 255, 257, 300}) {
        for (std::size_t nan_row : {std::size_t(0), L / 2, L - 1}) {
            for (bool causal : {true, false}) {
                CAPTURE(L, nan_row, causal);
                auto x = random_floats(L * E, std::uint32_t(L));
                const auto kv = random_floats(L * E, std::uint32_t(L + 1));
                auto v = kv;
                v[nan_row * E + 1] = std::numeric_limits<float>::quiet_NaN();
                x[nan_row * E + 2] = std::numeric_limits<float>::infinity();  // an infinite query feature too
                ForwardOptions options;
                options.causal = causal;
                const auto with = mha.forward(TensorView(x.data(), {L, E}), TensorView(kv.data(), {L, E}),
                                              TensorView(v.data(), {L, E}), options);
                options.need_weights = false;
                const auto without = mha.forward(TensorView(x.data(), {L, E}), TensorView(kv.data(), {L, E}),
                                                 TensorView(v.data(), {L, E}), options);
                for (std::size_t i = 0; i < L * E; ++i) REQUIRE(std::isnan(with.output.data[i]) == std::isnan(without.output.data[i]));
                // A NaN value reaches every output row through the output projection (0·NaN = NaN).
                for (float o : without.output.data) REQUIRE(std::isnan(o));
            }
        }
    }
}

}  // namespace multihead_attention_test
