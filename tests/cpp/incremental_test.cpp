// forward() through a ForwardCache against a fresh forward() of the same request: the same bits of logits, hidden
// states and attention maps, for our char LM and Hugging Face families (learned positions, RoPE with GQA, a sliding
// window), at lengths around the query block of 32, with appended, changed and shortened inputs, padding, zero
// ablation and two threads; and the rows it reused, which say the prefix was not recomputed. Patched calls, trace()
// and the logit lens through a cache give a fresh call's bits too.
#include <algorithm>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attnscope/threads.hpp"
#include "model_files.hpp"
#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace incremental_test {

using namespace attnscope;
using attnscope_test::random_ids;

namespace {

// The char LM's lens input: under AddressSanitizer 40 tokens, still past the query block's end at 32 and long enough
// for the extended-cache branch (over 33), where 70 made that one test 40 s of the asan suite; 70 elsewhere.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kLensT = 40;
#else
constexpr std::size_t kLensT = 70;
#endif

Transformer::Request request_of(std::vector<std::int32_t> ids, bool attention = true)
{
    Transformer::Request r;
    r.tokens = std::move(ids);
    r.need_attention = attention;
    return r;
}

// Bit-for-bit equality of what a fresh pass returns and what the cache returned (NaN-free, so == is exact).
void require_same(Transformer& m, const Transformer::Request& r, const Transformer::Output& got)
{
    const Transformer::Output fresh = m.forward(r);
    REQUIRE(got.logits.shape == fresh.logits.shape);
    CHECK(got.logits.data == fresh.logits.data);
    REQUIRE(got.hidden.shape == fresh.hidden.shape);
    CHECK(got.hidden.data == fresh.hidden.data);
    REQUIRE(got.attention.shape == fresh.attention.shape);
    CHECK(got.attention.data == fresh.attention.data);
}

// Appends, a changed token, a shorter input, maps turned off and on, from `first` tokens.
void check_model(Transformer& m, std::size_t first, unsigned seed)
{
    const std::size_t V = m.config().vocab, P = m.config().max_positions;
    const std::vector<std::int32_t> ids = random_ids(P, V, seed);
    const auto prefix = [&](std::size_t n) { return std::vector<std::int32_t>(ids.begin(), ids.begin() + std::min(n, P)); };
    ForwardCache cache;
    auto r = request_of(prefix(first));
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == 0);
    CHECK(cache.positions() == first);
    for (std::size_t more : {1, 4, 37}) {
        const std::size_t before = r.tokens.size();
        if (before + more > P) break;
        r = request_of(prefix(before + more));
        INFO(before << " tokens + " << more);
        require_same(m, r, m.forward(r, cache));
        CHECK(cache.reused() == before / 32 * 32);
    }
    // A changed token: only the rows before its block are kept.
    const std::size_t T = r.tokens.size(), changed = T * 2 / 3;
    r.tokens[changed] = std::int32_t((std::size_t(r.tokens[changed]) + 1) % V);
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == changed / 32 * 32);
    // Shorter: every row is a kept one when the new end is a block's.
    if (T > 32) {
        r.tokens.resize(32);
        require_same(m, r, m.forward(r, cache));
        CHECK(cache.reused() == 32);
    }
    // Without maps, then with them again: the second cannot reuse rows whose maps were not kept.
    r = request_of(prefix(T), false);
    require_same(m, r, m.forward(r, cache));
    r = request_of(prefix(T + 2));
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == 0);
}

}  // namespace

TEST_CASE("forward through a cache gives a fresh pass's bits: our char LM", "[incremental]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    // Below, at and past the first block's end, and inside the third block after the appends: the Hugging Face cases
    // below start at 3 and 33 too. More starts cost minutes under the sanitizers and cover no other branch.
    for (std::size_t first : {1, 31, 70}) {
        INFO("first " << first);
        check_model(m, first, unsigned(first));
    }
}

TEST_CASE("forward through a cache gives a fresh pass's bits: Hugging Face families", "[incremental][pretrained]")
{
    for (const char* name : {"gpt2-lm", "llama-gqa", "mistral-window", "qwen2-window-layers", "llama-bf16"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            auto model = load_checkpoint(c.config, c.views());
            for (std::size_t first : {3, 33}) {
                if (first >= model->config().max_positions) continue;
                INFO("first " << first);
                check_model(*model, first, 7);
            }
        }
    }
}

