// Activation patching and mean ablation against tools/references/hf_patching_reference.py (float64 PyTorch from the fixtures'
// weights): the last position's logits to 1e-4 of the largest; patching every head from the clean run gives the
// clean logits and patching none the corrupted ones; a bad kept run or bad flags are refused, naming the field.
// Per-position patching (patch_positions) against hf_patch_positions_reference.py, fresh and through a ForwardCache
// (which starts at the patched layer and position, and gives the fresh pass's bits); logits_to_keep's last rows;
// patch_each against forward() run by run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "attnscope/model.hpp"
#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace pretrained_patching_test {

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

namespace {

// The rows of logits from `first` on, flattened.
std::vector<float> rows_from(const Tensor& logits, std::size_t first)
{
    return std::vector<float>(logits.data.begin() + first * logits.shape[1], logits.data.end());
}

}  // namespace

TEST_CASE("per-position patching matches PyTorch, fresh and from the patched layer and position", "[pretrained][patching]")
{
    for (const char* name : {"llama-gqa", "mistral-window"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            const auto p = nlohmann::json::parse(attnscope_test::read_text(attnscope_test::hf_dir(name) + "/patch_positions.json"));
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t L = model->config().layers, H = model->config().heads, first_row = p.at("first_row");
            auto clean = request(p.at("clean_ids"));
            clean.keep_heads = true;
            const auto kept = model->forward(clean);
            auto corrupted = request(p.at("corrupted_ids"));
            corrupted.need_attention = true;
            ForwardCache cache;
            const auto plain = model->forward(corrupted, cache);
            CHECK(attnscope_test::max_relative_error(rows_from(plain.logits, first_row), p.at("corrupted_logits").get<std::vector<double>>()) < 1e-4);
            corrupted.patch_from = &kept.heads;
            for (const auto& run : p.at("patched")) {
                const std::size_t layer = run.at("layer"), head = run.at("head");
                const auto positions = run.at("positions").get<std::vector<std::int32_t>>();
                INFO("layer " << layer << " head " << head << " at " << run.at("positions").dump());
                corrupted.patch.assign(L * H, 0);
                corrupted.patch[layer * H + head] = 1;
                corrupted.patch_positions = positions;
                const auto fresh = model->forward(corrupted);
                const auto want = run.at("logits").get<std::vector<double>>();
                CHECK(attnscope_test::max_relative_error(rows_from(fresh.logits, first_row), want) < 1e-4);
                const auto& resumed = model->forward(corrupted, cache);
                CHECK(resumed.logits.data == fresh.logits.data);
                CHECK(resumed.hidden.data == fresh.hidden.data);
                CHECK(resumed.attention.data == fresh.attention.data);
                CHECK(cache.resumed_layer() == layer);
                CHECK(cache.resumed_position() == std::size_t(*std::min_element(positions.begin(), positions.end())) / 32 * 32);
                // Only the last row's logits: the same numbers, the rows before it skipped.
                corrupted.logits_to_keep = 1;
                const auto& last = model->forward(corrupted, cache);
                REQUIRE(last.logits.shape == Shape{1, fresh.logits.shape[1]});
                CHECK(last.logits.data == rows_from(fresh.logits, fresh.logits.shape[0] - 1));
                corrupted.logits_to_keep = 0;
            }
            // The cache still holds the unpatched pass.
            corrupted.patch.clear();
            corrupted.patch_positions.clear();
            CHECK(model->forward(corrupted, cache).logits.data == plain.logits.data);
        }
    }
}

