// patch_each() against forward() run by run, bit for bit: each run is the request with that run's patch and
// logits_to_keep 1, computed as a whole fresh pass. patch_each batches the runs of a layer and skips the rows a patch
// cannot change, so its runs here cover what those shortcuts depend on: every layer (the patched one, the ones above
// it, the last), positions at both ends, on both sides of the query blocks' edges (32, 64) and at random, several
// positions in one run, grouped-query attention, a sliding window, parallel residuals, norms on the sublayers'
// outputs, soft-capped scores and logits, QK-norm, 16-bit weights, padding, zero ablation (and mean ablation, which
// runs each patch on its own), and two threads; some tokens' logits alone (logit_ids) against those columns of the
// whole rows; prompts that agree on their first tokens (the patches there change nothing, and patch_each drops them).
// And the runs against PyTorch's float64 patching, to 1e-4.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "attnscope/threads.hpp"
#include "model_files.hpp"
#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace patch_each_test {

using namespace attnscope;
using attnscope_test::random_ids;

namespace {

// Under AddressSanitizer each run checked is a whole forward pass at -O1 with every access checked, about 45 times
// native: the whole lists at 100 tokens made this file two minutes of the asan suite, and every third run still 94 s,
// the longest test of the suite by 44 s. There the long inputs have 70 tokens (past the query blocks' edges at 32 and
// 64 either way), runs_for's lists are a sample (kSampled, below) and every fifth position of the cached prompt below
// is checked; the other builds check every run at 100 tokens. What the sanitizer looks for, an access out of
// bounds, depends on which layers, heads and positions a run takes, not on how many runs repeat them.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kLongT = 70, kPositionStride = 5;
constexpr bool kSampled = true;
#else
constexpr std::size_t kLongT = 100, kPositionStride = 1;
constexpr bool kSampled = false;
#endif

// Every head at every position, then every layer's first and last head at the given single positions, then a few
// runs of several positions (unsorted, repeated), in a mixed order of layers.
// kSampled: every layer's whole-head run of head l % H, each single position of the list once (position k of the
// list in layer k % L, the first head or the last by turns) and the runs of several positions: every layer, both
// ends of the positions and each block edge stay in, as many runs as every sixth of the list.
std::vector<Transformer::PatchRun> runs_for(std::size_t L, std::size_t H, std::size_t T, unsigned seed)
{
    std::vector<Transformer::PatchRun> runs;
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h)
            if (!kSampled || h == l % H) runs.push_back({l, h, {}});
    std::vector<std::int32_t> at = {0, 1, std::int32_t(T - 2), std::int32_t(T - 1)};
    for (const std::int32_t edge : {31, 32, 33, 63, 64, 65})
        if (std::size_t(edge) < T) at.push_back(edge);
    std::mt19937 rng(seed);
    for (int i = 0; i < 4; ++i) at.push_back(std::int32_t(rng() % T));
    for (std::size_t l = L; l-- > 0;)
        for (const std::size_t h : {std::size_t(0), H - 1})
            for (std::size_t k = 0; k < at.size(); ++k) {
                const bool turn = l == k % L && (h == 0) == ((k / L) % 2 == 0);
                if (!kSampled || turn) runs.push_back({l, h, {at[k]}});
            }
    const std::int32_t last = std::int32_t(T - 1), mid = std::int32_t(T / 2);
    runs.push_back({0, 1 % H, {mid, 2}});
    runs.push_back({L - 1, 0, {last, 0}});
    runs.push_back({L / 2, H / 2, {mid, mid, std::int32_t(rng() % T)}});
    runs.push_back({L - 1, H - 1, {mid}});
    return runs;
}

// patch_each(corrupted, runs) row by row against forward() of each run; twice: from another input's pass in the
// cache, then from the request's own; then the runs with positions alone (a layer's batch without a run patched
// everywhere: its unpatched rows above the patched layer share their q|k|v).
void check_runs(Transformer& model, Transformer::Request corrupted, const std::vector<Transformer::PatchRun>& all)
{
    const std::size_t L = model.config().layers, H = model.config().heads, V = model.config().vocab;
    // Each run's forward(), once: the last row of logits of the whole patched pass.
    std::vector<std::vector<float>> want;
    for (const Transformer::PatchRun& run : all) {
        auto r = corrupted;
        r.patch.assign(L * H, 0);
        r.patch[run.layer * H + run.head] = 1;
        r.patch_positions = run.positions;
        r.logits_to_keep = 1;
        want.push_back(model.forward(r).logits.data);
    }
    ForwardCache cache;
    auto other = corrupted;
    other.tokens[0] = std::int32_t((std::size_t(other.tokens[0]) + 1) % V);
    other.patch_from = nullptr;
    model.forward(other, cache);
    std::vector<std::size_t> located;  // the runs with positions
    for (std::size_t i = 0; i < all.size(); ++i)
        if (!all[i].positions.empty()) located.push_back(i);
    for (const int round : {0, 1, 2}) {
        std::vector<std::size_t> index(all.size());
        for (std::size_t i = 0; i < all.size(); ++i) index[i] = i;
        if (round == 2) index = located;
        std::vector<Transformer::PatchRun> runs;
        for (const std::size_t i : index) runs.push_back(all[i]);
        INFO((round == 0 ? "the cache holding another input's pass" : round == 1 ? "the cache holding the request's pass" : "runs with positions"));
        const Tensor got = model.patch_each(corrupted, runs, cache);
        REQUIRE(got.shape == Shape{runs.size(), V});
        // Where the last run started: its layer, and its first position (its block's with a mean ablation, which
        // runs each patch on its own from there).
        const std::size_t first = std::size_t(*std::min_element(runs.back().positions.begin(), runs.back().positions.end()));
        CHECK(cache.resumed_layer() == runs.back().layer);
        CHECK(cache.resumed_position() == (corrupted.ablation == Ablation::mean ? 0 : first));
        for (std::size_t i = 0; i < runs.size(); ++i) {
            std::string at;
            for (const std::int32_t p : runs[i].positions) at += " " + std::to_string(p);
            INFO("run " << index[i] << ": layer " << runs[i].layer << " head " << runs[i].head << " at" << (at.empty() ? " every position" : at));
            CHECK(std::equal(want[index[i]].begin(), want[index[i]].end(), got.data.begin() + std::ptrdiff_t(i * V)));
        }
        if (round != 1) continue;
        // Only some tokens' logits: the same bits as those columns of the whole rows. Unsorted and repeated ids, two
        // in one packed panel, the first and the last (the vocabulary's last panel may be partial).
        const std::vector<std::int32_t> ids = {std::int32_t(V - 1), 3, 0, std::int32_t(V / 2), 3, 1, std::int32_t(V - 2)};
        const Tensor columns = model.patch_each(corrupted, runs, cache, ids);
        REQUIRE(columns.shape == Shape{runs.size(), ids.size()});
        for (std::size_t i = 0; i < runs.size(); ++i)
            for (std::size_t j = 0; j < ids.size(); ++j) {
                INFO("run " << index[i] << ", logitIds[" << j << "] = " << ids[j]);
                CHECK(columns.data[i * ids.size() + j] == want[index[i]][std::size_t(ids[j])]);
            }
    }
}