TEST_CASE("forward through a cache: padding, zero ablation and two threads", "[incremental][threads]")
{
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::vector<std::int32_t> ids = random_ids(100, m.config().vocab, 3);
    ForwardCache cache;
    auto r = request_of({ids.begin(), ids.begin() + 70});
    r.attention_mask.assign(70, 1);
    r.attention_mask[0] = r.attention_mask[40] = 0;
    r.ablate.assign(m.config().layers * m.config().heads, 0);
    r.ablate[5] = 1;
    require_same(m, r, m.forward(r, cache));
    r.tokens.assign(ids.begin(), ids.end());
    r.attention_mask.resize(100, 1);
    {
        const std::size_t threads = set_num_threads(2);
        require_same(m, r, m.forward(r, cache));
        set_num_threads(1);
        CHECK(threads >= 1);
    }
    CHECK(cache.reused() == 64);
    // A different mask inside the prefix, other heads switched off, mean ablation: nothing is reused.
    r.attention_mask[3] = 0;
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == 0);
    r.ablate[5] = 0;
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == 0);
    r.ablate[6] = 1;
    r.ablation = Ablation::mean;
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == 0);
    require_same(m, r, m.forward(r, cache));
    CHECK(cache.reused() == 0);
}

TEST_CASE("a pass that kept its heads is reused by the next call; a call that keeps its heads runs fresh", "[incremental][patching]")
{
    // Patching's clean run (its heads kept), then its corrupted run through the same cache: only the blocks from
    // the first changed token on are computed.
    Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    const std::size_t V = m.config().vocab;
    ForwardCache cache;
    auto clean = request_of(random_ids(100, V, 12), false);
    clean.keep_heads = true;
    const Transformer::Output fresh = m.forward(clean);
    CHECK(m.forward(clean, cache).heads.data == fresh.heads.data);
    CHECK(cache.reused() == 0);
    auto corrupted = request_of(clean.tokens, false);
    corrupted.tokens[70] = std::int32_t((std::size_t(corrupted.tokens[70]) + 1) % V);
    require_same(m, corrupted, m.forward(corrupted, cache));
    CHECK(cache.reused() == 64);
    // Kept heads again: every row's are needed, and the cache holds none.
    clean.tokens = corrupted.tokens;
    const Transformer::Output& again = m.forward(clean, cache);
    CHECK(cache.reused() == 0);
    CHECK(again.heads.data == m.forward(clean).heads.data);
}

TEST_CASE("forward through a cache refuses what it cannot extend, and stays usable", "[incremental]")
{
    Transformer& lm = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    Transformer& dates = attnscope_test::shipped_model("dates-seq2seq.safetensors").file.seq2seq->transformer();
    ForwardCache cache;
    auto r = request_of(random_ids(40, lm.config().vocab, 5));
    lm.forward(r, cache);
    auto other = request_of({1, 2, 3});
    other.source = {1, 2};
    CHECK_THROWS_WITH(dates.forward(other, cache), Catch::Contains("forward: cache: only a causal language model's pass can be extended"));
    // Another model's pass: refused, and the cache still extends its own.
    const auto c = attnscope_test::read_hf_case("llama-gqa");
    auto llama = load_checkpoint(c.config, c.views());
    CHECK_THROWS_WITH(llama->forward(request_of({1, 2}), cache), Catch::Contains("cache: it holds another model's pass"));
    // A bad token: the request's own message; the cache then holds nothing, and the next call is a fresh pass.
    auto bad = r;
    bad.tokens.push_back(-1);
    CHECK_THROWS_WITH(lm.forward(bad, cache), Catch::Contains("tokens[40]: expected a token id from 0"));
    r.tokens.push_back(2);
    require_same(lm, r, lm.forward(r, cache));
    CHECK(cache.bytes() > 0);
}

