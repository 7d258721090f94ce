// Hostile input to the pretrained loader: every config field of the wrong type, out of range or not dividing what it
// must; unsupported features; wrong tensor names, shapes and dtypes; missing tensors; truncated files and offsets past
// the end; a broken index; sizes that overflow; chunks out of order. Each is a FileError (or length_error) naming the
// field, and the module stays usable (the ASan build checks that nothing leaks).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "checkpoint_refusals.hpp"
#include "sizes.hpp"

namespace pretrained_errors_test {

using namespace attnscope;
using attnscope_test::HfCase;
using namespace attnscope_test::refusals;

TEST_CASE("config.json: every field checked for type, range and divisibility", "[pretrained][errors]")
{
    using K = FileError::Kind;
    const Json llama = config_of("llama-gqa"), gpt2 = config_of("gpt2-lm"), bert = config_of("bert-mlm");
    refuses(with(llama, "num_key_value_heads", 3), K::range,
            "num_key_value_heads: expected a divisor of num_attention_heads (4), got 3");
    refuses(with(llama, "num_key_value_heads", "2"), K::type, "num_key_value_heads: expected an integer, got a string");
    refuses(with(llama, "num_key_value_heads", 0), K::range, "num_key_value_heads: expected an integer from 1");
    refuses(with(llama, "num_attention_heads", -4), K::range, "num_attention_heads: expected an integer from 1");
    refuses(with(llama, "hidden_size", 2.5), K::range, "hidden_size: expected an integer");
    refuses(with(llama, "hidden_size", true), K::type, "hidden_size: expected an integer, got a boolean");
    refuses(with(llama, "vocab_size", 4294967296.0), K::range, "vocab_size");
    refuses(with(llama, "head_dim", 7), K::range, "head_dim: expected an even number");
    refuses(with(with(llama, "head_dim", nullptr), "hidden_size", 30), K::range,
            "num_attention_heads: expected a divisor of hidden_size (30), got 4");
    refuses(with(llama, "rms_norm_eps", -1), K::range, "rms_norm_eps");
    refuses(with(llama, "rms_norm_eps", "1e-6"), K::type, "rms_norm_eps: expected a number");
    refuses(with(llama, "rope_theta", 0), K::range, "rope_theta");
    refuses(with(llama, "tie_word_embeddings", "yes"), K::type, "tie_word_embeddings: expected a boolean");
    refuses(with(llama, "hidden_act", "gelu_fast"), K::range, "hidden_act: \"gelu_fast\" is not supported");
    refuses(with(llama, "hidden_act", 1), K::type, "hidden_act: expected a string");
    // Unsupported features are refused by name, never ignored.
    refuses(with(llama, "rope_scaling", Json{{"rope_type", "yarn"}, {"factor", 4.0}}), K::range,
            "rope_scaling.rope_type: \"yarn\" is not supported");
    refuses(with(llama, "rope_scaling", Json{{"type", "dynamic"}, {"factor", 2.0}}), K::range,
            "rope_scaling.type: \"dynamic\" is not supported");
    refuses(with(llama, "rope_scaling", "linear"), K::type, "rope_scaling: expected an object or null");
    refuses(with(llama, "rope_scaling", Json{{"rope_type", "linear"}}), K::range, "rope_scaling.factor: missing");
    refuses(with(llama, "rope_scaling", Json{{"rope_type", "linear"}, {"factor", -2}}), K::range, "rope_scaling.factor");
    refuses(with(llama, "rope_scaling", Json{{"rope_type", "llama3"}, {"factor", 8}, {"high_freq_factor", 4},
                                             {"original_max_position_embeddings", 64}}),
            K::range, "rope_scaling.low_freq_factor: missing");
    refuses(with(llama, "rope_scaling", Json{{"rope_type", "llama3"}, {"factor", 8}, {"low_freq_factor", 4}, {"high_freq_factor", 1},
                                             {"original_max_position_embeddings", 64}}),
            K::range, "rope_scaling.high_freq_factor: expected more than low_freq_factor");
    refuses(with(llama, "partial_rotary_factor", 0.5), K::range, "partial_rotary_factor: 0.5 is not supported");
    refuses(with(llama, "attn_logit_softcapping", 50.0), K::range, "attn_logit_softcapping: 50.0 is not supported");
    refuses(with(llama, "final_logit_softcapping", 30.0), K::range, "final_logit_softcapping");
    // transformers 5 saves rope_theta (and any scaling) in rope_parameters. Its plain form is read, its theta before a
    // top-level one (standardize_rope_params); anything else in it is refused by every RoPE family, never run with
    // the default theta of 10000 in its place.
    for (const char* type : {"llama", "mistral", "qwen2", "qwen3", "olmo2"}) {
        Json rope_5 = with(with(llama, "architectures", nullptr), "model_type", type);
        rope_5.erase("rope_theta");
        CHECK(CheckpointLoader(with(rope_5, "rope_parameters", Json{{"rope_type", "default"}, {"rope_theta", 500000.0}}).dump())
                  .plan().main().layer(0).self.rotary.theta == 500000.0);
        CHECK(CheckpointLoader(with(with(rope_5, "rope_theta", 10000.0), "rope_parameters", Json{{"rope_theta", 250000.0}}).dump())
                  .plan().main().layer(0).self.rotary.theta == 250000.0);
        refuses(with(rope_5, "rope_parameters", Json{{"rope_type", "llama3"}, {"rope_theta", 500000.0}}), K::range,
                "config.json: rope_parameters.rope_type: \"llama3\" is not read in rope_parameters yet");
        refuses(with(rope_5, "rope_parameters", Json{{"rope_theta", 500000.0}, {"factor", 8.0}}), K::range,
                "config.json: rope_parameters.factor: is not read yet");
        refuses(with(rope_5, "rope_parameters", Json{{"rope_theta", 0.5}}), K::range, "config.json: rope_parameters.rope_theta");
        refuses(with(with(rope_5, "rope_parameters", Json{{"rope_theta", 500000.0}}), "rope_scaling", Json{{"rope_type", "linear"}, {"factor", 2.0}}),
                K::range, "config.json: rope_parameters: given with rope_scaling");
    }
    // Soft-capping changes the maths wherever a config sets it: outside Gemma 2 and 3 it is refused, GPT-2 and BERT too.
    refuses(with(gpt2, "attn_logit_softcapping", 50.0), K::range, "attn_logit_softcapping: 50.0 is not supported (score capping is not part");
    refuses(with(gpt2, "final_logit_softcapping", 30.0), K::range, "final_logit_softcapping: 30.0 is not supported (logit capping is not part");
    refuses(with(bert, "final_logit_softcapping", 30.0), K::range, "final_logit_softcapping: 30.0 is not supported");
    refuses(with(llama, "quantization_config", Json::object()), K::range, "quantization_config");
    refuses(with(llama, "sliding_window", 4), K::range, "sliding_window: 4 is not supported");
    refuses(with(llama, "layer_types", Json{"full_attention"}), K::range, "layer_types: expected 2 entries");
    refuses(with(with(with(llama, "architectures", nullptr), "model_type", "qwen2"), "layer_types", Json{"full_attention", "chunked_attention"}), K::range,
            "layer_types[1]: \"chunked_attention\" is not supported");
    refuses(with(with(with(llama, "architectures", nullptr), "model_type", "mistral"), "layer_types", Json{"full_attention", "sliding_attention"}), K::range,
            "layer_types[1]: \"sliding_attention\" without a sliding_window");
    refuses(with(llama, "model_type", "falcon"), K::range, "model_type: \"falcon\" is not supported");
    refuses(with(llama, "model_type", 3), K::type, "model_type: expected a string");
    Json no_type = llama;
    no_type.erase("model_type");
    refuses(no_type, K::range, "model_type: missing");
    refuses(with(gpt2, "n_head", 3), K::range, "n_head: expected a divisor of n_embd (16), got 3");
    refuses(with(gpt2, "activation_function", "tanh"), K::range, "activation_function: \"tanh\" is not supported");
    // `architectures` naming another family's class is refused by name (issue 31), as is a malformed list.
    refuses(with(llama, "architectures", Json{"BertForMaskedLM"}), K::range,
            "architectures: \"BertForMaskedLM\" is not a class of model_type \"llama\" read here (expected LlamaForCausalLM, LlamaModel)");
    refuses(with(llama, "architectures", "LlamaForCausalLM"), K::type, "architectures: expected an array of class names");
    refuses(with(gpt2, "scale_attn_weights", false), K::range, "scale_attn_weights: false is not supported");
    refuses(with(gpt2, "add_cross_attention", true), K::range, "add_cross_attention: true is not supported");
    refuses(with(gpt2, "layer_norm_epsilon", 2), K::range, "layer_norm_epsilon");
    refuses(with(bert, "position_embedding_type", "relative_key"), K::range,
            "position_embedding_type: \"relative_key\" is not supported (only \"absolute\")");
    refuses(with(bert, "is_decoder", true), K::range, "is_decoder: true is not supported");
    refuses(with(bert, "hidden_act", "tanh"), K::range, "hidden_act: \"tanh\"");
    refuses(with(bert, "type_vocab_size", 0), K::range, "type_vocab_size");
    // Not JSON, not an object, a key twice.
    for (const char* text : {"{", "[1, 2]", "{\"model_type\": \"gpt2\", \"model_type\": \"bert\"}"}) {
        CAPTURE(text);
        CHECK_THROWS_AS(CheckpointLoader(text), FileError);
    }
}

TEST_CASE("sizes whose products overflow are refused before anything is allocated", "[pretrained][errors]")
{
    // checked_mul: 2^16 · 2^16 wraps a 32-bit size_t (WASM) and must throw there; natively it is exact.
    if (sizeof(std::size_t) == 4) CHECK_THROWS_AS(detail::checked_mul(65536, 65536, "test"), std::length_error);
    else CHECK(std::uint64_t(detail::checked_mul(65536, 65536, "test")) == std::uint64_t(1) << 32);
    CHECK_THROWS_AS(detail::checked_mul(std::numeric_limits<std::size_t>::max() / 2 + 1, 2, "test"), std::length_error);
    // 2^16 tokens × 2^14 features = 2^30 parameters: 4 GiB of F32, whose byte count wraps 32 bits.
    Json big = config_of("llama-gqa");
    big["vocab_size"] = 65536;
    big["hidden_size"] = 16384;
    big["head_dim"] = 2048;
    try {
        CheckpointLoader loader(big.dump());
        FAIL("accepted");
    } catch (const std::length_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("parameters, which need"));
        CHECK_THAT(e.what(), Catch::Contains("bytes as F32"));
    }
    // Layers × a layer's size at every limit saturates instead of wrapping into something small.
    big = config_of("llama-gqa");
    big["num_hidden_layers"] = 1024;
    big["intermediate_size"] = 1 << 20;
    big["hidden_size"] = 1 << 17;
    big.erase("head_dim");
    big["num_attention_heads"] = 2;
    big["num_key_value_heads"] = 1;
    CHECK_THROWS_AS(CheckpointLoader(big.dump()), std::length_error);
    // Past a limit, the field is refused by name before anything is built from it (issue 32: 10^7 layers took 4 GiB).
    for (const char* field : {"num_hidden_layers", "num_attention_heads", "vocab_size", "max_position_embeddings", "intermediate_size"}) {
        big = config_of("llama-gqa");
        big[field] = 10000000;
        CAPTURE(field);
        try {
            CheckpointLoader loader(big.dump());
            FAIL("accepted");
        } catch (const FileError& e) {
            CHECK(e.kind() == FileError::Kind::range);
            CHECK_THAT(e.what(), Catch::Contains(std::string(field) + ": expected an integer from "));
        }
    }
}

