// libFuzzer harness over what the core reads of a Hugging Face checkpoint before any weight: config.json, the shard
// index and the tokenizer files' sizes, together (issue 32: a 600-byte config took 4 GiB, a 5 MB index minutes).
// Seeded by tests/fuzz/make_checkpoint_files_corpus.mjs (tests/fuzz/checkpoint_files_corpus/).
//
// An input is `config.json` NUL `index.json` (empty: no index) NUL `tokenizer.json` (the rest). The steps are the
// reader's: each file's size against its limit, the loader from config.json (the plan first), the index, the plan.
// The contents of tokenizer.json are JavaScript's to check (web/src/tokenizer-json.js; the property test
// tests/js/checkpoint-property.test.js times them); the core decides its size. Checks:
//   - each step succeeds or throws FileError (or std::length_error for a model too large); anything else is a finding;
//   - the bytes live at once stay under kRefusedBytes plus a small multiple of the input: nothing in proportion to
//     what a config *says* is built before the plan has passed its limits;
//   - an accepted plan names the files the index does, each a plain file name.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "allocation_hooks.hpp"
#include "nul_parts.hpp"

#include "attnscope/model.hpp"

namespace {

using attnscope::fuzz::take_part;

constexpr std::size_t kRefusedBytes = std::size_t(64) << 20;  // issue 32: memory grows at most 64 MiB before a refusal
constexpr std::size_t kPerInputByte = 16;  // the index's map: a node and two strings per entry of ≥ 8 bytes of text

using attnscope::fuzz::g_counting;
using attnscope::fuzz::g_live;
using attnscope::fuzz::g_peak;

[[noreturn]] void finding(const char* id, const char* message, std::size_t a = 0, std::size_t b = 0)
{
    g_counting = false;
    std::fprintf(stderr, "FINDING [%s]: %s (%zu, %zu)\n", id, message, a, b);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    attnscope::fuzz::count_live_bytes();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::size_t input = size;
    const std::string config = take_part(data, size), index = take_part(data, size);
    const std::size_t tokenizer_bytes = size;
    g_live = g_peak = 0;
    g_counting = true;
    try {
        attnscope::check_checkpoint_file_size("loadModel", "config.json", config.size(), true);
        attnscope::check_checkpoint_file_size("loadModel", "model.safetensors.index.json", index.size(), true);
        attnscope::check_checkpoint_file_size("loadModel", "tokenizer.json", tokenizer_bytes, true);
        attnscope::CheckpointLoader loader(config);
        loader.memory_plan(0);
        if (!index.empty()) loader.set_index(index);
        for (const std::string& name : loader.files())
            if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos)
                finding("shard", "the index named a shard that is not a plain file name");
        loader.memory_plan(0);
    } catch (const attnscope::FileError&) {
    } catch (const std::length_error&) {
    } catch (const std::invalid_argument&) {  // memory_plan's tokens: never past the positions here
        finding("exception", "memory_plan(0) refused its default tokens");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        finding("exception", "the loader threw something other than FileError or length_error");
    }
    g_counting = false;
    if (g_peak > kRefusedBytes + kPerInputByte * input)
        finding("allocation", "reading config.json and the index allocated more than 64 MiB + 16 × the input (peak bytes, input bytes)", g_peak, input);
    return 0;
}