TEST_CASE("valueNorms through a cache: a fresh pass's norms of every position, kept rows' too", "[incremental][research]")
{
    // GQA (each query head reads its key/value head's values) and learned positions; appended rows, a changed tail.
    const auto c = attnscope_test::read_hf_case("llama-gqa");
    auto llama = load_checkpoint(c.config, c.views());
    Transformer& lm = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
    for (Transformer* m : {llama.get(), &lm}) {
        const std::size_t P = std::min<std::size_t>(m->config().max_positions, 70);
        const std::vector<std::int32_t> ids = random_ids(P, m->config().vocab, 9);
        ForwardCache cache;
        for (std::size_t n : {std::size_t(5), std::size_t(40), P}) {
            if (n > P) continue;
            auto r = request_of({ids.begin(), ids.begin() + n});
            r.value_norms = true;
            INFO(n << " tokens");
            const Transformer::Output& got = m->forward(r, cache);
            const Transformer::Output fresh = m->forward(r);
            REQUIRE(got.value_norms.shape == std::vector<std::size_t>{m->config().layers, m->config().heads, n});
            CHECK(got.value_norms.data == fresh.value_norms.data);
            if (n > 40) CHECK(cache.reused() == 32);  // the 40 before it, in whole blocks of 32
        }
        // Not asked for: none returned.
        auto plain = request_of(ids);
        CHECK(m->forward(plain, cache).value_norms.data.empty());
    }
    // keepResidual and keepQkv still need a whole pass; so do a patched pass's norms. The cache stays usable.
    ForwardCache cache;
    auto r = request_of(random_ids(20, lm.config().vocab, 4));
    lm.forward(r, cache);
    auto residual = r;
    residual.keep_residual = true;
    CHECK_THROWS_WITH(lm.forward(residual, cache), Catch::Contains("forward: cache: keepResidual and keepQkv run without a cache"));
    auto patched = r;
    patched.value_norms = true;
    patched.patch.assign(lm.config().layers * lm.config().heads, 0);
    patched.patch[1] = 1;
    const Transformer::Output kept = lm.forward([&] { auto k = r; k.keep_heads = true; return k; }());
    patched.patch_from = &kept.heads;
    CHECK_THROWS_WITH(lm.forward(patched, cache), Catch::Contains("forward: cache: valueNorms of a patched pass run without a cache"));
    require_same(lm, r, lm.forward(r, cache));
}

TEST_CASE("patched calls through a cache start at the patched layer and give a fresh patched pass's bits", "[incremental][patching]")
{
    for (const char* name : {"gpt2-lm", "llama-gqa"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t L = model->config().layers, H = model->config().heads, V = model->config().vocab;
            auto clean = request_of(random_ids(9, V, 1), false);
            clean.keep_heads = true;
            const Transformer::Output kept = model->forward(clean);
            for (const Ablation ablation : {Ablation::zero, Ablation::mean}) {
                auto corrupted = request_of(random_ids(9, V, 2));
                corrupted.ablate.assign(L * H, 0);
                corrupted.ablate[H - 1] = 1;  // the last head of layer 0 switched off below and above every patch
                corrupted.ablation = ablation;
                ForwardCache cache;
                model->forward(corrupted, cache);
                corrupted.patch_from = &kept.heads;
                for (std::size_t l = 0; l < L; ++l)
                    for (std::size_t h = 0; h < H; ++h) {
                        INFO("layer " << l << " head " << h);
                        corrupted.patch.assign(L * H, 0);
                        corrupted.patch[l * H + h] = 1;
                        if (h % 2) corrupted.patch[(L - 1) * H] = 1;  // and one head higher up
                        require_same(*model, corrupted, model->forward(corrupted, cache));
                        CHECK(cache.resumed_layer() == l);
                    }
                // The kept pass is still the unpatched one.
                corrupted.patch.clear();
                require_same(*model, corrupted, model->forward(corrupted, cache));
                // Another input: a fresh patched pass, and the kept pass is left alone.
                auto other = corrupted;
                other.tokens[0] = std::int32_t((std::size_t(other.tokens[0]) + 1) % V);
                other.patch.assign(L * H, 0);
                other.patch[H] = 1;
                require_same(*model, other, model->forward(other, cache));
                CHECK(cache.resumed_layer() == 0);
                CHECK(cache.positions() == 9);
            }
        }
    }
}

namespace {

void require_same_trace(const AttentionTrace& got, const AttentionTrace& fresh)
{
    CHECK(got.kv_head == fresh.kv_head);
    CHECK(got.scale == fresh.scale);
    CHECK(got.visible == fresh.visible);
    for (auto member : {&AttentionTrace::layer_input, &AttentionTrace::attention_input, &AttentionTrace::query_raw, &AttentionTrace::query_final,
                        &AttentionTrace::keys_raw, &AttentionTrace::keys_final, &AttentionTrace::values, &AttentionTrace::scores,
                        &AttentionTrace::weights, &AttentionTrace::context, &AttentionTrace::head_output, &AttentionTrace::attention_output}) {
        REQUIRE((got.*member).shape == (fresh.*member).shape);
        CHECK((got.*member).data == (fresh.*member).data);
    }
}

}  // namespace

