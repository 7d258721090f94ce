// The trained models (models/*.safetensors) against their PyTorch golden cases (tests/fixtures/models, made by
// tools/references/make_model_fixtures.py): every layer's attention weights and the logits, to 1e-4 of each tensor's largest
// magnitude (three or more float32 layers deep, round-off compounds past the single layer's 1e-5). A case with an
// `ablate` tensor runs with those heads switched off.
#include <catch2/catch.hpp>

#include <algorithm>

#include "fixture_reader.hpp"
#include "model_files.hpp"
#include "test_utils.hpp"

namespace model_golden_test {

using namespace attnscope;
using attnscope_test::FixtureCase;
using attnscope_test::max_relative_error;

namespace {

constexpr double tolerance = 1e-4;

std::vector<std::int32_t> ids_of(const attnscope_test::FixtureTensor& t)
{
    return std::vector<std::int32_t>(t.f32.begin(), t.f32.end());
}

// Layer `layer` of an [L, ...] tensor.
std::vector<float> layer_of(const Tensor& t, std::size_t layer)
{
    const std::size_t size = t.data.size() / t.shape[0];
    return std::vector<float>(t.data.begin() + layer * size, t.data.begin() + (layer + 1) * size);
}

// The fixture's logits are the last rows only, from logits_first_row on.
std::vector<float> logits_rows(const Tensor& logits, const FixtureCase& c)
{
    const std::size_t first = std::size_t(c.get_int("logits_first_row")), V = logits.shape[1];
    return std::vector<float>(logits.data.begin() + first * V, logits.data.end());
}

// The fixture's (layer, head) pairs switched off, as the model's head mask (none without an `ablate` tensor).
HeadMask ablation_of(const FixtureCase& c)
{
    if (!c.has("ablate")) return {};
    const std::size_t L = std::size_t(c.get_int("num_layers")), H = std::size_t(c.get_int("num_heads"));
    HeadMask mask(L * H, 0);
    const auto& pairs = c.tensor("ablate").f32;
    for (std::size_t p = 0; p + 1 < pairs.size(); p += 2) mask.at(std::size_t(pairs[p]) * H + std::size_t(pairs[p + 1])) = 1;
    return mask;
}

}  // namespace

TEST_CASE("trained models match PyTorch layer by layer", "[golden][models]")
{
    const auto fixtures = attnscope_test::load_fixture_dir(ATTNSCOPE_MODEL_FIXTURE_DIR);
    REQUIRE(fixtures.size() >= 6);
    REQUIRE(std::count_if(fixtures.begin(), fixtures.end(), [](const FixtureCase& c) { return c.strs.at("kind") == "model_lm"; }) >= 3);
    REQUIRE(std::count_if(fixtures.begin(), fixtures.end(), [](const FixtureCase& c) { return c.strs.at("kind") == "model_seq2seq"; }) >= 3);
    REQUIRE(std::count_if(fixtures.begin(), fixtures.end(), [](const FixtureCase& c) { return c.has("ablate"); }) >= 1);
    for (const FixtureCase& c : fixtures) {
        SECTION(c.name)
        {
            auto& shipped = attnscope_test::shipped_model(c.strs.at("model"));
            if (c.strs.at("kind") == "model_lm") {
                auto& lm = shipped.file.language_model;
                REQUIRE(lm);
                const auto out = lm->forward(ids_of(c.tensor("tokens")), true, ablation_of(c));
                for (std::size_t l = 0; l < std::size_t(c.get_int("num_layers")); ++l) {
                    CAPTURE(l);
                    CHECK(max_relative_error(layer_of(out.attention, l), c.tensor("attn_weights_" + std::to_string(l)).f32) < tolerance);
                }
                CHECK(max_relative_error(logits_rows(out.logits, c), c.tensor("logits").f32) < tolerance);
            } else {
                auto& model = shipped.file.seq2seq;
                REQUIRE(model);
                const auto source = ids_of(c.tensor("src_tokens"));
                const auto out = model->forward(source, ids_of(c.tensor("tokens")));
                for (std::size_t l = 0; l < std::size_t(c.get_int("num_enc_layers")); ++l)
                    CHECK(max_relative_error(layer_of(out.encoder_attention, l), c.tensor("enc_self_" + std::to_string(l)).f32) < tolerance);
                for (std::size_t l = 0; l < std::size_t(c.get_int("num_dec_layers")); ++l) {
                    CAPTURE(l);
                    CHECK(max_relative_error(layer_of(out.decoder_attention, l), c.tensor("dec_self_" + std::to_string(l)).f32) < tolerance);
                    CHECK(max_relative_error(layer_of(out.cross_attention, l), c.tensor("dec_cross_" + std::to_string(l)).f32) < tolerance);
                }
                CHECK(max_relative_error(logits_rows(out.logits, c), c.tensor("logits").f32) < tolerance);

                const auto& vocab = shipped.vocab;
                const auto decoded = model->translate(source, vocab.at("tgt_bos_id"), vocab.at("tgt_eos_id"),
                                                          std::size_t(shipped.config.at("max_tgt_len")) - 1);
                CHECK(decoded.tokens == ids_of(c.tensor("expected_decoded")));
            }
        }
    }
}

}  // namespace model_golden_test