TEST_CASE("per-position patching is whole-run patching from a kept run spliced at those positions", "[pretrained][patching]")
{
    // The same patch written two ways: patch_positions {p} from the clean run, and every position from the corrupted
    // run's own contexts with position p's taken from the clean run (at the others the head computes them anyway).
    const auto c = attnscope_test::read_hf_case("llama-gqa");
    auto model = load_checkpoint(c.config, c.views());
    const std::size_t L = model->config().layers, H = model->config().heads, hd = model->config().head_dim, V = model->config().vocab;
    std::vector<std::int32_t> a(45), b(45);
    for (std::size_t t = 0; t < 45; ++t) {
        a[t] = std::int32_t((t * 7 + 3) % V);
        b[t] = t % 9 == 4 ? std::int32_t((t * 5 + 1) % V) : a[t];
    }
    Transformer::Request clean, corrupted;
    clean.tokens = a;
    corrupted.tokens = b;
    clean.need_attention = corrupted.need_attention = false;
    clean.keep_heads = corrupted.keep_heads = true;
    const auto kept = model->forward(clean), own = model->forward(corrupted);
    corrupted.keep_heads = false;
    for (const std::int32_t at : {0, 13, 33, 44}) {
        INFO("position " << at);
        Tensor spliced = own.heads;
        const std::size_t layer = 0, head = 3, from = ((layer * 45 + std::size_t(at)) * H + head) * hd;
        std::copy_n(kept.heads.data.begin() + from, hd, spliced.data.begin() + from);
        corrupted.patch.assign(L * H, 0);
        corrupted.patch[layer * H + head] = 1;
        corrupted.patch_from = &spliced;
        corrupted.patch_positions.clear();
        const auto whole = model->forward(corrupted);
        corrupted.patch_from = &kept.heads;
        corrupted.patch_positions = {at};
        CHECK(model->forward(corrupted).logits.data == whole.logits.data);
    }
}

TEST_CASE("logits_to_keep returns the last rows; bad positions and counts are refused", "[pretrained][patching]")
{
    const auto c = attnscope_test::read_hf_case("gpt2-lm");
    auto model = load_checkpoint(c.config, c.views());
    const std::size_t L = model->config().layers, H = model->config().heads;
    auto r = request(nlohmann::json{266, 261, 263, 265});
    const auto all = model->forward(r);
    for (std::size_t keep : {1, 3, 4}) {
        r.logits_to_keep = keep;
        const auto out = model->forward(r);
        REQUIRE(out.logits.shape == Shape{keep, all.logits.shape[1]});
        CHECK(out.logits.data == rows_from(all.logits, 4 - keep));
        CHECK(out.hidden.data == all.hidden.data);
    }
    r.logits_to_keep = 5;
    CHECK_THROWS_WITH(model->forward(r), "forward: options.logitsToKeep: expected a whole number from 1 to 4 (one row per token), got 5");
    r.logits_to_keep = 0;
    r.patch_positions = {1};
    CHECK_THROWS_WITH(model->forward(r), "forward: patchPositions: expected with options.patch (the heads to patch), got no heads");
    auto clean = r;
    clean.patch_positions.clear();
    clean.keep_heads = true;
    const auto kept = model->forward(clean);
    r.patch.assign(L * H, 1);
    r.patch_from = &kept.heads;
    r.patch_positions = {0, 4};
    CHECK_THROWS_WITH(model->forward(r), "forward: patchPositions[1]: expected a position from 0 to 3, got 4");
    r.patch_positions = {-2};
    CHECK_THROWS_WITH(model->forward(r), "forward: patchPositions[0]: expected a position from 0 to 3, got -2");
}

TEST_CASE("logits_to_keep through a cache: the kept rows it holds are reused, the others computed", "[pretrained][patching]")
{
    const auto c = attnscope_test::read_hf_case("llama-gqa");
    auto model = load_checkpoint(c.config, c.views());
    Transformer::Request r;
    for (std::size_t t = 0; t < 40; ++t) r.tokens.push_back(std::int32_t((t * 11 + 5) % model->config().vocab));
    ForwardCache cache;
    // (tokens, logits_to_keep) in turn: a pass keeping one row, then longer inputs wanting every row, one, and 20.
    // {64, 40} after {50, 0}: rows 24..31 of its logits are the kept pass's, copied.
    for (const auto& [T, keep] : std::vector<std::pair<std::size_t, std::size_t>>{{40, 1}, {50, 0}, {60, 1}, {64, 20}, {64, 0}, {50, 0}, {64, 40}}) {
        INFO(T << " tokens, logits_to_keep " << keep);
        r.tokens.resize(std::min(r.tokens.size(), T));
        while (r.tokens.size() < T) r.tokens.push_back(std::int32_t(r.tokens.size() % 7));
        r.logits_to_keep = keep;
        const auto& got = model->forward(r, cache);
        const auto fresh = model->forward(r);
        CHECK(got.logits.shape == fresh.logits.shape);
        CHECK(got.logits.data == fresh.logits.data);
        CHECK(got.hidden.data == fresh.hidden.data);
        CHECK(cache.reused() == (T == 40 ? 0 : T == 64 && keep == 0 ? 64 : 32));
        if (T == 64 && keep == 40) CHECK(got.logits.data.size() == 40 * model->config().vocab);
    }
}

