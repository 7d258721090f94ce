// Issue 32's hostile Hugging Face checkpoints against the loader: a tiny config that names huge sizes (refused by its
// own field before anything proportional to it exists), JSON files past their size limits, degenerate rotary settings,
// shard names that are paths, and weights holding NaN or infinity (F32, F16 and BF16's bit patterns), refused naming
// the tensor and the count unless the caller allows them.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "pretrained_files.hpp"

namespace hostile_checkpoints_test {

using namespace attnscope;
using attnscope_test::HfCase;
using Json = nlohmann::json;

namespace {

Json config_of(const std::string& name) { return Json::parse(attnscope_test::read_text(attnscope_test::hf_dir(name) + "/config.json")); }

// The FileError `make()` throws: its message, checked to be of `kind`; "(accepted)" when it throws nothing.
template <typename F>
std::string error_of(F make, FileError::Kind kind = FileError::Kind::range)
{
    try {
        make();
    } catch (const FileError& e) {
        CHECK(e.kind() == kind);
        return e.what();
    }
    return "(accepted)";
}

std::string config_error(const Json& config) { return error_of([&] { CheckpointLoader loader(config.dump()); }); }

// `c`'s model.safetensors with `bytes` written over the data of `tensor`, from its element `element` on.
void overwrite(HfCase& c, const std::string& tensor, std::size_t element, const std::string& bytes)
{
    std::string& f = c.files.at("model.safetensors");
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | std::uint8_t(f[std::size_t(i)]);
    const auto header = nlohmann::json::parse(f.substr(8, std::size_t(n)));
    const auto& t = header.at(tensor);
    const std::size_t element_bytes = t.at("dtype") == "F32" ? 4 : 2;
    const std::size_t begin = 8 + std::size_t(n) + std::size_t(t.at("data_offsets")[0]) + element * element_bytes;
    REQUIRE(begin + bytes.size() <= 8 + n + std::size_t(t.at("data_offsets")[1]));
    f.replace(begin, bytes.size(), bytes);
}

std::string u16(std::initializer_list<std::uint16_t> values)
{
    std::string out;
    for (std::uint16_t v : values) out += {char(v & 0xff), char(v >> 8)};
    return out;
}

std::string f32(std::initializer_list<float> values)
{
    std::string out(values.size() * 4, '\0');
    std::size_t i = 0;
    for (float v : values) std::memcpy(&out[4 * i++], &v, 4);
    return out;
}

// Loads `c`, optionally allowing non-finite weights; the FileError's message, or "(accepted)".
std::string load_error(const HfCase& c, bool allow = false)
{
    return error_of([&] {
        CheckpointLoader loader(c.config);
        loader.allow_non_finite(allow);
        const auto files = c.views();
        const auto& f = files.at("model.safetensors");
        const std::size_t begin = loader.add_header("model.safetensors", f.first, f.second, f.second);
        loader.allocate();
        loader.write("model.safetensors", begin, f.first + begin, f.second - begin);
        loader.finish();
    });
}

}  // namespace

TEST_CASE("a 600-byte config naming 10^7 layers is refused by its own field before anything is built from it", "[pretrained][hostile]")
{
    // Issue 32: num_hidden_layers 1e7 with every size 1 or 2 grew WASM memory to 4 GiB before "out of memory".
    const Json llama = {{"model_type", "llama"}, {"hidden_size", 2}, {"intermediate_size", 1}, {"num_attention_heads", 1},
                        {"num_key_value_heads", 1}, {"vocab_size", 2}, {"max_position_embeddings", 2}, {"num_hidden_layers", 10000000}};
    CHECK(llama.dump().size() < 600);
    CHECK_THAT(config_error(llama), Catch::Equals("loadModel: config.json: num_hidden_layers: expected an integer from 1 to 1024, got 10000000"));
    // GPT-2 with n_layer 1e6 was refused only at its first tensor's shape, after 2.8 GiB. Each size by GPT-2's own name.
    for (const char* field : {"n_layer", "n_head", "n_positions", "vocab_size", "n_embd", "n_inner"}) {
        Json c = config_of("gpt2-lm");
        c[field] = 1000000000;
        CAPTURE(field);
        CHECK_THAT(config_error(c), Catch::StartsWith(std::string("loadModel: config.json: ") + field + ": expected an integer from "));
    }
    for (const char* field : {"num_hidden_layers", "num_attention_heads", "max_position_embeddings", "vocab_size", "type_vocab_size"}) {
        Json c = config_of("bert-mlm");
        c[field] = 1e300;
        CAPTURE(field);
        CHECK_THAT(config_error(c), Catch::StartsWith(std::string("loadModel: config.json: ") + field + ": expected an integer from "));
    }
}

TEST_CASE("a checkpoint's JSON files past their limits are refused naming the file, its size and the limit", "[pretrained][hostile]")
{
    CHECK(checkpoint_file_limit("config.json") == max_config_bytes);
    CHECK(checkpoint_file_limit("tokenizer_config.json") == max_tokenizer_config_bytes);
    CHECK(checkpoint_file_limit("tokenizer.json") == max_tokenizer_bytes);
    CHECK(checkpoint_file_limit("model.safetensors.index.json") == max_index_bytes);
    CHECK(checkpoint_file_limit("model-00001-of-00002.safetensors") == 0);
    CHECK(max_config_bytes <= std::size_t(8) << 20);
    CHECK(max_tokenizer_config_bytes <= std::size_t(8) << 20);
    CHECK(error_of([] { check_checkpoint_file_size("loadModel", "tokenizer.json", max_tokenizer_bytes, true); }) == "(accepted)");
    CHECK(error_of([] { check_checkpoint_file_size("loadModel", "tokenizer.json", max_tokenizer_bytes + 1, true); }) ==
          "loadModel: tokenizer.json: 67108865 bytes, more than the 67108864 bytes a tokenizer.json may have (a real one is far smaller)");
    // A file still arriving without a size sent is refused as soon as its bytes pass the limit.
    CHECK(error_of([] { check_checkpoint_file_size("loadModel", "tokenizer_config.json", 5u << 20, false); }) ==
          "loadModel: tokenizer_config.json: at least 5242880 bytes, more than the 4194304 bytes a tokenizer_config.json may have (a real one is far smaller)");
    CHECK(error_of([] { check_checkpoint_file_size("loadModel", "model.safetensors", std::uint64_t(1) << 40, true); }) == "(accepted)");

    // The loader itself holds config.json and the index to the same limits (a C++ caller has no reader in front).
    const std::string config = config_of("gpt2-lm").dump() + std::string(max_config_bytes, ' ');
    CHECK_THAT(error_of([&] { CheckpointLoader loader(config); }),
               Catch::StartsWith("loadModel: config.json: " + std::to_string(config.size()) + " bytes, more than the 4194304 bytes"));
    const HfCase sharded = attnscope_test::read_hf_case("llama-sharded");
    const std::string index = sharded.files.at("model.safetensors.index.json") + std::string(max_index_bytes, ' ');
    CHECK_THAT(error_of([&] {
                   CheckpointLoader loader(sharded.config);
                   loader.set_index(index);
               }),
               Catch::StartsWith("loadModel: model.safetensors.index.json: " + std::to_string(index.size()) + " bytes, more than the 67108864"));
}

TEST_CASE("degenerate rotary settings are refused by name: rope_theta at most 1, a tiny scaling factor", "[pretrained][hostile]")
{
    // Issue 32: rope_theta or rope_scaling.factor 1e-300 loaded, and every logit was NaN.
    const Json llama = config_of("llama-gqa");
    for (const double theta : {1.0, 1e-300, 0.5, -10000.0}) {
        Json c = llama;
        c["rope_theta"] = theta;
        CAPTURE(theta);
        CHECK_THAT(config_error(c), Catch::StartsWith("loadModel: config.json: rope_theta: expected a number above 1"));
    }
    for (const char* type : {"linear", "llama3"}) {
        Json c = llama;
        c["rope_scaling"] = {{"rope_type", type}, {"factor", 1e-300}, {"low_freq_factor", 1}, {"high_freq_factor", 4}, {"original_max_position_embeddings", 8}};
        CAPTURE(type);
        CHECK_THAT(config_error(c), Catch::StartsWith("loadModel: config.json: rope_scaling.factor: expected a number from 1/1024 to 1000000, got 1e-300"));
    }
    Json c = llama;
    c["rope_theta"] = 1.5;  // odd, but finite at every position: accepted
    CHECK(config_error(c) == "(accepted)");
}

TEST_CASE("an index's shard names are plain file names: no '.', '..', folders or empty names", "[pretrained][hostile]")
{
    const HfCase sharded = attnscope_test::read_hf_case("llama-sharded");
    const std::string long_name = std::string(256, 'a');
    for (const std::string shard :
         {"..", ".", "../model.safetensors", "sub/model.safetensors", "sub\\model.safetensors", "/etc/passwd", "", long_name.c_str()}) {
        Json index = Json::parse(sharded.files.at("model.safetensors.index.json"));
        index["weight_map"]["model.norm.weight"] = shard;
        CAPTURE(shard);
        CHECK(error_of([&] {
                  CheckpointLoader loader(sharded.config);
                  loader.set_index(index.dump());
              }) == "loadModel: model.safetensors.index.json: weight_map['model.norm.weight']: expected a file name, got " +
                         (shard.size() > 40 ? "\"" + shard.substr(0, 40) + "…\"" : Json(shard).dump()));
    }
}

TEST_CASE("weights holding NaN or infinity are refused naming the tensor and the count, unless allowed", "[pretrained][hostile]")
{
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    HfCase gpt2 = attnscope_test::read_hf_case("gpt2-lm");
    overwrite(gpt2, "transformer.h.1.mlp.c_fc.weight", 5, f32({nan, 1.f, -inf, inf}));
    CHECK(load_error(gpt2) == "loadModel: model.safetensors: 'transformer.h.1.mlp.c_fc.weight' holds 3 values that are NaN or infinite "
                              "(every map and logit would be NaN; load with allowNonFinite: true to read them anyway)");
    CHECK(load_error(gpt2, true) == "(accepted)");

    // BF16: a quiet NaN, a signalling one, a negative NaN with a payload, and −∞; 0x7F7F is the largest finite value.
    HfCase bf16 = attnscope_test::read_hf_case("llama-bf16");
    overwrite(bf16, "model.layers.0.self_attn.q_proj.weight", 0, u16({0x7FC0, 0x7F81, 0xFFFF, 0xFF80, 0x7F7F}));
    CHECK_THAT(load_error(bf16), Catch::StartsWith("loadModel: model.safetensors: 'model.layers.0.self_attn.q_proj.weight' holds 4 values that are NaN"));
    CHECK(load_error(bf16, true) == "(accepted)");
    // F16: +∞, a NaN and −∞; 0x7BFF (65504) is finite.
    HfCase f16 = attnscope_test::read_hf_case("llama-f16");
    overwrite(f16, "model.embed_tokens.weight", 7, u16({0x7C00, 0x7E01, 0xFC00, 0x7BFF}));
    CHECK_THAT(load_error(f16), Catch::StartsWith("loadModel: model.safetensors: 'model.embed_tokens.weight' holds 3 values that are NaN"));
    CHECK(load_error(f16, true) == "(accepted)");
}

TEST_CASE("a megabyte-long tensor name is quoted in at most a few hundred characters", "[pretrained][hostile]")
{
    // Issue 32: a 1 MB tensor name gave a 1 MB error message.
    const std::string name(1000000, 'n');
    const HfCase gpt2 = attnscope_test::read_hf_case("gpt2-lm");
    for (const char* dtype : {"I8", "F32"}) {
        // I8: refused for its dtype; F32 of 4 bytes: not a tensor of a gpt2 checkpoint.
        const std::string file = attnscope_test::safetensors_file({{name, dtype, {1}, std::string(4, '\0')}});
        CheckpointLoader loader(gpt2.config);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(file.data());
        const std::string message = error_of([&] { loader.add_header("model.safetensors", bytes, file.size(), file.size()); });
        CAPTURE(message.substr(0, 300));
        CHECK(message.size() < 500);
        CHECK_THAT(message, Catch::Contains("nnn…"));
        CHECK_THAT(message, Catch::Contains(" (1000000 "));
    }
}

TEST_CASE("a header with far more entries than the config can mean is refused before any is read", "[pretrained][hostile]")
{
    // Issue 32: a million ignored tensors took 10.5 s natively (100 s in WASM) and 1.25 GB.
    HfCase gpt2 = attnscope_test::read_hf_case("gpt2-lm");
    std::string& file = gpt2.files.at("model.safetensors");
    file = attnscope_test::rewrite_header(file, [](nlohmann::ordered_json& h) {
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        for (int i = 0; i < 20000; ++i)
            out["transformer.h." + std::to_string(i) + ".attn.bias"] = {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {0, 0}}};
        for (auto& item : h.items()) out[item.key()] = item.value();
        h = out;
    });
    const std::string message = error_of([&] { load_checkpoint(gpt2.config, gpt2.views()); });
    CHECK_THAT(message, Catch::Matches("loadModel: model\\.safetensors: header: 200\\d\\d entries, "
                                       "more than the \\d+ tensors a checkpoint with this config can hold"));
    // The fixture itself, with GPT-2's ignored attn.bias of each layer, is within it.
    const HfCase plain = attnscope_test::read_hf_case("gpt2-lm");
    CHECK(error_of([&] { load_checkpoint(plain.config, plain.views()); }) == "(accepted)");
}

}  // namespace hostile_checkpoints_test
