// The model-file reader against corrupted files: every case is a FileError of the right kind naming the field,
// and the intact files load. Corruptions are made by editing the shipped files' headers (nlohmann, test-only).
#include <catch2/catch.hpp>

#include <algorithm>

#include <cstring>
#include <string>

#include "attnscope/model_file.hpp"
#include "model_files.hpp"

namespace model_file_test {

using namespace attnscope;
using nlohmann::json;

namespace {

std::vector<std::uint8_t> seq2seq_bytes()
{
    static const auto bytes = attnscope_test::read_bytes(std::string(ATTNSCOPE_MODEL_DIR) + "/dates-seq2seq.safetensors");
    return bytes;
}

std::uint64_t header_length(const std::vector<std::uint8_t>& b)
{
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | b[std::size_t(i)];
    return n;
}

json header_of(const std::vector<std::uint8_t>& b)
{
    const std::uint64_t n = header_length(b);
    return json::parse(b.begin() + 8, b.begin() + 8 + std::ptrdiff_t(n));
}

// The file with its header replaced by `header_text` (the data section unchanged).
std::vector<std::uint8_t> with_header(const std::vector<std::uint8_t>& b, const std::string& header_text)
{
    const std::uint64_t n = header_length(b), m = header_text.size();
    // Sized once and filled with copies: GCC 12 at -O3 reports a false -Warray-bounds for the insert() calls.
    std::vector<std::uint8_t> out(8 + m + (b.size() - 8 - n));
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = std::uint8_t(m >> (8 * i));
    std::copy(header_text.begin(), header_text.end(), out.begin() + 8);
    std::copy(b.begin() + 8 + std::ptrdiff_t(n), b.end(), out.begin() + 8 + std::ptrdiff_t(m));
    return out;
}

// Edits one metadata JSON text (config, vocab, ...) of the seq2seq file.
template <class Edit>
std::vector<std::uint8_t> edit_metadata(const char* key, Edit edit)
{
    const auto b = seq2seq_bytes();
    json h = header_of(b);
    json value = json::parse(h["__metadata__"][key].get<std::string>());
    edit(value);
    h["__metadata__"][key] = value.dump();
    return with_header(b, h.dump());
}

template <class Edit>
std::vector<std::uint8_t> edit_header(Edit edit)
{
    const auto b = seq2seq_bytes();
    json h = header_of(b);
    edit(h);
    return with_header(b, h.dump());
}

}  // namespace

TEST_CASE("model files: the shipped files load with their metadata", "[model_file]")
{
    const auto b = seq2seq_bytes();
    const ModelFile m = read_model_file(b.data(), b.size());
    CHECK(m.kind == ModelKind::seq2seq);
    REQUIRE(m.seq2seq);
    CHECK(m.seq2seq->config().d_model == 64);
    CHECK(json::parse(m.vocab).at("tgt_eos_id") == 2);
    CHECK(json::parse(m.named_heads).is_array());
}

TEST_CASE("model files: truncation at every section boundary is a RangeError", "[model_file]")
{
    const auto b = seq2seq_bytes();
    const std::size_t n = std::size_t(header_length(b));
    for (std::size_t size : {std::size_t(0), std::size_t(7), std::size_t(8), std::size_t(9), 8 + n / 2, 8 + n - 1, 8 + n,
                             8 + n + 1, b.size() - 4, b.size() - 1}) {
        CAPTURE(size);
        const std::vector<std::uint8_t> cut(b.begin(), b.begin() + std::ptrdiff_t(size));
        const FileError e = attnscope_test::file_error_of(cut);
        CHECK(e.kind() == FileError::Kind::range);
    }
    std::vector<std::uint8_t> longer = b;
    longer.push_back(0);
    CHECK_THAT(attnscope_test::file_error_of(longer).what(), Catch::Contains("the tensors cover"));
}

TEST_CASE("model files: header length, JSON and tensor fields", "[model_file]")
{
    auto b = seq2seq_bytes();
    b[7] = 0x80;  // header length ≥ 2^63
    CHECK_THAT(attnscope_test::file_error_of(b).what(), Catch::Contains("runs past the end of the file"));

    CHECK_THAT(attnscope_test::file_error_of(with_header(seq2seq_bytes(), std::string(100, '['))).what(), Catch::Contains("must start with '{'"));
    CHECK_THAT(attnscope_test::file_error_of(with_header(seq2seq_bytes(), "{" + std::string(100, '[') + std::string(100, ']') + "}")).what(),
               Catch::Contains("invalid JSON"));
    CHECK_THAT(attnscope_test::file_error_of(with_header(seq2seq_bytes(), "{\"a\":[" + std::string(70, '[') + std::string(70, ']') + "]}")).what(),
               Catch::Contains("nested too deeply"));

    const FileError dtype = attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["dtype"] = "F16"; }));
    CHECK(dtype.kind() == FileError::Kind::range);
    CHECK_THAT(dtype.what(), Catch::Contains("header['head.bias'].dtype") && Catch::Contains("\"F16\""));
    const FileError shape_type = attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["shape"] = {"14"}; }));
    CHECK(shape_type.kind() == FileError::Kind::type);
    CHECK_THAT(shape_type.what(), Catch::Contains("shape[0]: expected a non-negative integer, got a string \"14\""));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["shape"] = {-1}; })).what(), Catch::Contains("got -1"));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["shape"] = json::parse("[14.5]"); })).what(), Catch::Contains("got 14.5"));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["shape"] = {4294967296ull}; })).what(),
               Catch::Contains("needs 17179869184 bytes"));
    // The shape as written, whatever size_t holds: the 32-bit build once printed these dimensions as 0.
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["shape"] = {4294967296ull, 4294967296ull, 16}; })).what(),
               Catch::Contains("shape [4294967296, 4294967296, 16] needs more than 2^53 bytes"));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["extra"] = 1; })).what(), Catch::Contains("unknown field 'extra'"));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["__metadata__"]["kind"] = 3; })).what(),
               Catch::Contains("__metadata__['kind']: expected a string, got a number 3"));
    CHECK_THAT(attnscope_test::file_error_of(with_header(seq2seq_bytes(), "{\"a\":1,\"a\":2}")).what(), Catch::Contains("'a' appears twice"));
}

