// Activation patching and mean ablation against tools/references/hf_patching_reference.py (float64 PyTorch from the fixtures'
// weights): the last position's logits to 1e-4 of the largest; patching every head from the clean run gives the
// clean logits and patching none the corrupted ones; a bad kept run or bad flags are refused, naming the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "pretrained_files.hpp"
#include "test_utils.hpp"

using namespace attnscope;

namespace {

nlohmann::json patching_of(const std::string& name)
{
    return nlohmann::json::parse(attnscope_test::read_text(attnscope_test::hf_dir(name) + "/patching.json"));
}

std::vector<float> last_logits(const Transformer::Output& out)
{
    const std::size_t T = out.logits.shape[0], V = out.logits.shape[1];
    return std::vector<float>(out.logits.data.begin() + (T - 1) * V, out.logits.data.end());
}

Transformer::Request request(const nlohmann::json& ids)
{
    Transformer::Request r;
    r.tokens = ids.get<std::vector<std::int32_t>>();
    r.need_attention = false;
    return r;
}

HeadMask flags(const nlohmann::json& heads, std::size_t layers, std::size_t H)
{
    HeadMask m(layers * H, 0);
    for (const auto& lh : heads) m[lh.at(0).get<std::size_t>() * H + lh.at(1).get<std::size_t>()] = 1;
    return m;
}

}  // namespace

TEST_CASE("pretrained patching matches PyTorch", "[pretrained][patching]")
{
    for (const char* name : {"gpt2-lm", "llama-gqa"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            const auto p = patching_of(name);
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t L = model->config().layers, H = model->config().heads;
            REQUIRE(p.at("layers") == L);
            REQUIRE(p.at("heads") == H);

            auto clean = request(p.at("clean_ids"));
            clean.keep_heads = true;
            const auto kept = model->forward(clean);
            REQUIRE(kept.heads.shape == Shape{L, clean.tokens.size(), H, model->config().head_dim});
            CHECK(attnscope_test::max_relative_error(last_logits(kept), p.at("clean_logits").get<std::vector<double>>()) < 1e-4);

            auto corrupted = request(p.at("corrupted_ids"));
            corrupted.patch_from = &kept.heads;
            CHECK(attnscope_test::max_relative_error(last_logits(model->forward(corrupted)), p.at("corrupted_logits").get<std::vector<double>>()) < 1e-4);
            for (const auto& run : p.at("patched")) {
                INFO("patched " << run.at("heads").dump());
                corrupted.patch = flags(run.at("heads"), L, H);
                CHECK(attnscope_test::max_relative_error(last_logits(model->forward(corrupted)), run.at("logits").get<std::vector<double>>()) < 1e-4);
            }
            corrupted.patch.clear();
            corrupted.ablation = Ablation::mean;
            for (const auto& run : p.at("mean_ablated")) {
                INFO("mean-ablated " << run.at("heads").dump());
                corrupted.ablate = flags(run.at("heads"), L, H);
                CHECK(attnscope_test::max_relative_error(last_logits(model->forward(corrupted)), run.at("logits").get<std::vector<double>>()) < 1e-4);
            }
        }
    }
}

TEST_CASE("pretrained patching: none is the plain run, every head the kept run's attention", "[pretrained][patching]")
{
    const auto c = attnscope_test::read_hf_case("llama-gqa");
    const auto p = patching_of("llama-gqa");
    auto model = load_checkpoint(c.config, c.views());
    const std::size_t L = model->config().layers, H = model->config().heads;
    auto clean = request(p.at("clean_ids"));
    clean.keep_heads = true;
    const auto kept = model->forward(clean);
    auto corrupted = request(p.at("corrupted_ids"));
    const auto plain = model->forward(corrupted);
    corrupted.patch_from = &kept.heads;
    corrupted.patch.assign(L * H, 0);
    // Patching nothing is the plain run, bit for bit: the same code, no row replaced.
    CHECK(model->forward(corrupted).logits.data == plain.logits.data);
    corrupted.patch.assign(L * H, 1);
    corrupted.keep_heads = true;
    const auto all = model->forward(corrupted);
    // Every head's context is the clean one, bit for bit. The last token is the same in both prompts, and norms and
    // MLPs act on each position alone, so its residual stream is its embedding plus attention outputs that are all
    // the clean run's: the clean logits there (to rounding: the other positions' keys still differ, unused).
    CHECK(all.heads.data == kept.heads.data);
    CHECK(attnscope_test::max_relative_error(last_logits(all), p.at("patched").back().at("logits").get<std::vector<double>>()) < 1e-4);
    CHECK(attnscope_test::max_relative_error(last_logits(all), p.at("clean_logits").get<std::vector<double>>()) < 1e-4);
    // ...and not at a position whose token differs (5), where the corrupted embedding stays in the stream.
    const std::size_t V = model->config().vocab;
    double moved = 0;
    for (std::size_t i = 0; i < V; ++i) moved = std::max(moved, double(std::fabs(all.logits.data[5 * V + i] - kept.logits.data[5 * V + i])));
    CHECK(moved > 1e-2);
    // Patching every head from a kept run of the same tokens is that run, bit for bit.
    clean.keep_heads = false;
    clean.patch.assign(L * H, 1);
    clean.patch_from = &kept.heads;
    CHECK(model->forward(clean).logits.data == kept.logits.data);
}

TEST_CASE("pretrained patching refuses a kept run that does not fit", "[pretrained][patching]")
{
    const auto c = attnscope_test::read_hf_case("gpt2-lm");
    auto model = load_checkpoint(c.config, c.views());
    const std::size_t L = model->config().layers, H = model->config().heads;
    auto clean = request(nlohmann::json{266, 261, 263});
    clean.keep_heads = true;
    const auto kept = model->forward(clean);
    auto r = request(nlohmann::json{266, 261});
    r.patch.assign(L * H, 1);
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("forward: patchFrom: expected a kept run's heads"));
    r.patch_from = &kept.heads;
    CHECK_THROWS_WITH(model->forward(r), "forward: patchFrom: expected a kept run of 2 tokens (this request's), got one of 3");
    r.patch.assign(L * H + 1, 1);
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("patch: expected 4 flags (layers × heads), got 5"));
    Tensor other({L, 2, H + 1, model->config().head_dim});
    r.patch.assign(L * H, 1);
    r.patch_from = &other;
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("patchFrom: expected [2, T, 2, 8] (a kept run of this model)"));
}
