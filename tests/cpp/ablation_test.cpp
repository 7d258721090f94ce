// Head ablation: a switched-off head's context is zero before the output projection. Checked against the double
// reference, against the same layer with that head's columns of out_proj.weight zeroed, and through the models
// (every head of a layer off = a model whose layer adds only out_proj.bias; cached paths agree with full passes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "attnscope/attnscope.hpp"
#include "attnscope/transformer.hpp"
#include "reference/reference.hpp"
#include "test_utils.hpp"

namespace ablation_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using attnscope_test::random_floats;
using attnscope_test::random_state;
using attnscope_test::views;
using Catch::Contains;

namespace {

// Columns [head·hd, (head+1)·hd) of an [E, E] out_proj.weight set to zero: that head's context no longer reaches
// the output. The same effect as ablation, reached through the weights instead of the option.
void zero_head_columns(Tensor& out_proj_weight, std::size_t head, std::size_t head_dim)
{
    const std::size_t E = out_proj_weight.shape[1];
    for (std::size_t o = 0; o < out_proj_weight.shape[0]; ++o)
        std::fill_n(out_proj_weight.data.begin() + o * E + head * head_dim, head_dim, 0.f);
}

}  // namespace

TEST_CASE("ablated heads match the reference, with and without weights, averaged or per head", "[mha][ablation]")
{
    struct Case {
        std::size_t E, H, B, Lq, Lk;
    };
    // Head sizes around and off the SIMD width; one case long enough to cross a streaming key tile (256).
    const Case cases[] = {{4, 1, 1, 1, 1}, {8, 2, 2, 5, 5}, {12, 3, 1, 7, 9}, {15, 5, 3, 4, 6}, {64, 8, 1, 33, 300}};
    std::uint32_t seed = 500;
    for (const Case& c : cases)
        for (std::uint32_t pattern = 1; pattern < (1u << c.H) && pattern < 40; pattern += 3) {
            std::vector<std::uint8_t> off(c.H);
            for (std::size_t h = 0; h < c.H; ++h) off[h] = (pattern >> h) & 1u;
            MultiHeadAttention mha({c.E, c.H, 0, 0, true, 0});
            mha.load_state_dict(random_state(mha, seed++));
            const auto q = random_floats(c.B * c.Lq * c.E, seed++), kv = random_floats(c.B * c.Lk * c.E, seed++);
            for (int variant = 0; variant < 3; ++variant) {
                CAPTURE(c.E, c.H, c.B, c.Lq, c.Lk, pattern, variant);
                ForwardOptions options;
                options.ablate_heads = off.data();
                options.causal = c.Lq == c.Lk;
                options.need_weights = variant != 0;
                options.average_weights = variant == 2;
                const ForwardDims dims{c.B, c.Lq, c.Lk};
                std::vector<float> output(c.B * c.Lq * c.E), weights(mha.weights_numel(dims, options));
                mha.forward(q.data(), kv.data(), kv.data(), dims, options, output.data(), weights.data());
                const auto expected = reference::multihead_attention(mha.state_dict(), c.E, c.H, c.E, c.E, c.B, c.Lq,
                                                                     c.Lk, q.data(), kv.data(), kv.data(), options);
                REQUIRE(max_relative_error(output, expected.output) < 1e-5);
                // The weights are those of the layer without ablation: the views still show where the head looked.
                if (options.need_weights) REQUIRE(max_relative_error(weights, expected.weights) < 1e-5);
            }
        }
}

TEST_CASE("ablating a head equals zeroing its columns of out_proj.weight; every head off leaves out_proj.bias",
          "[mha][ablation]")
{
    const std::size_t E = 12, H = 3, hd = E / H, L = 6;
    MultiHeadAttention mha({E, H, 0, 0, true, 0}), pruned({E, H, 0, 0, true, 0});
    auto state = random_state(mha, 41);
    mha.load_state_dict(state);
    const auto x = random_floats(L * E, 42);
    for (std::size_t head = 0; head < H; ++head) {
        CAPTURE(head);
        std::vector<std::uint8_t> off(H, 0);
        off[head] = 1;
        ForwardOptions ablate;
        ablate.causal = true;
        ablate.ablate_heads = off.data();
        auto zeroed = state;
        zero_head_columns(zeroed.at("out_proj.weight"), head, hd);
        pruned.load_state_dict(zeroed);
        ForwardOptions plain;
        plain.causal = true;
        const auto a = mha.forward(TensorView(x.data(), {L, E}), ablate);
        const auto b = pruned.forward(TensorView(x.data(), {L, E}), plain);
        REQUIRE(max_relative_error(a.output.data, b.output.data) < 1e-6);
        REQUIRE(a.weights.data == b.weights.data);
    }
    std::vector<std::uint8_t> all(H, 1);
    ForwardOptions none_left;
    none_left.ablate_heads = all.data();
    const auto r = mha.forward(TensorView(x.data(), {L, E}), none_left);
    for (std::size_t t = 0; t < L; ++t)
        for (std::size_t o = 0; o < E; ++o) REQUIRE(r.output.data[t * E + o] == state.at("out_proj.bias").data[o]);
}

