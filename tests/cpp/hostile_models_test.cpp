// Issue #24's hostile model files (written by tests/fuzz/make_model_corpus.mjs into the fuzz corpora, read here
// from there): each is refused with a clear error or handled within bounded memory. The wraps happen where size_t
// is 32 bits: this suite's WASM build (catch2_wasm) checks the refusals; natively the same files run bounded calls.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attnscope/model_file.hpp"
#include "model_files.hpp"

namespace hostile_models_test {

using namespace attnscope;

namespace {

constexpr bool size_t_is_32_bits = sizeof(std::size_t) == 4;

// A corpus file: a model_calls seed (4 option bytes, then the file) or a model_reader seed (the file).
std::vector<std::uint8_t> corpus_file(const std::string& folder, const std::string& name, std::size_t skip)
{
    const std::vector<std::uint8_t> bytes = attnscope_test::read_bytes(std::string(ATTNSCOPE_FUZZ_DIR) + "/" + folder + "/" + name);
    return std::vector<std::uint8_t>(bytes.begin() + std::ptrdiff_t(skip), bytes.end());
}
ModelFile call_seed(const std::string& name)
{
    const std::vector<std::uint8_t> file = corpus_file("model_calls_corpus", name, 4);
    return read_model_file(file.data(), file.size());
}
FileError reader_error(const std::string& name)
{
    const std::vector<std::uint8_t> file = corpus_file("model_reader_corpus", name, 0);
    try {
        read_model_file(file.data(), file.size());
    } catch (const FileError& e) {
        return e;
    }
    FAIL(name << " loaded");
    throw;
}

}  // namespace

TEST_CASE("issue 24: translate's default max_steps on a file whose L·H·steps² wraps 32 bits is refused", "[hostile]")
{
    ModelFile m = call_seed("issue24-seq2seq-wrap-translate-default");
    REQUIRE(m.seq2seq);
    REQUIRE(m.seq2seq->config().max_tgt_len == 65537);
    if (size_t_is_32_bits) {
        // Before: self_weights of 1·1·65536² = 0 floats, then a heap overflow at the first step.
        CHECK_THROWS_AS(m.seq2seq->translate({1}, 1, 2, 65536), std::length_error);
        CHECK_THROWS_WITH(m.seq2seq->translate({1}, 1, 2, 65536),
                          Catch::StartsWith("Seq2SeqModel.translate: maxSteps 65536: the caches and attention maps of 65536 steps "
                                            "would need "));
    }
    // Fewer steps decode: head.bias never picks <eos> (id 2), so every step runs.
    const Seq2SeqModel::Translation t = m.seq2seq->translate({1}, 1, 2, 40);
    CHECK(t.tokens == std::vector<std::int32_t>(40, 0));
    CHECK(t.decoder_attention.shape == Shape{1, 1, 40, 40});
    CHECK(t.decoder_attention.data[39 * 40 + 39] == Approx(1.f / 40));  // one head, uniform over 40 equal keys
}

TEST_CASE("issue 24: max_tgt_len 20001 with <eos> at the first step decodes in a few bytes", "[hostile]")
{
    // Before: 2 layers × 1 head × 20000² floats (3.2 GB) allocated before the first step, more than WASM can grow to.
    ModelFile m = call_seed("issue24-seq2seq-long-target-translate-default");
    REQUIRE(m.seq2seq);
    const Seq2SeqModel::Translation t = m.seq2seq->translate({1}, 1, 2, 20000);
    CHECK(t.tokens == std::vector<std::int32_t>{2});
    CHECK(t.decoder_attention.shape == Shape{2, 1, 1, 1});
    CHECK(t.cross_attention.shape == Shape{2, 1, 1, 1});
}

TEST_CASE("issue 24: tokens × d_ff that wraps 32 bits is refused before forward allocates", "[hostile]")
{
    // The report's language model: d_ff 2^20 + 1 and max_len 4096 (4096 × 1048577 floats = 2^32 + 4096).
    LanguageModelConfig c;
    c.vocab_size = 2;
    c.max_len = 4096;
    c.d_model = 1;
    c.d_ff = (std::size_t(1) << 20) + 1;
    c.num_layers = 1;
    LanguageModel lm(c);
    if (size_t_is_32_bits) {
        CHECK_THROWS_WITH(lm.forward(std::vector<std::int32_t>(4096, 0), false),
                          "LanguageModel.forward: the MLP's workspace of 4096 tokens needs 4294971392 floats, more than the "
                          "address space holds; pass fewer tokens");
    }
    CHECK(lm.forward({0, 1}, true).logits.shape == Shape{2, 2});
    // The corpus's smaller file (908 KB): 113512 tokens × d_ff 37838 = 2^32 + 99760 floats.
    ModelFile small = call_seed("issue24-wide-mlp-forward-max");
    REQUIRE(small.language_model);
    if (size_t_is_32_bits)
        CHECK_THROWS_AS(small.language_model->forward(std::vector<std::int32_t>(113512, 0), false), std::length_error);
    CHECK(small.language_model->generate({0}, 3, -1).size() == 3);
}

TEST_CASE("issue 24: a metadata bomb and named heads with repeated or mistyped keys are refused", "[hostile]")
{
    const FileError bomb = reader_error("issue24-metadata-bomb.safetensors");
    CHECK(bomb.kind() == FileError::Kind::type);
    CHECK_THAT(bomb.what(), Catch::StartsWith("__metadata__.config: expected a JSON object, got an array [0,0,"));
    const FileError duplicate = reader_error("issue24-duplicate-named-heads.safetensors");
    CHECK(duplicate.kind() == FileError::Kind::range);
    CHECK_THAT(duplicate.what(), Catch::StartsWith("__metadata__.named_heads: invalid JSON: the key 'head' appears twice in an object"));
    const FileError mistyped = reader_error("issue24-mistyped-named-heads.safetensors");
    CHECK(mistyped.kind() == FileError::Kind::type);
    CHECK_THAT(mistyped.what(), Catch::StartsWith("__metadata__.named_heads[0].name: expected a string, got an object {}"));
}

}  // namespace hostile_models_test
