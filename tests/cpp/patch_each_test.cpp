// patch_each() against forward() run by run, bit for bit: each run is the request with that run's patch and
// logits_to_keep 1, computed as a whole fresh pass. patch_each batches the runs of a layer and skips the rows a patch
// cannot change, so its runs here cover what those shortcuts depend on: every layer (the patched one, the ones above
// it, the last), positions at both ends, on both sides of the query blocks' edges (32, 64) and at random, several
// positions in one run, grouped-query attention, a sliding window, parallel residuals, norms on the sublayers'
// outputs, soft-capped scores and logits, QK-norm, 16-bit weights, padding, zero ablation (and mean ablation, which
// runs each patch on its own), and two threads; some tokens' logits alone (logit_ids) against those columns of the
// whole rows; prompts that agree on their first tokens (the patches there change nothing, and patch_each drops them).
// And the runs against PyTorch's float64 patching, to 1e-4.
// The skips with padding, heads switched off and two threads, and the demo's cache: patch_skips_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "attnscope/threads.hpp"
#include "model_files.hpp"
#include "pretrained_files.hpp"
#include "patch_each_checks.hpp"
#include "test_utils.hpp"

namespace patch_each_test {

using namespace attnscope;
using attnscope_test::random_ids;
using namespace attnscope_test::patch_checks;

TEST_CASE("patch_each gives forward()'s bits run by run: Hugging Face families", "[patching][pretrained]")
{
    for (const char* name : {"llama-gqa", "mistral-window", "gpt-neox-parallel", "olmo2-outnorm", "gemma2-softcap", "qwen3-qknorm",
                             "llama-bf16", "gpt2-lm"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t T = std::min<std::size_t>(model->config().max_positions, 64);
            Pair p = pair_of(*model, T, 11);
            p.corrupted.patch_from = &p.kept.heads;
            check_runs(*model, p.corrupted, runs_for(model->config().layers, model->config().heads, T, 5));
            // Prompts that agree on their first 33 tokens: the patches before it change nothing, and are dropped
            // (fixtures of at most 33 positions give two equal prompts: every run is the kept pass).
            Pair q = pair_of(*model, T, 12, 33);
            q.corrupted.patch_from = &q.kept.heads;
            check_runs(*model, q.corrupted, runs_for(model->config().layers, model->config().heads, T, 6));
        }
    }
}

TEST_CASE("patch_each gives forward()'s bits run by run: three layers, a long input, padding and ablation", "[patching]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::size_t L = m.config().layers, H = m.config().heads, T = kLongT;
    Pair p = pair_of(m, T, 3);
    p.corrupted.patch_from = &p.kept.heads;
    const auto runs = runs_for(L, H, T, 9);
    SECTION("padding and a zero-ablated head") {  // the Hugging Face cases above run without either
        p.corrupted.attention_mask.assign(T, 1);
        p.corrupted.attention_mask[0] = p.corrupted.attention_mask[40] = 0;
        p.corrupted.ablate.assign(L * H, 0);
        p.corrupted.ablate[H + 1] = 1;  // also a patched head of some runs: the patch replaces its zeros
        check_runs(m, p.corrupted, runs);
    }
    SECTION("prompts that agree on their first 45 tokens") {
        // The patches before position 45 give their heads the contexts they have: patch_each drops those
        // positions, and a run of them alone is the corrupted pass.
        Pair q = pair_of(m, T, 3, 45);
        q.corrupted.patch_from = &q.kept.heads;
        check_runs(m, q.corrupted, runs);
    }
    SECTION("a mean-ablated head") {
        p.corrupted.ablate.assign(L * H, 0);
        p.corrupted.ablate[2 * H - 1] = 1;
        p.corrupted.ablation = Ablation::mean;
        check_runs(m, p.corrupted, {runs.begin(), runs.begin() + std::ptrdiff_t(L * H + 4)});
    }
}

TEST_CASE("patch_each refuses logit ids the vocabulary does not have, and the cache stays usable", "[patching]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::size_t V = m.config().vocab, T = 12;
    Pair p = pair_of(m, T, 6);
    p.corrupted.patch_from = &p.kept.heads;
    ForwardCache cache;
    const std::vector<Transformer::PatchRun> runs = {{1, 2, {5}}, {0, 0, {}}};
    CHECK_THROWS_WITH(m.patch_each(p.corrupted, runs, cache, {0, std::int32_t(V)}),
                      Catch::Equals("patchEach: options.logitIds[1]: expected a token id from 0 to " + std::to_string(V - 1) + ", got " + std::to_string(V)));
    CHECK_THROWS_WITH(m.patch_each(p.corrupted, runs, cache, {-3}), Catch::Contains("options.logitIds[0]: expected a token id from 0 to " + std::to_string(V - 1) + ", got -3"));
    CHECK(cache.positions() == 0);  // refused before any pass
    const Tensor all = m.patch_each(p.corrupted, runs, cache);
    const Tensor two = m.patch_each(p.corrupted, runs, cache, {7, 2});
    REQUIRE(two.shape == Shape{2, 2});
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(two.data[i * 2] == all.data[i * V + 7]);
        CHECK(two.data[i * 2 + 1] == all.data[i * V + 2]);
    }
}

