// The threaded forward pass: parallel_for's contract, and results bit-identical for every thread count (the work
// is cut the same way whatever the count), checked against the double-precision reference too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attend.hpp"
#include "attnscope/attnscope.hpp"
#include "kernels/elementwise.hpp"
#include "model/steps.hpp"
#include "parallel.hpp"
#include "reference/reference.hpp"
#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace threads_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using attnscope_test::random_floats;
using attnscope_test::randomise;
using arch = xsimd::default_arch;

namespace {

// Restores one thread when a test ends, so the other tests run as they always did.
struct ThreadsFor {
    explicit ThreadsFor(std::size_t n) { used = set_num_threads(n); }
    ~ThreadsFor() { set_num_threads(1); }
    std::size_t used;
};

// The thread counts worth comparing here: 2, 3 and 4 where the build can run them (the single-threaded WASM
// build can only run 1, and then every comparison is of one thread with itself).
std::vector<std::size_t> thread_counts() { return {2, 3, 4}; }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    // memcmp may not see the null data() of empty vectors (no weights without need_weights), even for 0 bytes.
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

// Every build catches an exception by its type, the threaded WASM build included: there LLVM 14's landing pads and
// Emscripten's threaded libunwind disagreed on where a catch's context is, and only catch (...) matched
// (docs/toolchain.md, "WebAssembly exceptions under -pthread"). Run here too, so the threaded Catch2 program checks
// it, with the pool's helpers started (idle: only the calling thread throws and catches, as in the library).
TEST_CASE("exceptions are caught by their type with the pool's helpers started", "[threads]")
{
    ThreadsFor threads(2);
    CHECK_THROWS_AS(MultiHeadAttention({0, 1}), std::invalid_argument);
    CHECK_THROWS_AS(MultiHeadAttention({std::numeric_limits<std::size_t>::max() / 2, 1}), std::length_error);
    const char* caught = "none";
    try {
        MultiHeadAttention({10, 3});
    } catch (const std::length_error&) {
        caught = "length_error";
    } catch (const std::invalid_argument&) {
        caught = "invalid_argument";
    } catch (...) {
        caught = "something else";
    }
    CHECK(std::string(caught) == "invalid_argument");
}

TEST_CASE("set_num_threads clamps to what the build can run", "[threads]")
{
    CHECK(num_threads() == 1);
    CHECK(set_num_threads(0) == 1);
    {
        ThreadsFor threads(max_threads() + 5);
        CHECK(threads.used <= max_threads());
        CHECK(num_threads() == threads.used);
    }
    CHECK(num_threads() == 1);
}

TEST_CASE("parallel_for runs every task exactly once, with worker slots below worker_count()", "[threads]")
{
    for (std::size_t n : thread_counts()) {
        ThreadsFor threads(n);
        for (std::size_t tasks : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(1000)}) {
            CAPTURE(n, tasks);
            std::vector<std::atomic<int>> runs(tasks);
            std::vector<std::atomic<int>> busy(detail::worker_count());
            std::atomic<bool> slot_ok{true};
            auto body = [&](std::size_t task, std::size_t worker) {
                if (worker >= busy.size() || busy[worker].fetch_add(1) != 0) slot_ok = false;  // a slot used twice at once
                runs[task].fetch_add(1);
                // A parallel_for inside a task runs serially on the same thread and still runs all its tasks.
                std::atomic<int> inner{0};
                auto inner_body = [&](std::size_t, std::size_t inner_worker) {
                    if (inner_worker != 0) slot_ok = false;
                    inner.fetch_add(1);
                };
                detail::parallel_for(3, inner_body);
                if (inner != 3) slot_ok = false;
                busy[worker].fetch_sub(1);
            };
            detail::parallel_for(tasks, body);
            CHECK(slot_ok);
            for (std::size_t t = 0; t < tasks; ++t) REQUIRE(runs[t] == 1);
        }
    }
}

