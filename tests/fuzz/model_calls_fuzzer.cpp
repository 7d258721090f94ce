// libFuzzer harness over the models' calls on fuzzed model files: LanguageModel.forward and .generate,
// Seq2SeqModel.forward and .translate, with fuzzed options (tests/fuzz/model_calls_corpus/, written by
// tests/fuzz/make_model_corpus.mjs). Built and run by `node scripts/fuzz.mjs --target model_calls`; replayed by
// `npm test` natively and in the 32-bit build, where size_t is 32 bits as in WASM and a product of config sizes
// wraps for files of a few hundred KB.
//
// Input: 4 option bytes, then the file.
//   [0] bit 0: the model's second call (generate / translate) instead of forward
//   [1] tokens (prompt, source or target): 1 + b % 8, or 255 for the model's maximum (max_len / max_src_len)
//   [2] steps (max_new_tokens / max_steps): b % 33, or 255 for the API's default (max_len / max_tgt_len − 1)
//   [3] bit 0 need_attention; bit 1 ablate every other head; bits 2..7 seed the token ids
// Checks:
//   - a call whose worst-case result cannot be addressed (a product of sizes × 4 bytes above SIZE_MAX) throws
//     std::length_error before it runs; generate and translate may instead refuse a worst case past their budget
//     (std::invalid_argument naming the option to lower); any other call succeeds, and throws nothing;
//   - a call runs only when its worst case fits a budget (kBudgetBytes), or else with small options: the 64-bit
//     build would compute it for minutes. A translation that stops at <eos> within 32 steps also runs with the
//     default max_steps, and must give the same tokens within the same small memory (decoding buffers grow with
//     the steps taken, not with max_steps);
//   - the bytes a call allocates stay under 4 × its result plus 8 × the file's size, plus 1 MiB;
//   - results have the shapes the API documents.
// A finding prints "FINDING [id]: ..." and aborts, so libFuzzer saves the input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "allocation_hooks.hpp"

#include "attnscope/model_file.hpp"
#include "json.hpp"