TEST_CASE("LanguageModel: every head of a layer off equals that layer's out_proj.weight zeroed; generation follows",
          "[transformer][ablation]")
{
    const LanguageModelConfig config{23, 16, 12, 3, 20, 3};
    LanguageModel lm(config), pruned(config);
    const auto state = random_state(lm, 900);
    lm.load_state_dict(views(state));
    const std::vector<std::int32_t> tokens = {1, 5, 7, 2, 9, 9, 4, 11, 3};
    const auto plain = lm.forward(tokens);
    for (std::size_t layer = 0; layer < config.num_layers; ++layer) {
        CAPTURE(layer);
        HeadMask mask(config.num_layers * config.num_heads, 0);
        std::fill_n(mask.begin() + layer * config.num_heads, config.num_heads, 1);
        auto zeroed = state;
        for (float& w : zeroed.at("blocks." + std::to_string(layer) + ".attn.out_proj.weight").data) w = 0.f;
        pruned.load_state_dict(views(zeroed));
        const auto ablated = lm.forward(tokens, true, mask);
        const auto expected = pruned.forward(tokens);
        REQUIRE(max_relative_error(ablated.logits.data, expected.logits.data) < 1e-5);
        REQUIRE(max_relative_error(ablated.logits.data, plain.logits.data) > 1e-3);  // the layer did matter
        // This layer's weights are unchanged by its own ablation (later layers see a different input).
        const std::size_t per_layer = plain.attention.data.size() / config.num_layers;
        REQUIRE(std::equal(ablated.attention.data.begin() + layer * per_layer,
                           ablated.attention.data.begin() + (layer + 1) * per_layer,
                           expected.attention.data.begin() + layer * per_layer));
    }

    // One head off: cached generation is the argmax of full ablated passes, step by step.
    HeadMask one(config.num_layers * config.num_heads, 0);
    one[1 * config.num_heads + 2] = 1;
    const std::vector<std::int32_t> prompt = {1, 4, 4};
    const auto generated = lm.generate(prompt, 8, -1, one);
    std::vector<std::int32_t> sequence = prompt;
    for (std::int32_t token : generated) {
        const auto full = lm.forward(sequence, false, one);
        const float* last = full.logits.data.data() + (sequence.size() - 1) * config.vocab_size;
        REQUIRE(token == std::int32_t(std::max_element(last, last + config.vocab_size) - last));
        sequence.push_back(token);
    }
    REQUIRE(generated.size() == 8);
}

TEST_CASE("Seq2SeqModel: ablated decoding matches the ablated teacher-forced pass; each kind of attention takes effect",
          "[transformer][ablation]")
{
    const Seq2SeqModelConfig config{19, 11, 8, 9, 12, 3, 16, 2, 2};
    Seq2SeqModel model(config);
    model.load_state_dict(views(random_state(model, 1300)));
    const std::vector<std::int32_t> source = {3, 7, 1, 12, 5, 5};
    const std::size_t LH = 2 * 3;
    Seq2SeqAblation ablate;
    ablate.encoder_self = HeadMask(LH, 0);
    ablate.decoder_self = HeadMask(LH, 0);
    ablate.decoder_cross = HeadMask(LH, 0);
    ablate.encoder_self[1] = ablate.decoder_self[4] = ablate.decoder_cross[2] = 1;

    const auto decoded = model.translate(source, 1, 2, 8, ablate);
    std::vector<std::int32_t> target = {1};
    target.insert(target.end(), decoded.tokens.begin(), decoded.tokens.end() - 1);
    const auto forced = model.forward(source, target, true, ablate);
    for (std::size_t t = 0; t < decoded.tokens.size(); ++t) {
        const float* row = forced.logits.data.data() + t * config.tgt_vocab_size;
        REQUIRE(decoded.tokens[t] == std::int32_t(std::max_element(row, row + config.tgt_vocab_size) - row));
    }
    REQUIRE(max_relative_error(decoded.cross_attention.data, forced.cross_attention.data) < 1e-5);

    const auto plain = model.forward(source, target);
    for (HeadMask Seq2SeqAblation::*kind :
         {&Seq2SeqAblation::encoder_self, &Seq2SeqAblation::decoder_self, &Seq2SeqAblation::decoder_cross}) {
        Seq2SeqAblation only;
        only.*kind = HeadMask(LH, 1);
        REQUIRE(max_relative_error(model.forward(source, target, false, only).logits.data, plain.logits.data) > 1e-4);
    }
}

TEST_CASE("head masks of the wrong size are refused, naming the call and the sizes", "[transformer][ablation][errors]")
{
    LanguageModel lm({23, 16, 12, 3, 20, 2});
    REQUIRE_THROWS_WITH(lm.forward({1, 2}, true, HeadMask(5, 0)),
                        Contains("LanguageModel.forward: ablate: expected 6 flags (2 layers of 3 heads) or none, got 5"));
    REQUIRE_THROWS_WITH(lm.generate({1, 2}, 3, -1, HeadMask(7, 1)),
                        Contains("LanguageModel.generate: ablate: expected 6 flags (2 layers of 3 heads) or none, got 7"));
    Seq2SeqModel model({19, 11, 8, 9, 12, 3, 16, 1, 2});
    Seq2SeqAblation bad;
    bad.decoder_cross = HeadMask(3, 0);
    REQUIRE_THROWS_WITH(model.translate({3, 4}, 1, 2, 4, bad),
                        Contains("Seq2SeqModel.translate: ablate.decoder_cross: expected 6 flags (2 layers of 3 heads) "
                                 "or none, got 3"));
    bad.decoder_cross = HeadMask(6, 0);
    bad.encoder_self = HeadMask(6, 0);  // one encoder layer: 3 flags
    REQUIRE_THROWS_WITH(model.forward({3, 4}, {1}, true, bad), Contains("Seq2SeqModel.forward: ablate.encoder_self: expected 3"));
}

}  // namespace ablation_test