TEST_CASE("with two threads, two tasks run at the same time", "[threads]")
{
    ThreadsFor threads(2);
    if (threads.used < 2) return;  // the single-threaded build: nothing runs concurrently, by design
    // Task 0 and task 1 each wait for the other to start. The thread that took one cannot take the other while it
    // waits, so both start only if a second thread really runs tasks. The deadline only keeps a broken pool from
    // hanging the suite; it asserts nothing about speed.
    std::atomic<int> started{0};
    std::atomic<bool> met{true};
    auto body = [&](std::size_t, std::size_t) {
        started.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (started.load() < 2)
            if (std::chrono::steady_clock::now() > deadline) {
                met = false;
                return;
            }
    };
    detail::parallel_for(2, body);
    CHECK(met);
    CHECK(started == 2);
}

TEST_CASE("parallel_ranges cuts [0, n) into pieces at multiples of the unit, the same for every thread count", "[threads]")
{
    // (n, unit, work per unit): one piece, several, a ragged last piece, and more work than pieces.
    const struct {
        std::size_t n, unit;
        double work;
    } cases[] = {{0, 1, 1}, {10, 1, 1}, {100003, 64, 64}, {257, 1, 193}, {1000, 7, 5000}};
    for (const auto& c : cases) {
        CAPTURE(c.n, c.unit, c.work);
        auto pieces = [&] {
            std::mutex m;
            std::vector<std::pair<std::size_t, std::size_t>> seen;
            detail::parallel_ranges(c.n, c.unit, c.work, [&](std::size_t begin, std::size_t end) {
                std::lock_guard<std::mutex> lock(m);
                seen.emplace_back(begin, end);
            });
            std::sort(seen.begin(), seen.end());
            return seen;
        };
        const auto one = pieces();
        std::size_t next = 0;
        for (const auto& piece : one) {
            REQUIRE(piece.first == next);
            REQUIRE(piece.first % c.unit == 0);
            REQUIRE(piece.second > piece.first);
            next = piece.second;
        }
        REQUIRE(next == c.n);
        for (std::size_t n : thread_counts()) {
            ThreadsFor threads(n);
            CAPTURE(n);
            REQUIRE(pieces() == one);
        }
    }
}

TEST_CASE("the pass's threaded steps give every thread count the bits of one call over the whole input", "[threads][steps]")
{
    // Sizes that split into several pieces (detail::element_task_grain), rows and a vector length that are not
    // multiples of the SIMD width, so the scalar tail is exercised.
    const std::size_t rows = 257, d = 193, n = 100003, inner = 301;
    const auto x = random_floats(rows * d, 60, -3.f, 3.f), big = random_floats(n, 61, -6.f, 6.f);
    const auto u = random_floats(rows * 2 * inner, 62, -4.f, 4.f);
    model::NormWeights w;
    w.weight.data = random_floats(d, 63, 0.5f, 1.5f);
    w.bias.data = random_floats(d, 64);
    w.weight.size = w.bias.size = d;
    for (plan::NormKind kind : {plan::NormKind::layer_norm, plan::NormKind::rms_norm}) {
        plan::Norm norm;
        norm.kind = kind;
        norm.bias = kind == plan::NormKind::layer_norm;
        std::vector<float> whole(rows * d), expected(rows * d);
        for (std::size_t r = 0; r < rows; ++r) model::steps::norm_rows(norm, w, x.data() + r * d, 1, d, expected.data() + r * d);
        model::steps::norm_rows(norm, w, x.data(), rows, d, whole.data());
        REQUIRE(same_bits(whole, expected));  // rows are independent: one call over all of them is each row's own
        for (std::size_t t : thread_counts()) {
            ThreadsFor threads(t);
            CAPTURE(int(kind), t);
            std::vector<float> many(rows * d);
            model::steps::norm_rows(norm, w, x.data(), rows, d, many.data());
            REQUIRE(same_bits(many, whole));
        }
    }
    for (plan::Activation a : {plan::Activation::gelu_erf, plan::Activation::gelu_tanh, plan::Activation::relu, plan::Activation::silu}) {
        CAPTURE(int(a));
        std::vector<float> whole = big, gated = u, one_call = big;
        model::steps::activate(a, whole.data(), n);
        model::steps::gate_rows(a, gated.data(), rows, inner);
        if (a == plan::Activation::gelu_erf) kernels::gelu_inplace{}(arch{}, one_call.data(), n);
        if (a == plan::Activation::gelu_tanh) kernels::gelu_tanh_inplace{}(arch{}, one_call.data(), n);
#if !defined(__FMA__) && !defined(__ARM_FEATURE_FMA)
        if (a == plan::Activation::gelu_erf || a == plan::Activation::gelu_tanh) REQUIRE(same_bits(whole, one_call));
#else
        // With FMA (-mfma, or any aarch64), GCC contracts a * b + c into one fused step wherever it inlines, and this file's copy of the
        // kernel is inlined at another -O level than steps.cpp's, so the last bit can differ between the two copies
        // (1,589 of 100,003 elements of gelu_erf did). The builds without FMA check the bits; here the values.
        if (a == plan::Activation::gelu_erf || a == plan::Activation::gelu_tanh) {
            std::size_t far = 0;
            for (std::size_t i = 0; i < n; ++i) far += !(std::abs(whole[i] - one_call[i]) <= 1e-6f * (1.f + std::abs(one_call[i])));  // a NaN is far
            REQUIRE(far == 0);
        }
#endif
        for (std::size_t t : thread_counts()) {
            ThreadsFor threads(t);
            CAPTURE(t);
            std::vector<float> many = big, many_gated = u;
            model::steps::activate(a, many.data(), n);
            model::steps::gate_rows(a, many_gated.data(), rows, inner);
            REQUIRE(same_bits(many, whole));
            REQUIRE(same_bits(many_gated, gated));
        }
    }
}