TEST_CASE("patch_each gives each run's forward() last row, bit for bit, and refuses bad runs by index", "[pretrained][patching]")
{
    const auto c = attnscope_test::read_hf_case("llama-gqa");
    auto model = load_checkpoint(c.config, c.views());
    const std::size_t L = model->config().layers, H = model->config().heads, V = model->config().vocab;
    Transformer::Request clean, corrupted;
    for (std::size_t t = 0; t < 45; ++t) {
        clean.tokens.push_back(std::int32_t((t * 13 + 2) % V));
        corrupted.tokens.push_back(t % 6 == 1 ? std::int32_t((t * 3 + 7) % V) : clean.tokens.back());
    }
    clean.keep_heads = true;
    clean.need_attention = false;
    const auto kept = model->forward(clean);
    corrupted.patch_from = &kept.heads;
    std::vector<Transformer::PatchRun> runs;
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h) runs.push_back({l, h, {}});
    runs.push_back({0, 1, {7}});
    runs.push_back({1, 3, {40, 33}});
    runs.push_back({0, 0, {0, 44}});
    ForwardCache cache;
    auto other = corrupted;
    other.tokens[3] = 0;
    model->forward(other, cache);  // another input's pass: patch_each takes the request's first
    for (const bool again : {false, true}) {
        INFO((again ? "the cache holding the request's pass" : "the cache holding another input's pass"));
        const Tensor got = model->patch_each(corrupted, runs, cache);
        REQUIRE(got.shape == Shape{runs.size(), V});
        CHECK(cache.positions() == 45);
        for (std::size_t i = 0; i < runs.size(); ++i) {
            INFO("run " << i);
            auto r = corrupted;
            r.patch.assign(L * H, 0);
            r.patch[runs[i].layer * H + runs[i].head] = 1;
            r.patch_positions = runs[i].positions;
            r.logits_to_keep = 1;
            const auto want = model->forward(r);
            CHECK(std::equal(want.logits.data.begin(), want.logits.data.end(), got.data.begin() + std::ptrdiff_t(i * V)));
        }
    }
    CHECK_THROWS_WITH(model->patch_each(corrupted, {{2, 0, {}}}, cache), "patchEach: options.patches[0].layer: expected 0 to 1, got 2");
    CHECK_THROWS_WITH(model->patch_each(corrupted, {{0, 0, {}}, {0, 4, {}}}, cache), "patchEach: options.patches[1].head: expected 0 to 3, got 4");
    CHECK_THROWS_WITH(model->patch_each(corrupted, {{0, 0, {3, 45}}}, cache), "patchEach: options.patches[0].positions[1]: expected a position from 0 to 44, got 45");
    CHECK_THROWS_WITH(model->patch_each(corrupted, {}, cache), Catch::Contains("patches: expected at least one"));
    auto without = corrupted;
    without.patch_from = nullptr;
    CHECK_THROWS_WITH(model->patch_each(without, {{0, 0, {}}}, cache), Catch::Contains("patchFrom: expected a kept run's heads"));
    // Still usable: the same numbers as before.
    CHECK(model->patch_each(corrupted, {runs.back()}, cache).data.size() == V);
}

}  // namespace pretrained_patching_test