TEST_CASE("model files: offsets must tile the data exactly", "[model_file]")
{
    const auto shift = [](std::int64_t delta) {
        return edit_header([delta](json& h) {
            auto& o = h["head.bias"]["data_offsets"];
            o[0] = o[0].get<std::int64_t>() + delta;
            o[1] = o[1].get<std::int64_t>() + delta;
        });
    };
    CHECK_THAT(attnscope_test::file_error_of(shift(-4)).what(), Catch::Contains("overlaps"));
    CHECK_THAT(attnscope_test::file_error_of(shift(4)).what(), Catch::Contains("data_offsets[1]: expected an integer from 0 to"));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h["head.bias"]["data_offsets"] = {-100000000, 0}; })).what(),
               Catch::Contains("got -100000000"));
    // head.bias moved to the start of the data, its size kept: it overlaps the first tensor.
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) {
                   h["head.bias"]["data_offsets"] = {0, 4 * h["head.bias"]["shape"][0].get<std::int64_t>()};
               })).what(),
               Catch::Contains("overlaps"));
    // Two tensors swapped in the data: offsets still tile, so the file loads (with the weights where the header says).
    const auto swapped = edit_header([](json& h) {
        std::swap(h["enc_ln_f.weight"]["data_offsets"], h["enc_ln_f.bias"]["data_offsets"]);
    });
    CHECK_NOTHROW(read_model_file(swapped.data(), swapped.size()));
}