TEST_CASE("keys and values packed in pieces fill the panels as one packing does", "[threads][attention]")
{
    const std::size_t Lk = 150, D = 37, Dv = 41, ld = 50;
    const auto k = random_floats(Lk * ld, 70), v = random_floats(Lk * ld, 71);
    const std::size_t key_floats = detail::packed_floats(D, Lk), value_floats = detail::packed_floats(Lk, Dv);
    std::vector<float> whole(key_floats + value_floats, -1.f), pieces(key_floats + value_floats, -2.f);
    detail::pack_keys_and_values(Lk, D, Dv, {k.data(), ld}, {v.data(), ld}, {whole.data(), whole.data() + key_floats, Lk});
    const detail::AttendScratch into{pieces.data(), pieces.data() + key_floats, Lk};
    for (std::size_t j0 : {std::size_t(128), std::size_t(0), std::size_t(64)})  // any order: each piece writes only its own
        detail::pack_keys_and_values(j0, std::min(Lk, j0 + 64), Lk, D, Dv, {k.data(), ld}, {v.data(), ld}, into);
    REQUIRE(same_bits(pieces, whole));
}

TEST_CASE("threaded products are bit-identical to one thread", "[threads][gemm]")
{
    // Sizes across the row-block split and the panel width, large enough to be split at all.
    for (std::size_t M : {std::size_t(1), std::size_t(5), std::size_t(67), std::size_t(301)})
        for (std::size_t N : {std::size_t(8), std::size_t(33), std::size_t(256)}) {
            const std::size_t K = 129;
            CAPTURE(M, N, K);
            const auto A = random_floats(M * K, 1), Bt = random_floats(N * K, 2), bias = random_floats(N, 3);
            std::vector<float> packed(detail::packed_floats(K, N));
            detail::pack_transposed(K, N, Bt.data(), K, packed.data());
            std::vector<float> one(M * N);
            detail::matmul_packed(M, N, K, A.data(), K, packed.data(), one.data(), N, bias.data());
            std::vector<float> B(K * N);
            for (std::size_t k = 0; k < K; ++k)
                for (std::size_t j = 0; j < N; ++j) B[k * N + j] = Bt[j * K + k];
            REQUIRE(max_relative_error(one, reference::gemm(M, N, K, A.data(), K, B.data(), N, bias.data())) < 1e-5);
            for (std::size_t n : thread_counts()) {
                ThreadsFor threads(n);
                std::vector<float> many(M * N, std::numeric_limits<float>::quiet_NaN());
                detail::matmul_packed(M, N, K, A.data(), K, packed.data(), many.data(), N, bias.data());
                CAPTURE(n);
                REQUIRE(same_bits(one, many));
            }
        }
}

