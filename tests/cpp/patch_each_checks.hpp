// The checks patch_each_test.cpp and patch_skips_test.cpp share: the runs to patch, each run against a whole
// forward() pass bit for bit, and a clean and corrupted pair of prompts. Two files, so that CTest runs them side by
// side: under AddressSanitizer they were one file of 49 s, the asan suite's longest by far.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "attnscope/threads.hpp"
#include "model_files.hpp"
#include "test_utils.hpp"

namespace attnscope_test::patch_checks {

using namespace attnscope;

// Under AddressSanitizer each run checked is a whole forward pass at -O1 with every access checked, about 45 times
// native: the whole lists at 100 tokens made this file two minutes of the asan suite. There the long inputs have 70
// tokens (past the query blocks' edges at 32 and 64 either way) and every third run of runs_for's lists is checked;
// the other builds check every run at 100 tokens.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kLongT = 70, kRunStride = 3;
#else
constexpr std::size_t kLongT = 100, kRunStride = 1;
#endif

// Every head at every position, then every layer's first and last head at the given single positions, then a few
// runs of several positions (unsorted, repeated), in a mixed order of layers.
inline std::vector<Transformer::PatchRun> runs_for(std::size_t L, std::size_t H, std::size_t T, unsigned seed)
{
    std::vector<Transformer::PatchRun> runs;
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h) runs.push_back({l, h, {}});
    std::vector<std::int32_t> at = {0, 1, std::int32_t(T - 2), std::int32_t(T - 1)};
    for (const std::int32_t edge : {31, 32, 33, 63, 64, 65})
        if (std::size_t(edge) < T) at.push_back(edge);
    std::mt19937 rng(seed);
    for (int i = 0; i < 4; ++i) at.push_back(std::int32_t(rng() % T));
    for (std::size_t l = L; l-- > 0;)
        for (const std::size_t h : {std::size_t(0), H - 1})
            for (const std::int32_t p : at) runs.push_back({l, h, {p}});
    const std::int32_t last = std::int32_t(T - 1), mid = std::int32_t(T / 2);
    runs.push_back({0, 1 % H, {mid, 2}});
    runs.push_back({L - 1, 0, {last, 0}});
    runs.push_back({L / 2, H / 2, {mid, mid, std::int32_t(rng() % T)}});
    runs.push_back({L - 1, H - 1, {mid}});
    // Every kRunStride-th run, and always the four of several positions: every layer and both ends of the
    // positions stay in.
    std::vector<Transformer::PatchRun> some;
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (i % kRunStride == 0 || i + 4 >= runs.size()) some.push_back(runs[i]);
    return some;
}

// patch_each(corrupted, runs) row by row against forward() of each run; twice: from another input's pass in the
// cache, then from the request's own; then the runs with positions alone (a layer's batch without a run patched
// everywhere: its unpatched rows above the patched layer share their q|k|v).
inline void check_runs(Transformer& model, Transformer::Request corrupted, const std::vector<Transformer::PatchRun>& all)
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

inline Pair pair_of(Transformer& model, std::size_t T, unsigned seed, std::size_t from = 0)
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

}  // namespace attnscope_test::patch_checks