TEST_CASE("trace through a cache of its own input starts at the traced layer and gives a fresh trace's bits", "[incremental][trace]")
{
    for (const char* name : {"gpt2-lm", "llama-gqa", "mistral-window"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t L = model->config().layers, H = model->config().heads;
            const std::size_t T = std::min<std::size_t>(40, model->config().max_positions);
            auto r = request_of(random_ids(T, model->config().vocab, 11));
            r.ablate.assign(L * H, 0);
            r.ablate[H - 1] = 1;  // a head of layer 0 off: the kept layer inputs above it are the ablated pass's
            ForwardCache cache;
            model->forward(r, cache);
            for (std::size_t layer = 0; layer < L; ++layer)
                for (std::size_t query : {std::size_t(0), T / 2, T - 1}) {
                    INFO("layer " << layer << ", query " << query);
                    const std::size_t head = (layer + query) % H;
                    require_same_trace(model->trace(r, AttentionKind::self, layer, head, query, cache),
                                       model->trace(r, AttentionKind::self, layer, head, query));
                }
            // Another input (a changed token, other heads off) than the cache's: a fresh trace, and the cache unchanged.
            auto other = r;
            other.tokens[T / 2] = std::int32_t((std::size_t(other.tokens[T / 2]) + 1) % model->config().vocab);
            require_same_trace(model->trace(other, AttentionKind::self, L - 1, 0, T - 1, cache), model->trace(other, AttentionKind::self, L - 1, 0, T - 1));
            other = r;
            other.ablate.assign(L * H, 0);
            require_same_trace(model->trace(other, AttentionKind::self, L - 1, 1, T - 1, cache), model->trace(other, AttentionKind::self, L - 1, 1, T - 1));
            CHECK(cache.positions() == T);
            require_same(*model, r, model->forward(r, cache));
            CHECK(cache.reused() == T / 32 * 32);
            // Out of range through the cache as without it.
            CHECK_THROWS_WITH(model->trace(r, AttentionKind::self, L, 0, 0, cache), Catch::Contains("layer: expected 0 to"));
        }
    }
}

TEST_CASE("trace through another model's cache is refused", "[incremental][trace]")
{
    const auto a = attnscope_test::read_hf_case("gpt2-lm");
    auto first = load_checkpoint(a.config, a.views()), second = load_checkpoint(a.config, a.views());
    const auto r = request_of(random_ids(5, first->config().vocab, 2), false);
    ForwardCache cache;
    first->forward(r, cache);
    CHECK_THROWS_WITH(second->trace(r, AttentionKind::self, 0, 0, 0, cache), Catch::Contains("cache: it holds another model's pass"));
    require_same_trace(first->trace(r, AttentionKind::self, 0, 0, 0, cache), first->trace(r, AttentionKind::self, 0, 0, 0));
}