TEST_CASE("threaded multi-head attention is bit-identical to one thread and matches the reference", "[threads][mha]")
{
    struct Case {
        std::size_t E, H, B, Lq, Lk;
    };
    // Query lengths on both sides of the 64-row task blocks and the 32-row streaming tiles, key lengths across the
    // 256-key streaming tile; sizes large enough that the work is split.
    const Case cases[] = {{64, 4, 1, 130, 130}, {48, 3, 2, 97, 300}, {32, 2, 3, 64, 65}, {16, 4, 1, 1, 513}};
    std::uint32_t seed = 7000;
    for (const Case& c : cases)
        for (int variant = 0; variant < 5; ++variant) {
            CAPTURE(c.E, c.H, c.B, c.Lq, c.Lk, variant);
            MultiHeadAttention mha({c.E, c.H, 0, 0, true, 0});
            randomise(mha, seed++);
            const auto query = random_floats(c.B * c.Lq * c.E, seed++, -2.f, 2.f);
            const auto key = random_floats(c.B * c.Lk * c.E, seed++, -2.f, 2.f);
            const auto value = random_floats(c.B * c.Lk * c.E, seed++);
            std::vector<std::uint8_t> kpm(c.B * c.Lk, 0);
            for (std::size_t j = 0; j < kpm.size(); j += 5) kpm[j] = 1;
            ForwardOptions options;
            switch (variant) {
            case 0: break;
            case 1: options.average_weights = true; break;
            case 2: options.need_weights = false; break;
            case 3: options.causal = true; options.key_padding_mask = MaskView::boolean(kpm.data(), {c.B, c.Lk}); break;
            default: options.causal = true; options.need_weights = false; break;
            }
            const ForwardDims dims{c.B, c.Lq, c.Lk};
            auto run = [&] {
                std::pair<std::vector<float>, std::vector<float>> r{std::vector<float>(c.B * c.Lq * c.E),
                                                                    std::vector<float>(mha.weights_numel(dims, options))};
                mha.forward(query.data(), key.data(), value.data(), dims, options, r.first.data(), r.second.data());
                return r;
            };
            const auto one = run();
            const auto expected = reference::multihead_attention(mha.state_dict(), c.E, c.H, c.E, c.E, c.B, c.Lq, c.Lk,
                                                                 query.data(), key.data(), value.data(), options);
            REQUIRE(max_relative_error(one.first, expected.output) < 1e-5);
            if (options.need_weights) REQUIRE(max_relative_error(one.second, expected.weights) < 1e-5);
            for (std::size_t n : thread_counts()) {
                ThreadsFor threads(n);
                CAPTURE(n, threads.used);
                const auto many = run();
                REQUIRE(same_bits(one.first, many.first));
                REQUIRE(same_bits(one.second, many.second));
            }
        }
}

TEST_CASE("threaded pretrained forward and generate are bit-identical to one thread", "[threads][pretrained]")
{
    // Long enough for several 32-row query blocks per head (the attention's tasks) and split projections.
    for (const std::string& name : {std::string("llama-gqa"), std::string("mistral-window"), std::string("gpt2-lm")}) {
        CAPTURE(name);
        const auto c = attnscope_test::read_hf_case(name);
        auto model = load_checkpoint(c.config, c.views());
        Transformer::Request r;
        const std::size_t T = std::min<std::size_t>(model->config().max_positions, 100);
        for (std::size_t t = 0; t < T; ++t) r.tokens.push_back(std::int32_t((t * 11 + 5) % model->config().vocab));
        const auto one = model->forward(r);
        const std::vector<std::int32_t> prompt(r.tokens.begin(), r.tokens.begin() + long(T / 2));
        const auto generated = model->generate(prompt, 4);
        for (std::size_t n : thread_counts()) {
            ThreadsFor threads(n);
            CAPTURE(n, threads.used);
            const auto many = model->forward(r);
            REQUIRE(same_bits(one.logits.data, many.logits.data));
            REQUIRE(same_bits(one.hidden.data, many.hidden.data));
            REQUIRE(same_bits(one.attention.data, many.attention.data));
            REQUIRE(model->generate(prompt, 4) == generated);
        }
    }
}

}  // namespace threads_test