TEST_CASE("tensors: names, shapes, dtypes, offsets and files checked against the config", "[pretrained][errors]")
{
    const HfCase gpt2 = attnscope_test::read_hf_case("gpt2-lm");
    const std::string file = "model.safetensors";
    const auto rejects = [&](const HfCase& c, const std::string& f, const std::function<void(std::string&)>& edit, const std::string& text) {
        const std::string message = load_error(c, f, edit);
        CAPTURE(message);
        CHECK_THAT(message, Catch::Contains(text));
        CHECK_THAT(message, Catch::StartsWith("loadModel: " + f + ": "));
    };
    rejects(gpt2, file, header_edit([](Header& h) { h["transformer.h.0.attn.c_attn.weight"]["shape"] = {48, 16}; }),
            "'transformer.h.0.attn.c_attn.weight': expected shape [16, 48] (from config.json), got [48, 16]");
    rejects(gpt2, file, header_edit([](Header& h) { h["transformer.wpe.weight"]["dtype"] = "I32"; }),
            "dtype: expected \"F32\", \"F16\" or \"BF16\", got \"I32\"");
    rejects(gpt2, file, header_edit([](Header& h) { h["transformer.wpe.weight"]["dtype"] = "F16"; }), "bytes of F16");
    rejects(gpt2, file, header_edit([](Header& h) { rename(h, "transformer.h.1.mlp.c_fc.bias", "transformer.h.1.mlp.c_fc.bias2"); }),
            "'transformer.h.1.mlp.c_fc.bias2' is not a tensor of a gpt2 checkpoint with this config");
    rejects(gpt2, file, header_edit([](Header& h) { rename(h, "transformer.ln_f.bias", "transformer.h.7.attn.bias"); }),
            "the tensor 'ln_f.bias' is missing");
    rejects(gpt2, file, header_edit([](Header& h) { rename(h, "transformer.ln_f.weight", "ln_f.bias"); }),
            "appears twice");
    rejects(gpt2, file, [](std::string& f) { f.resize(f.size() - 1); }, "data_offsets[1]: expected an integer from 0 to");
    rejects(gpt2, file, [](std::string& f) { f += "tail"; }, "the tensors cover");
    rejects(gpt2, file, header_edit([](Header& h) { h["transformer.ln_f.bias"]["data_offsets"][1] = 1u << 30; }), "data_offsets");
    rejects(gpt2, file, [](std::string& f) { f[7] = 1; }, "runs past the end of the file");
    rejects(gpt2, file, [](std::string& f) { f.resize(5); }, "fewer than the 8 of the header length");

    // BERT's MLM head is all or nothing.
    const HfCase bert = attnscope_test::read_hf_case("bert-mlm");
    rejects(bert, file, header_edit([](Header& h) { rename(h, "cls.predictions.bias", "cls.seq_relationship.bias"); }),
            "the tensor 'cls.predictions.bias' is missing (the file has other tensors of its head)");

    // cls.predictions.decoder.bias is another name of cls.predictions.bias: either, or both, load the same model.
    {
        HfCase c = bert;
        auto reference = load_checkpoint(c.config, c.views());
        Transformer::Request r;
        r.tokens = {1, 2, 3};
        const auto expected = reference->forward(r).logits.data;
        header_edit([](Header& h) { rename(h, "cls.predictions.bias", "cls.predictions.decoder.bias"); })(c.files.at(file));
        CHECK(load_checkpoint(c.config, c.views())->forward(r).logits.data == expected);
        // Both names: the bias's bytes appended again under the second name.
        c = bert;
        std::string& f = c.files.at(file);
        f = attnscope_test::rewrite_header(f, [&](Header& h) {
            const auto offsets = h["cls.predictions.bias"]["data_offsets"];
            std::uint64_t end = 0;
            for (auto& item : h.items())
                if (item.key() != "__metadata__") end = std::max<std::uint64_t>(end, item.value()["data_offsets"][1]);
            h["cls.predictions.decoder.bias"] = {{"dtype", "F32"}, {"shape", h["cls.predictions.bias"]["shape"]},
                                                 {"data_offsets", {end, end + (offsets[1].get<std::uint64_t>() - offsets[0].get<std::uint64_t>())}}};
        });
        std::uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | std::uint8_t(f[std::size_t(i)]);
        const auto h = Header::parse(f.substr(8, std::size_t(n)));
        const std::size_t b0 = h["cls.predictions.bias"]["data_offsets"][0], b1 = h["cls.predictions.bias"]["data_offsets"][1];
        f += f.substr(8 + std::size_t(n) + b0, b1 - b0);
        CHECK(load_checkpoint(c.config, c.views())->forward(r).logits.data == expected);
    }

    // The index: a shard not given, a tensor in the wrong shard, an entry no header has, wrong JSON types.
    const HfCase sharded = attnscope_test::read_hf_case("llama-sharded");
    const std::string index = "model.safetensors.index.json";
    {
        HfCase c = sharded;
        c.files.erase("model-00002-of-00002.safetensors");
        CHECK_THROWS_WITH(load_checkpoint(c.config, c.views()),
                          Catch::Contains("model-00002-of-00002.safetensors: the file was not given"));
    }
    const auto index_edit = [](const std::function<void(Json&)>& edit) {
        return [edit](std::string& text) {
            Json j = Json::parse(text);
            edit(j);
            text = j.dump();
        };
    };
    {
        HfCase c = sharded;
        index_edit([](Json& j) {
            std::string other;
            for (auto& e : j["weight_map"].items())
                if (e.key() == "model.norm.weight") other = e.value() == "model-00001-of-00002.safetensors" ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
            j["weight_map"]["model.norm.weight"] = other;
        })(c.files.at(index));
        CHECK_THROWS_WITH(load_checkpoint(c.config, c.views()), Catch::Contains("'model.norm.weight' is here, but the index puts it in"));
    }
    {
        HfCase c = sharded;
        index_edit([](Json& j) { j["weight_map"]["model.extra.weight"] = "model-00001-of-00002.safetensors"; })(c.files.at(index));
        CHECK_THROWS_WITH(load_checkpoint(c.config, c.views()),
                          Catch::Contains("the index puts 'model.extra.weight' in this file, but its header does not have it"));
        c = sharded;
        index_edit([](Json& j) { j["weight_map"]["model.norm.weight"] = 3; })(c.files.at(index));
        CHECK_THROWS_WITH(load_checkpoint(c.config, c.views()), Catch::Contains("weight_map['model.norm.weight']: expected a file name"));
        c = sharded;
        index_edit([](Json& j) { j["weight_map"] = Json::array(); })(c.files.at(index));
        CHECK_THROWS_WITH(load_checkpoint(c.config, c.views()), Catch::Contains("weight_map: expected an object"));
    }
}