TEST_CASE("soft-capped logits: rows and asked-for columns keep their bits however many are computed, a vocabulary SIMD vectors do not divide",
          "[patching][pretrained]")
{
    // The Gemma 2 fixture (final_logit_softcapping 5) with its vocabulary cut to 45 tokens, so that the last columns
    // of a row go through the soft-cap's scalar formula (45 = 11 vectors of 4 + 1, or 5 of 8 + 5).
    const auto c = attnscope_test::read_hf_case("gemma2-softcap");
    const std::size_t V = 45;
    std::vector<attnscope_test::FakeTensor> tensors = attnscope_test::safetensors_tensors(c.files.at("model.safetensors"));
    for (attnscope_test::FakeTensor& t : tensors)
        if (t.name == "model.embed_tokens.weight") {
            t.bytes.resize(V * t.shape[1] * 4);
            t.shape[0] = V;
        }
    const std::string cut = attnscope_test::safetensors_file(tensors);
    auto config = nlohmann::json::parse(c.config);
    config["vocab_size"] = V;
    auto model = load_checkpoint(config.dump(), {{"model.safetensors", {reinterpret_cast<const std::uint8_t*>(cut.data()), cut.size()}}});
    REQUIRE(model->config().vocab == V);
    const std::size_t L = model->config().layers, H = model->config().heads, T = 20;
    Pair p = pair_of(*model, T, 8);
    p.corrupted.patch_from = &p.kept.heads;
    // A pass's rows of logits are the same bits whichever of its last rows are kept (logits_to_keep): each row is
    // soft-capped on its own.
    auto all = p.corrupted;
    all.patch_from = nullptr;
    const Tensor rows = model->forward(all).logits;
    for (std::size_t k = 1; k < T; ++k) {
        auto last = all;
        last.logits_to_keep = k;
        INFO("the last " << k << " rows");
        CHECK(std::equal(rows.data.end() - std::ptrdiff_t(k * V), rows.data.end(), model->forward(last).logits.data.begin()));
    }
    // patch_each's rows and columns against each run's forward(), the last columns among them.
    check_runs(*model, p.corrupted, runs_for(L, H, T, 7));
    const std::vector<Transformer::PatchRun> runs = {{0, 1, {3}}, {L - 1, H - 1, {}}, {1, 0, {T - 1}}};
    ForwardCache cache;
    const std::vector<std::int32_t> ids = {44, 40, 43, 0, 41};
    const Tensor columns = model->patch_each(p.corrupted, runs, cache, ids);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        auto r = p.corrupted;
        r.patch.assign(L * H, 0);
        r.patch[runs[i].layer * H + runs[i].head] = 1;
        r.patch_positions = runs[i].positions;
        r.logits_to_keep = 1;
        const Tensor want = model->forward(r).logits;
        for (std::size_t j = 0; j < ids.size(); ++j) {
            INFO("run " << i << ", token " << ids[j]);
            CHECK(columns.data[i * ids.size() + j] == want.data[std::size_t(ids[j])]);
        }
    }
}

TEST_CASE("patch_each gives forward()'s bits run by run with two threads", "[patching][threads]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::size_t L = m.config().layers, H = m.config().heads, T = 40;  // both products and attention split
    Pair p = pair_of(m, T, 4);
    p.corrupted.patch_from = &p.kept.heads;
    const std::size_t threads = set_num_threads(2);
    check_runs(m, p.corrupted, runs_for(L, H, T, 2));
    set_num_threads(1);
    CHECK(threads >= 1);
}

TEST_CASE("patch_each matches PyTorch's per-position and whole-head patching", "[patching][pretrained]")
{
    // hf_patch_positions_reference.py and hf_patching_reference.py (float64 PyTorch from the fixtures' weights): each
    // run's last row of logits to 1e-4 of the largest.
    const auto last_row = [](const nlohmann::json& logits, std::size_t V) {
        const auto all = logits.get<std::vector<double>>();
        return std::vector<double>(all.end() - std::ptrdiff_t(V), all.end());
    };
    for (const char* name : {"llama-gqa", "mistral-window", "gpt2-lm"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t V = model->config().vocab;
            const bool positions = std::string(name) != "gpt2-lm";
            const auto p = nlohmann::json::parse(
                attnscope_test::read_text(attnscope_test::hf_dir(name) + (positions ? "/patch_positions.json" : "/patching.json")));
            Transformer::Request clean, corrupted;
            clean.tokens = p.at("clean_ids").get<std::vector<std::int32_t>>();
            corrupted.tokens = p.at("corrupted_ids").get<std::vector<std::int32_t>>();
            clean.need_attention = corrupted.need_attention = false;
            clean.keep_heads = true;
            const auto kept = model->forward(clean);
            corrupted.patch_from = &kept.heads;
            std::vector<Transformer::PatchRun> runs;
            std::vector<std::vector<double>> want;
            for (const auto& run : p.at("patched")) {
                if (positions) {
                    runs.push_back({run.at("layer"), run.at("head"), run.at("positions").get<std::vector<std::int32_t>>()});
                } else {
                    if (run.at("heads").size() != 1) continue;  // patch_each patches one head per run
                    runs.push_back({run.at("heads")[0].at(0), run.at("heads")[0].at(1), {}});
                }
                want.push_back(last_row(run.at("logits"), V));
            }
            REQUIRE(runs.size() >= 4);
            ForwardCache cache;
            const Tensor got = model->patch_each(corrupted, runs, cache);
            for (std::size_t i = 0; i < runs.size(); ++i) {
                INFO("run " << i << ": layer " << runs[i].layer << " head " << runs[i].head);
                const std::vector<float> row(got.data.begin() + std::ptrdiff_t(i * V), got.data.begin() + std::ptrdiff_t((i + 1) * V));
                CHECK(attnscope_test::max_relative_error(row, want[i]) < 1e-4);
            }
        }
    }
}

}  // namespace patch_each_test