namespace {

using attnscope::Shape;
constexpr double kBudgetBytes = 64.0 * 1024 * 1024;
constexpr std::size_t kSlack = 1 << 20;

using attnscope::fuzz::g_counting;
using attnscope::fuzz::g_live;
using attnscope::fuzz::g_peak;

[[noreturn]] void finding(const char* id, const char* message, double a = 0, double b = 0)
{
    std::fprintf(stderr, "FINDING [%s]: %s (%.0f, %.0f)\n", id, message, a, b);
    std::abort();
}

// Lists of factors, each the floats of one buffer of a call.
using Products = std::vector<std::vector<std::size_t>>;

// The bytes of the largest of `products`, in double: no wrap, whatever the sizes.
double largest_bytes(const Products& products)
{
    double largest = 0;
    for (const auto& factors : products) {
        double p = sizeof(float);
        for (std::size_t f : factors) p *= double(f);
        largest = std::max(largest, p);
    }
    return largest;
}
double sum_bytes(const Products& products)
{
    double sum = 0;
    for (const auto& factors : products) sum += largest_bytes({factors});
    return sum;
}
const double kAddressable = double(std::numeric_limits<std::size_t>::max());

std::size_t floats(const attnscope::Tensor& t) { return t.data.size(); }
void expect_shape(const attnscope::Tensor& t, const Shape& shape, const char* what)
{
    if (t.shape != shape || t.data.size() != attnscope::checked_numel(shape, what)) finding("shape", what);
}

struct Options {
    bool second_call, need_attention, ablate;
    std::size_t tokens, steps;
    bool max_tokens, default_steps;
    unsigned seed;
};

std::vector<std::int32_t> ids(std::size_t n, std::size_t vocab, unsigned seed)
{
    std::vector<std::int32_t> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = std::int32_t((seed * 7 + i * 13) % vocab);
    return out;
}

attnscope::HeadMask mask_of(bool ablate, std::size_t layers, std::size_t heads)
{
    attnscope::HeadMask mask;
    if (ablate)
        for (std::size_t i = 0; i < layers * heads; ++i) mask.push_back(std::uint8_t(i % 2));
    return mask;
}

// Runs `call` counting its allocations; false when it threw std::length_error. `unaddressable`: it must have.
template <class Call>
bool counted(Call call, bool unaddressable, const char* what)
{
    g_live = g_peak = 0;
    g_counting = true;
    try {
        call();
    } catch (const std::length_error& e) {
        g_counting = false;
        if (!unaddressable && std::strstr(e.what(), "; pass a smaller ") == nullptr) {
            std::fprintf(stderr, "%s\n", e.what());
            finding("length_error", what);
        }
        return false;
    } catch (const std::invalid_argument& e) {
        // generate's and translate's budget (model/decode.cpp): a worst case of caches and maps past it is refused
        // before the first step, naming the option to lower. A refusal like length_error, for any size of result.
        g_counting = false;
        if (std::strstr(e.what(), "; pass a smaller ") != nullptr) return false;
        std::fprintf(stderr, "%s\n", e.what());
        finding("exception", what);
    } catch (const std::exception& e) {
        g_counting = false;
        std::fprintf(stderr, "%s\n", e.what());
        finding("exception", what);
    }
    g_counting = false;
    if (unaddressable) finding("unaddressable", what);
    return true;
}

void check_memory(std::size_t result_floats, std::size_t file_size, const char* what)
{
    const double bound = 4.0 * double(result_floats) * sizeof(float) + 8.0 * double(file_size) + kSlack;
    if (double(g_peak) > bound) finding("memory", what, double(g_peak), bound);
}

void language_model(attnscope::LanguageModel& m, const attnscope::LanguageModelConfig& c, const Options& o,
                    std::size_t file_size)
{
    const std::size_t L = c.num_layers, H = c.num_heads;
    const attnscope::HeadMask ablate = mask_of(o.ablate, L, H);
    if (!o.second_call) {
        std::size_t T = o.max_tokens ? c.max_len : std::min(o.tokens, c.max_len);
        const auto worst = [&](std::size_t t) {
            return Products{{t, c.d_ff}, {t, c.vocab_size}, {t, c.d_model},
                                                                             {L, H, o.need_attention ? t : 0, t}};
        };
        double largest = largest_bytes(worst(T));
        if (largest <= kAddressable && sum_bytes(worst(T)) > kBudgetBytes) T = std::min<std::size_t>(T, 8), largest = 0;
        attnscope::LanguageModel::Output out;
        if (!counted([&] { out = m.forward(ids(T, c.vocab_size, o.seed), o.need_attention, ablate); }, largest > kAddressable,
                     "LanguageModel.forward"))
            return;
        expect_shape(out.logits, {T, c.vocab_size}, "LanguageModel.forward: logits");
        if (o.need_attention) expect_shape(out.attention, {L, H, T, T}, "LanguageModel.forward: attention");
        check_memory(floats(out.logits) + floats(out.attention), file_size, "LanguageModel.forward");
        return;
    }
    std::size_t P = o.max_tokens ? c.max_len : std::min(o.tokens, c.max_len);
    std::size_t steps = o.default_steps ? c.max_len : o.steps;
    const double positions = std::min(double(c.max_len), double(P) + double(std::min(steps, c.max_len)));
    const double largest = sizeof(float) * double(L) * positions * double(c.d_model);
    if (largest <= kAddressable && largest + 4.0 * double(c.d_ff + c.vocab_size) > kBudgetBytes)
        P = std::min<std::size_t>(P, 8), steps = std::min<std::size_t>(steps, 32);
    std::vector<std::int32_t> generated;
    if (!counted([&] { generated = m.generate(ids(P, c.vocab_size, o.seed), steps, -1, ablate); }, largest > kAddressable,
                 "LanguageModel.generate"))
        return;
    if (generated.size() > steps) finding("shape", "LanguageModel.generate: more tokens than max_new_tokens");
    check_memory(generated.size(), file_size, "LanguageModel.generate");
}

void seq2seq(attnscope::Seq2SeqModel& m, const attnscope::Seq2SeqModelConfig& c, std::int32_t bos, std::int32_t eos,
             const Options& o, std::size_t file_size)
{
    const std::size_t Le = c.num_encoder_layers, Ld = c.num_decoder_layers, H = c.num_heads;
    const attnscope::Seq2SeqAblation ablate = {mask_of(o.ablate, Le, H), mask_of(o.ablate, Ld, H), mask_of(o.ablate, Ld, H)};
    std::size_t S = o.max_tokens ? c.max_src_len : std::min(o.tokens, c.max_src_len);
    if (!o.second_call) {
        std::size_t T = std::min(o.tokens, c.max_tgt_len);
        const std::size_t att = o.need_attention ? 1 : 0;
        const auto worst = [&](std::size_t s) {
            return Products{
                {s, c.d_ff}, {T, c.d_ff}, {T, c.tgt_vocab_size}, {att, Le, H, s, s}, {att, Ld, H, T, s}, {att, Ld, H, T, T}};
        };
        double largest = largest_bytes(worst(S));
        if (largest <= kAddressable && sum_bytes(worst(S)) > kBudgetBytes) S = std::min<std::size_t>(S, 8), largest = 0;
        attnscope::Seq2SeqModel::Output out;
        if (!counted([&] { out = m.forward(ids(S, c.src_vocab_size, o.seed), ids(T, c.tgt_vocab_size, o.seed + 1), o.need_attention, ablate); },
                     largest > kAddressable, "Seq2SeqModel.forward"))
            return;
        expect_shape(out.logits, {T, c.tgt_vocab_size}, "Seq2SeqModel.forward: logits");
        if (o.need_attention) expect_shape(out.cross_attention, {Ld, H, T, S}, "Seq2SeqModel.forward: cross attention");
        check_memory(floats(out.logits) + floats(out.encoder_attention) + floats(out.decoder_attention) + floats(out.cross_attention),
                     file_size, "Seq2SeqModel.forward");
        return;
    }
    const std::size_t requested = o.default_steps ? c.max_tgt_len - 1 : o.steps;
    const auto worst = [&](std::size_t s, std::size_t max_steps) {
        const std::size_t n = std::min(max_steps, c.max_tgt_len);
        return Products{
            {Ld, H, n, n}, {Ld, H, n, s}, {Ld, n, c.d_model}, {Le, H, s, s}, {s, c.d_ff}};
    };
    const double largest = largest_bytes(worst(S, requested));
    std::size_t steps = requested;
    if (largest <= kAddressable && sum_bytes(worst(S, requested)) > kBudgetBytes) {
        S = std::min<std::size_t>(S, 8);
        steps = std::min<std::size_t>(requested, 32);
    }
    const std::vector<std::int32_t> source = ids(S, c.src_vocab_size, o.seed);
    attnscope::Seq2SeqModel::Translation out;
    if (!counted([&] { out = m.translate(source, bos, eos, steps, ablate); }, largest > kAddressable, "Seq2SeqModel.translate"))
        return;
    const std::size_t N = out.tokens.size();
    if (N > std::min(steps, c.max_tgt_len)) finding("shape", "Seq2SeqModel.translate: more tokens than max_steps");
    expect_shape(out.decoder_attention, {Ld, H, N, N}, "Seq2SeqModel.translate: decoder attention");
    expect_shape(out.cross_attention, {Ld, H, N, S}, "Seq2SeqModel.translate: cross attention");
    const std::size_t result = floats(out.encoder_attention) + floats(out.decoder_attention) + floats(out.cross_attention) + N;
    check_memory(result, file_size, "Seq2SeqModel.translate");
    // Stopped at <eos> before the cap: the default max_steps must decode the same tokens in the same small memory.
    if (steps < requested && N < steps && !out.tokens.empty() && out.tokens.back() == eos) {
        attnscope::Seq2SeqModel::Translation full;
        counted([&] { full = m.translate(source, bos, eos, requested, ablate); }, false, "Seq2SeqModel.translate (default max_steps)");
        if (full.tokens != out.tokens) finding("tokens", "Seq2SeqModel.translate: max_steps changed an early-stopping result");
        check_memory(result, file_size, "Seq2SeqModel.translate (default max_steps)");
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    attnscope::fuzz::count_live_bytes();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 4) return 0;
    const Options o = {(data[0] & 1) != 0, (data[3] & 1) != 0, (data[3] & 2) != 0,
                       std::size_t(1 + data[1] % 8), std::size_t(data[2] % 33), data[1] == 255, data[2] == 255,
                       unsigned(data[3] >> 2)};
    const std::vector<std::uint8_t> file(data + 4, data + size);
    attnscope::ModelFile model;
    try {
        model = attnscope::read_model_file(file.data(), file.size());
    } catch (const attnscope::FileError&) {
        return 0;
    }
    if (model.language_model) language_model(*model.language_model, model.language_model->config(), o, file.size());
    if (model.seq2seq) {
        // The ids the reader checked against the vocabulary (the core's own JSON reader: the metadata is valid).
        attnscope::json::Document vocab;
        std::string error;
        std::uint64_t bos = 0, eos = 0;
        attnscope::json::Value v = vocab.root();
        if (!vocab.parse(model.vocab, error) || !vocab.root().find("tgt_bos_id", v) || !v.to_index(UINT32_MAX, bos) ||
            !vocab.root().find("tgt_eos_id", v) || !v.to_index(UINT32_MAX, eos))
            finding("vocab", "a seq2seq file loaded without readable tgt_bos_id and tgt_eos_id");
        seq2seq(*model.seq2seq, model.seq2seq->config(), std::int32_t(bos), std::int32_t(eos), o, file.size());
    }
    return 0;
}
