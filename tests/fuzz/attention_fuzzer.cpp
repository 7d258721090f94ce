// libFuzzer harness over the C++ API: decodes sizes, options and values from the input, runs
// MultiHeadAttention (raw pointers and tensor views), scaled_dot_product_attention and state-dict loading,
// checks valid calls against the double-precision reference and invalid ones for exactly
// std::invalid_argument or std::length_error. Built by CMake (ATTNSCOPE_BUILD_FUZZER, tests/fuzz/CMakeLists.txt),
// run by scripts/fuzz.mjs.
//
// Files: this one (the layout and the dispatch), decode.hpp (bytes → case), checks.hpp/.cpp (findings and
// comparisons), mha_entry.cpp (with mha_case.hpp and mha_invalid.cpp, its invalid calls), sdpa_entry.cpp and
// state_dict_entry.cpp (one per entry point); the double-precision references are tests/reference/, shared with the
// Catch2 tests.
//
// Input layout (read front to back; past the end, a stream seeded from the whole input takes over, so any
// input decodes to a complete case and short inputs still give full tensors):
//   byte 0  entry point: % 6 → 0 MHA raw pointers, 1 MHA tensor views (query, key, value),
//           2 MHA tensor view self-attention (query only), 3 scaled_dot_product_attention, 4 state dicts,
//           5 MHA key/value cache (project_key_value + forward_projected, bitwise against forward)
//   byte 1  mode: % 16 → 0..10 valid (compared with the reference), 11..13 invalid (must throw),
//           14..15 non-finite values (NaN, ±inf, FLT_MAX: must only not crash)
//   byte 2  invalid mode only: which argument is made invalid
//   then sizes, options, masks and values, in the order the fuzz_* functions read them.
// Sizes stay small (embed ≤ 32, heads ≤ 8, seq ≤ 17, batch ≤ 3), except that about one case in 16 takes
// query lengths 20..119 and key lengths 200..455: the streaming attention (need_weights = false) works in
// tiles of 32 queries × 256 keys, and the GEMM in blocks of 32768 / K rows (72 rows for K = 455 keys), and only
// such lengths cross those boundaries.
// tests/fuzz/make_corpus.mjs writes seeds that set bytes 0..2 and leave the rest random.
//
// A finding prints "FINDING [id]: ..." with the decoded case and aborts, so libFuzzer saves the input.
// ATTNSCOPE_FUZZ_IGNORE=id1,id2 skips checks already reported (crashes and sanitizer reports stay fatal).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <typeinfo>

#include "checks.hpp"
#include "decode.hpp"
#include "entry_points.hpp"

using namespace attnscope::fuzz;

// ASan reports end the process without passing through die(): print the decoded case after them too.
// (UBSan has no such hook; replaying with ATTNSCOPE_FUZZ_VERBOSE=1, as `fuzz.mjs --run` does, prints it.)
// Weak, so the harness also links without ASan (e.g. for a coverage build).
extern "C" __attribute__((weak)) void __asan_set_error_report_callback(void (*callback)(const char*));

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    if (__asan_set_error_report_callback)
        __asan_set_error_report_callback([](const char*) { std::fprintf(stderr, "\n  case: %s\n", g_case.c_str()); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    Input in(data, size);
    g_case.clear();
    const std::size_t entry = in.below(6);
    const std::size_t mode_byte = in.below(16);
    const Mode mode = mode_byte <= 10 ? Mode::valid : mode_byte <= 13 ? Mode::invalid : Mode::nonfinite;
    const char* const entries[] = {"mha_raw", "mha_views", "mha_self_view", "sdpa", "state_dict", "mha_cache"};
    note("entry", entries[entry]);
    note("mode", mode == Mode::valid ? "valid" : mode == Mode::invalid ? "invalid" : "nonfinite");
    try {
        if (entry <= 2 || entry == 5) fuzz_mha(in, MhaEntry(entry), mode);
        else if (entry == 3) fuzz_sdpa(in, mode);
        else fuzz_state_dict(in, mode);
    } catch (const std::exception& e) {
        // Everything the library is expected to throw is caught where it is called; this is anything else.
        die("unexpected-throw", std::string("escaped the checks: ") + typeid(e).name() + ": " + e.what());
    }
    return 0;
}