TEST_CASE("the streaming loader refuses calls out of order, writes out of place and missing bytes", "[pretrained][errors]")
{
    const HfCase c = attnscope_test::read_hf_case("gpt2-lm");
    const std::string& f = c.files.at("model.safetensors");
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(f.data());
    CheckpointLoader loader(c.config);
    CHECK_THROWS_WITH(loader.write("model.safetensors", 0, bytes, 1), Catch::Contains("write before allocate()"));
    CHECK_THROWS_WITH(loader.add_header("other.safetensors", bytes, f.size(), f.size()),
                      Catch::Contains("a checkpoint without an index is one file"));
    CHECK_THROWS_WITH(loader.add_header("model.safetensors", bytes, 100, f.size()), Catch::Contains("the header needs"));
    CHECK_THROWS_WITH(loader.allocate(), Catch::Contains("its header was never added"));
    const std::size_t begin = loader.add_header("model.safetensors", bytes, f.size(), f.size());
    CHECK_THROWS_WITH(loader.add_header("model.safetensors", bytes, f.size(), f.size()), Catch::Contains("added twice"));
    CHECK(loader.parameter_bytes() > 0);
    loader.allocate();
    CHECK_THROWS_WITH(loader.write("model.safetensors", begin + 4, bytes + begin + 4, 4), Catch::Contains("expected " + std::to_string(begin)));
    loader.write("model.safetensors", begin, bytes + begin, 10);
    CHECK_THROWS_WITH(loader.write("model.safetensors", begin + 10, bytes + begin + 10, f.size()), Catch::Contains("runs past the end"));
    CHECK_THROWS_WITH(loader.finish(), Catch::Contains("only " + std::to_string(begin + 10) + " of its " + std::to_string(f.size()) + " bytes arrived"));
    loader.write("model.safetensors", begin + 10, bytes + begin + 10, f.size() - begin - 10);
    CHECK(loader.finish() != nullptr);
}

