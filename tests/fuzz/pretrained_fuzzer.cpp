// libFuzzer harness over the Hugging Face checkpoint loader (attnscope/model.hpp): config.json, the shard index
// and a safetensors file, seeded with the fixtures (tests/fuzz/pretrained_corpus/, made by make_pretrained_corpus.mjs).
//
// An input is `config.json` NUL `index.json` (empty: no index) NUL `file bytes`; every file the loader asks for gets
// the same bytes. Checks:
//   - each step either succeeds or throws FileError (or std::length_error for a model too large); anything else is a
//     finding;
//   - a model whose parameters fit in 16 MiB is allocated, streamed in 7-byte chunks, finished, and runs a one-token
//     forward pass (and generate, when causal) without throwing.
// A finding prints "FINDING [id]: ..." and aborts, so libFuzzer saves the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "nul_parts.hpp"

#include "attnscope/model.hpp"

namespace {

using attnscope::fuzz::take_part;

constexpr std::uint64_t kMaxParameterBytes = 16u << 20;  // larger models are refused before allocate()

[[noreturn]] void finding(const char* id, const std::exception& e)
{
    std::fprintf(stderr, "FINDING [%s]: %s\n", id, e.what());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string config = take_part(data, size), index = take_part(data, size);
    // An exact-size heap copy: ASan then catches any read past the file's end.
    const std::vector<std::uint8_t> file(data, data + size);
    std::unique_ptr<attnscope::Transformer> model;
    try {
        attnscope::CheckpointLoader loader(config);
        if (!index.empty()) loader.set_index(index);
        std::vector<std::size_t> begins;
        for (const std::string& name : loader.files()) {
            const std::size_t need = attnscope::CheckpointLoader::needed_header_bytes("model.safetensors", file.data(), file.size());
            begins.push_back(loader.add_header(name, file.data(), need, file.size()));
        }
        if (loader.parameter_bytes() > kMaxParameterBytes) return 0;
        loader.allocate();
        std::size_t i = 0;
        for (const std::string& name : loader.files())
            for (std::size_t at = begins[i++]; at < file.size(); at += 7)
                loader.write(name, at, file.data() + at, std::min<std::size_t>(7, file.size() - at));
        model = loader.finish();
    } catch (const attnscope::FileError&) {
        return 0;
    } catch (const std::length_error&) {
        return 0;
    } catch (const std::exception& e) {
        finding("load", e);
    }
    try {
        attnscope::Transformer::Request r;
        r.tokens = {0};
        model->forward(r);
        if (model->config().causal && model->config().has_lm_head) model->generate({0}, 2, -1);
        model->trace(r, attnscope::AttentionKind::self, 0, 0, 0);
    } catch (const std::exception& e) {
        finding("forward", e);
    }
    return 0;
}