// A clean and a corrupted run of T tokens that differ at a third of the positions from `from` on, the clean one's
// heads kept.
struct Pair {
    Transformer::Request corrupted;
    Transformer::Output kept;
};

Pair pair_of(Transformer& model, std::size_t T, unsigned seed, std::size_t from = 0)
{
    const std::size_t V = model.config().vocab;
    Transformer::Request clean;
    clean.tokens = random_ids(T, V, seed);
    clean.need_attention = false;
    clean.keep_heads = true;
    Pair p{clean, model.forward(clean)};
    p.corrupted.keep_heads = false;
    const std::vector<std::int32_t> other = random_ids(T, V, seed + 1);
    for (std::size_t t = from; t < T; t += 3) p.corrupted.tokens[t] = other[t];
    return p;
}

}  // namespace

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

// Skipping positions whose context is the same bits, with what else a request can carry: padding, heads switched off in
// both runs (their contexts are zeros in both, so skipped too), and two threads.
TEST_CASE("patch_each skips the same positions with padding, heads switched off and two threads", "[patching]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::size_t L = m.config().layers, H = m.config().heads, V = m.config().vocab, T = kLongT;
    const auto runs = runs_for(L, H, T, 19);
    for (int variant = 0; variant < 3; ++variant) {
        Transformer::Request clean;
        clean.tokens = random_ids(T, V, 77);
        clean.need_attention = false;
        clean.keep_heads = true;
        if (variant == 0) {
            clean.attention_mask.assign(T, 1);
            clean.attention_mask[3] = clean.attention_mask[50] = 0;
            clean.ablate.assign(L * H, 0);
            clean.ablate[H + 1] = 1;
            clean.ablate[0] = 1;
        }
        auto kept = m.forward(clean);
        auto corrupted = clean;
        corrupted.keep_heads = false;
        const auto other = random_ids(T, V, 78);
        for (std::size_t t = 47; t < T; t += 5) corrupted.tokens[t] = other[t];
        corrupted.patch_from = &kept.heads;
        if (variant == 2) set_num_threads(2);
        INFO("variant " << variant);
        check_runs(m, corrupted, runs);
        set_num_threads(1);
    }
}

// The demo's per-position patching as it calls the core: the clean pass keeps its heads in a cache, the corrupted
// prompt reuses that cache's first block, then patch_each runs through it at every position with two logit ids.
TEST_CASE("patch_each through a cache filled by a keepHeads pass and reused by the corrupted prompt", "[patching]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::size_t L = m.config().layers, H = m.config().heads, V = m.config().vocab, T = 70;
    Transformer::Request clean;
    clean.tokens = random_ids(T, V, 5);
    clean.need_attention = false;
    clean.keep_heads = true;
    clean.logits_to_keep = 1;
    ForwardCache cache;
    const Transformer::Output kept = m.forward(clean, cache);
    auto corrupted = clean;
    corrupted.keep_heads = false;
    corrupted.tokens[50] = std::int32_t((corrupted.tokens[50] + 1) % V);
    m.forward(corrupted, cache);
    CHECK(cache.reused() == 32);
    corrupted.patch_from = &kept.heads;
    std::vector<Transformer::PatchRun> runs;
    for (std::size_t p = 0; p < T; ++p) runs.push_back({1, 2, {std::int32_t(p)}});
    const std::vector<std::int32_t> ids = {3, 9};
    const Tensor got = m.patch_each(corrupted, runs, cache, ids);
    // patch_each ran every position; its rows are checked at every kPositionStride-th one (the changed token's 50
    // among them), on both sides of the reused block's end and at the last.
    std::set<std::size_t> checked = {31, 32, T - 1};
    for (std::size_t p = 0; p < T; p += kPositionStride) checked.insert(p);
    for (const std::size_t p : checked) {
        auto r = corrupted;
        r.patch.assign(L * H, 0);
        r.patch[1 * H + 2] = 1;
        r.patch_positions = {std::int32_t(p)};
        r.logits_to_keep = 1;
        const Tensor want = m.forward(r).logits;
        INFO("p " << p);
        CHECK(got.data[p * 2] == want.data[3]);
        CHECK(got.data[p * 2 + 1] == want.data[9]);
    }
}

}  // namespace patch_each_test