TEST_CASE("requests are checked: tokens, masks, token types, ablation, generate, trace", "[pretrained][errors]")
{
    const HfCase c = attnscope_test::read_hf_case("gpt2-lm");
    auto model = load_checkpoint(c.config, c.views());
    Transformer::Request r;
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("tokens: expected from 1 to 12 token ids (the model's limit), got 0"));
    r.tokens = {1, 268};
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("tokens[1]: expected a token id from 0 to 267, got 268"));
    r.tokens = {1, -1};
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("tokens[1]: expected a token id from 0 to 267, got -1"));
    const std::size_t P = model->config().max_positions;
    r.tokens = std::vector<std::int32_t>(P + 1, 1);
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("expected from 1 to " + std::to_string(P) + " token ids (the model's limit), got " + std::to_string(P + 1)));
    r.tokens = {1, 2};
    r.attention_mask = {1};
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("attentionMask: expected 2 entries"));
    r.attention_mask = {1, 2};
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("attentionMask[1]: expected 0 (padding) or 1"));
    r.attention_mask = {};
    r.token_type_ids = {0, 0};
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("tokenTypeIds: this model has no token types"));
    r.token_type_ids = {};
    r.ablate = {1};
    CHECK_THROWS_WITH(model->forward(r), Catch::Contains("ablate: expected 4 flags (layers × heads), got 1"));
    r.ablate = {};
    CHECK_THROWS_WITH(model->trace(r, AttentionKind::self, 2, 0, 0), Catch::Contains("trace: layer: expected 0 to 1, got 2"));
    CHECK_THROWS_WITH(model->trace(r, AttentionKind::self, 0, 0, 2), Catch::Contains("trace: query: expected 0 to 1 (one per token), got 2"));
    CHECK(model->forward(r).logits.shape == Shape{2, 268});  // still usable

    const HfCase b = attnscope_test::read_hf_case("bert-mlm");
    auto bert = load_checkpoint(b.config, b.views());
    CHECK_THROWS_WITH(bert->generate({1, 2}, 3, -1), Catch::Contains("generate: this model is not a causal language model"));
    r.token_type_ids = {0, 2};
    CHECK_THROWS_WITH(bert->forward(r), Catch::Contains("tokenTypeIds[1]: expected a type from 0 to 1"));
}

