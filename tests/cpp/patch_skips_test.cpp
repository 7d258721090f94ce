// patch_each() against forward() run by run, bit for bit (patch_each_checks.hpp), where it skips the rows a patch
// cannot change: with padding, heads switched off in both runs and two threads, and through the cache the demo's
// per-position patching fills with a keepHeads pass and reuses for the corrupted prompt.
#include <catch2/catch.hpp>

#include "attnscope/threads.hpp"
#include "model_files.hpp"
#include "patch_each_checks.hpp"
#include "test_utils.hpp"

namespace patch_skips_test {

using namespace attnscope;
using namespace attnscope_test::patch_checks;
using attnscope_test::random_ids;

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
    for (std::size_t p = 0; p < T; ++p) {
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

}  // namespace patch_skips_test