TEST_CASE("model files: config and vocabulary against the tensors, before the model is built", "[model_file]")
{
    // The giant allocation: a million layers is refused at the first tensor the file lacks.
    const FileError layers = attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["n_enc_layers"] = 1000000; }));
    CHECK(layers.kind() == FileError::Kind::range);
    CHECK_THAT(layers.what(), Catch::Contains("enc_blocks.999999.ln1.weight") && Catch::Contains("missing"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["n_enc_layers"] = 1e6; })).what(),
               Catch::Contains("n_enc_layers: expected an integer from 1 to 16777216, got 1000000.0"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["d_model"] = 4294967296ull; })).what(),
               Catch::Contains("got 4294967296"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["d_ff"] = 129; })).what(),
               Catch::Contains("the config implies shape [129, 64] for 'enc_blocks.0.mlp.fc1.weight', got [128, 64]"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["d_model"] = 4096; c.erase("head_dim"); })).what(),
               Catch::Contains("src_tok_emb.weight"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["n_heads"] = 5; })).what(),
               Catch::Contains("not divisible by n_heads"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["ln_eps"] = 1e-6; })).what(), Catch::Contains("ln_eps"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("config", [](json& c) { c["d_model"] = "64"; })).what(),
               Catch::Contains("__metadata__.config.d_model: expected an integer, got a string \"64\""));
    const auto tgt_vocab = json::parse(header_of(seq2seq_bytes())["__metadata__"]["config"].get<std::string>())
                               .at("tgt_vocab_size")
                               .get<int>();
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("vocab", [](json& v) { v["tgt_eos_id"] = 99; })).what(),
               Catch::Contains("__metadata__.vocab.tgt_eos_id: expected an integer from 0 to " +
                               std::to_string(tgt_vocab - 1) + ", got 99"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("vocab", [](json& v) { v["tgt_tokens"].push_back("x"); })).what(),
               Catch::Contains("expected " + std::to_string(tgt_vocab) + " tokens"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("vocab", [](json& v) { v["src_tokens"][3] = 7; })).what(),
               Catch::Contains("src_tokens[3]: expected a string"));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("named_heads", [](json& n) { n[0]["layer"] = 7; })).what(),
               Catch::Contains("named_heads[0].layer"));
    CHECK_THAT(attnscope_test::file_error_of(edit_header([](json& h) { h.erase("enc_ln_f.bias"); })).what(), Catch::Contains("a gap before it"));
}

TEST_CASE("model files: every named_heads field has the type index.d.ts declares", "[model_file]")
{
    // The file's first named head is {layer 0, head 0, attn "enc_self", module, name, metric, score, threshold, ...}.
    const auto named = [](const char* key, json value) {
        return attnscope_test::file_error_of(edit_metadata("named_heads", [&](json& n) { n[0][key] = value; }));
    };
    const auto missing = [](const char* key) {
        return attnscope_test::file_error_of(edit_metadata("named_heads", [&](json& n) { n[0].erase(key); }));
    };
    for (const char* key : {"name", "metric", "module", "attn"}) {
        CAPTURE(key);
        const FileError e = named(key, json::object());
        CHECK(e.kind() == FileError::Kind::type);
        CHECK_THAT(e.what(), Catch::Equals("__metadata__.named_heads[0]." + std::string(key) + ": expected a string, got an object {}"));
    }
    CHECK_THAT(named("score", "high").what(), Catch::Equals("__metadata__.named_heads[0].score: expected a number, got a string \"high\""));
    CHECK_THAT(named("threshold", true).what(), Catch::Equals("__metadata__.named_heads[0].threshold: expected a number, got a boolean true"));
    CHECK_THAT(named("layer", "0").what(), Catch::Equals("__metadata__.named_heads[0].layer: expected an integer, got a string \"0\""));
    CHECK_THAT(named("head", -7).what(), Catch::Equals("__metadata__.named_heads[0].head: expected an integer from 0 to 3, got -7"));
    CHECK_THAT(named("attn", "cross").what(), Catch::StartsWith("__metadata__.named_heads[0].attn: expected \"enc_self\", \"dec_self\" or \"dec_cross\", got \"cross\""));
    // An encoder head's layer is checked against the encoder's 3 layers, a decoder head's against the decoder's 2.
    const std::vector<std::uint8_t> third_encoder_layer = edit_metadata("named_heads", [](json& n) { n[0]["layer"] = 2; });
    CHECK_NOTHROW(read_model_file(third_encoder_layer.data(), third_encoder_layer.size()));
    CHECK_THAT(attnscope_test::file_error_of(edit_metadata("named_heads", [](json& n) { n[0]["layer"] = 2; n[0]["attn"] = "dec_cross"; })).what(),
               Catch::Equals("__metadata__.named_heads[0].layer: expected an integer from 0 to 1, got 2"));
    for (const char* key : {"layer", "head", "name", "metric", "score"}) {
        CAPTURE(key);
        CHECK_THAT(missing(key).what(), Catch::Equals("__metadata__.named_heads[0]." + std::string(key) +
                                                      ": missing (a named head has layer, head, name, metric and score)"));
    }
    CHECK_NOTHROW(read_model_file(seq2seq_bytes().data(), seq2seq_bytes().size()));
}

}  // namespace model_file_test