namespace {

// Bit-for-bit equality of two lenses (ids and probabilities; NaN-free, so == is exact).
void require_same_lens(const Transformer::Lens& got, const Transformer::Lens& fresh)
{
    REQUIRE(got.probabilities.shape == fresh.probabilities.shape);
    CHECK(got.ids == fresh.ids);
    CHECK(got.probabilities.data == fresh.probabilities.data);
}

// The lens of `r` through `cache` (filled by forward(r, cache) with `logits_to_keep`) against a fresh lens, then of
// an input that differs in one token and of r with other heads off: fresh lenses, the cache left as it was.
void check_lens(Transformer& m, Transformer::Request r, std::size_t logits_to_keep)
{
    const std::size_t T = r.tokens.size(), V = m.config().vocab, k = std::min<std::size_t>(7, V);
    ForwardCache cache;
    r.logits_to_keep = logits_to_keep;
    m.forward(r, cache);
    r.logits_to_keep = 0;
    r.need_attention = false;  // the lens asks for no maps; the kept pass had them
    const Transformer::Lens fresh = m.logit_lens(r, k);
    REQUIRE(fresh.probabilities.shape == Shape{m.config().layers + 1, T, k});
    CHECK_FALSE(fresh.from_cache);
    // Served from the cache (only the head ran) where it holds this input's pass, and from a pass of its own elsewhere.
    const auto through = [&](const Transformer::Request& q, const ForwardCache& c, bool served) {
        Transformer::Lens lens = m.logit_lens(q, k, c);
        CHECK(lens.from_cache == served);
        return lens;
    };
    require_same_lens(through(r, cache, true), fresh);
    // A range of rows, fresh and through the cache: those rows of the whole lens, bit for bit.
    const std::size_t L = m.config().layers, cells = T * k;
    for (const LensRows rows : {LensRows{0, 1}, LensRows{1, L + 1}, LensRows{L, L + 1}, LensRows{L / 2, L / 2 + 1}}) {
        for (const Transformer::Lens& part : {m.logit_lens(r, k, rows), m.logit_lens(r, k, cache, rows)}) {
            REQUIRE(part.probabilities.shape == Shape{*rows.end - rows.first, T, k});
            CHECK(part.first_row == rows.first);
            CHECK(std::equal(part.ids.begin(), part.ids.end(), fresh.ids.begin() + std::ptrdiff_t(rows.first * cells)));
            CHECK(std::equal(part.probabilities.data.begin(), part.probabilities.data.end(),
                             fresh.probabilities.data.begin() + std::ptrdiff_t(rows.first * cells)));
        }
    }
    CHECK_THROWS_WITH(m.logit_lens(r, k, LensRows{1, 1}), Catch::Contains("options.layers: expected [start, end] with 0 ≤ start < end ≤ "));
    CHECK_THROWS_AS(m.logit_lens(r, k, cache, LensRows{0, L + 2}), std::invalid_argument);
    // The end left out is the last row; any end given is checked, SIZE_MAX too (wasm32's largest size).
    require_same_lens(m.logit_lens(r, k, LensRows{0, std::nullopt}), fresh);
    CHECK_THROWS_WITH(m.logit_lens(r, k, LensRows{0, SIZE_MAX}), Catch::Contains("got [0, " + std::to_string(SIZE_MAX) + "]"));
    auto other = r;
    other.tokens[T / 2] = std::int32_t((std::size_t(other.tokens[T / 2]) + 1) % V);
    require_same_lens(through(other, cache, false), m.logit_lens(other, k));
    other = r;
    other.ablate.assign(m.config().layers * m.config().heads, 0);
    require_same_lens(through(other, cache, false), m.logit_lens(other, k));
    CHECK(cache.positions() == T);
    require_same_lens(through(r, cache, true), fresh);
    // Through a cache the input then extended (its prefix kept, the rest computed): still a fresh lens's bits.
    if (T > 33) {
        auto shorter = r;
        shorter.tokens.resize(33);
        ForwardCache grown;
        m.forward(shorter, grown);
        m.forward(r, grown);
        CHECK(grown.reused() == 32);
        require_same_lens(through(r, grown, true), fresh);
    }
    // Two threads: the same bits.
    const std::size_t threads = set_num_threads(2);
    require_same_lens(through(r, cache, true), fresh);
    set_num_threads(1);
    CHECK(threads >= 1);
}

}  // namespace

TEST_CASE("the logit lens through a cache of its own input reads its layers' inputs: a fresh lens's bits", "[incremental][lens]")
{
    SECTION("char-lm") {
        Transformer& m = attnscope_test::shipped_model("char-lm.safetensors").file.language_model->transformer();
        auto r = request_of(random_ids(kLensT, m.config().vocab, 4));
        r.ablate.assign(m.config().layers * m.config().heads, 0);
        r.ablate[1] = 1;  // a head of layer 0 off: every layer input above it is the ablated pass's
        check_lens(m, r, 1);
        check_lens(m, r, 0);
    }
    for (const char* name : {"gpt2-lm", "llama-gqa"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            auto model = load_checkpoint(c.config, c.views());
            const std::size_t T = std::min<std::size_t>(40, model->config().max_positions);
            check_lens(*model, request_of(random_ids(T, model->config().vocab, 12)), 1);
        }
    }
}

TEST_CASE("the logit lens through another model's cache is refused", "[incremental][lens]")
{
    const auto a = attnscope_test::read_hf_case("gpt2-lm");
    auto first = load_checkpoint(a.config, a.views()), second = load_checkpoint(a.config, a.views());
    const auto r = request_of(random_ids(5, first->config().vocab, 2), false);
    ForwardCache cache;
    first->forward(r, cache);
    CHECK_THROWS_WITH(second->logit_lens(r, 3, cache), Catch::Contains("logitLens: cache: it holds another model's pass"));
    require_same_lens(first->logit_lens(r, 3, cache), first->logit_lens(r, 3));
    // The lens's own refusals come first, through a cache as without one.
    CHECK_THROWS_WITH(first->logit_lens(r, 0, cache), Catch::Contains("logitLens: options.k: expected a whole number from 1 to 100 (tokens per position), got 0"));
}

}  // namespace incremental_test