TEST_CASE("config.json numbers are read exactly as written", "[pretrained][config]")
{
    Json llama = config_of("llama-gqa");
    const std::pair<const char*, double> cases[] = {
        {"10000.0", 10000.0}, {"1e4", 1e4}, {"1E+4", 1e4}, {"500000", 500000.0}, {"0.5e1", 5.0}, {"1000000.0", 1e6},
        {"3.14159265358979", 3.14159265358979}, {"12345678901234567890123", 12345678901234567890123.0}};
    for (const auto& c : cases) {
        CAPTURE(c.first);
        std::string text = llama.dump();
        const std::string key = "\"rope_theta\":10000.0";
        REQUIRE(text.find(key) != std::string::npos);
        text.replace(text.find(key), key.size(), std::string("\"rope_theta\":") + c.first);
        CHECK(CheckpointLoader(text).plan().main().layer(0).self.rotary.theta == Approx(c.second).epsilon(1e-15));
    }
    for (const char* eps : {"1e-06", "1e-5", "0.000001", "1e-12"}) {
        CAPTURE(eps);
        std::string text = llama.dump();
        const std::string key = "\"rms_norm_eps\":1e-06";
        REQUIRE(text.find(key) != std::string::npos);
        text.replace(text.find(key), key.size(), std::string("\"rms_norm_eps\":") + eps);
        CHECK(CheckpointLoader(text).plan().main().final_norm.eps == float(std::stod(eps)));
    }
}

}  // namespace pretrained_errors_test
