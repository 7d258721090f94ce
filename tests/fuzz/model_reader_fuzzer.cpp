// libFuzzer harness over the model-file reader (attnscope/model_file.hpp, attnscope/safetensors.hpp), seeded with
// the shipped models (models/*.safetensors) and small hand-made headers (tests/fuzz/model_reader_corpus/).
// Built and run by `node scripts/fuzz.mjs --target model_reader`.
//
// Every input is a file. Checks:
//   - reading it either succeeds or throws attnscope::FileError; any other exception is a finding;
//   - the bytes live while it is read stay under a small multiple of the file's size (kAllocationFactor × size +
//     kAllocationSlack), counted by the sanitizer allocator's hooks: a file cannot make the reader allocate more
//     than it holds;
//   - a file refused before its model is built costs at most kRefusedFactor × its size (+ the slack): its
//     metadata decoded once and the JSON parser's keys of open objects, never a tree of the JSON (issue #24's
//     metadata bomb once cost ~10×);
//   - a model that loads runs one forward pass on a one-token input of id 0 (a valid id for any vocabulary).
// A finding prints "FINDING [id]: ..." and aborts, so libFuzzer saves the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <algorithm>
#include <new>
#include <vector>

#include "allocation_hooks.hpp"

#include "attnscope/model_file.hpp"

namespace {

constexpr std::size_t kAllocationFactor = 24;  // model ≈ 4× its tensors, plus its metadata once (json.hpp keeps no tree)
constexpr std::size_t kAllocationSlack = 1 << 20;
constexpr std::size_t kRefusedFactor = 3;  // the decoded metadata (≤ 1×) + 8 bytes per open key (≤ 1.6×)

using attnscope::fuzz::g_counting;
using attnscope::fuzz::g_live;
using attnscope::fuzz::g_peak;
// The largest peak/size ratio seen over inputs of at least 4 KiB (smaller ones are dominated by the fixed slack),
// printed at exit so a run shows how close the reader comes to the bound.
double g_worst_ratio = 0;
std::size_t g_worst_size = 0;

[[noreturn]] void finding(const char* id, const char* message, std::size_t a = 0, std::size_t b = 0)
{
    std::fprintf(stderr, "FINDING [%s]: %s (%zu, %zu)\n", id, message, a, b);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    attnscope::fuzz::count_live_bytes();
    std::atexit([] {
        std::fprintf(stderr, "model_reader: largest allocation while reading, per byte of file: %.2f (a %zu-byte input)\n",
                     g_worst_ratio, g_worst_size);
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // An exact-size heap copy: ASan then catches any read past the file's end.
    const std::vector<std::uint8_t> file(data, data + size);
    attnscope::ModelFile model;
    g_live = g_peak = 0;
    g_counting = true;
    bool refused_before_build = false;
    try {
        model = attnscope::read_model_file(file.data(), file.size());
    } catch (const attnscope::FileError& e) {
        refused_before_build = std::string_view(e.what()).rfind("__metadata__.config does not match the tensors", 0) != 0;
    } catch (const std::exception& e) {
        g_counting = false;
        std::fprintf(stderr, "%s\n", e.what());
        finding("exception", "read_model_file threw something other than FileError");
    }
    g_counting = false;
    if (size >= 4096 && double(g_peak) / double(size) > g_worst_ratio) {
        g_worst_ratio = double(g_peak) / double(size);
        g_worst_size = size;
    }
    if (refused_before_build && g_peak > kRefusedFactor * size + kAllocationSlack)
        finding("allocation", "refusing a file allocated more than kRefusedFactor × its size (peak bytes, file bytes)", g_peak, size);
    if (g_peak > kAllocationFactor * size + kAllocationSlack)
        finding("allocation", "reading allocated more than kAllocationFactor × the file's size (peak bytes, file bytes)", g_peak, size);

    try {
        if (model.language_model) model.language_model->forward({0}, true);
        if (model.seq2seq) model.seq2seq->forward({0}, {0}, true);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        finding("forward", "a loaded model failed a one-token forward pass");
    }
    return 0;
}
