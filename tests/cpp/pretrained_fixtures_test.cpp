// Every Hugging Face fixture (tests/fixtures/hf, made by tools/references/make_hf_checkpoints.py from HF's own formulas) loaded
// and run: hidden states and logits to 1e-4 of the largest magnitude, attention to 2e-5, greedy generation exactly;
// the streamed loader in odd chunk sizes gives the same bits as the in-memory one; trace() agrees with forward().
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace pretrained_fixtures_test {

using namespace attnscope;
using attnscope_test::HfCase;
using attnscope_test::max_relative_error;

namespace {

std::vector<float> data_of(const nlohmann::json& t) { return t.at("data").get<std::vector<float>>(); }
Shape shape_of(const nlohmann::json& t) { return t.at("shape").get<Shape>(); }

double max_abs_error(const std::vector<float>& a, const std::vector<float>& e)
{
    if (a.size() != e.size()) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double diff = std::fabs(double(a[i]) - double(e[i]));
        if (std::isnan(diff)) return INFINITY;
        worst = std::max(worst, diff);
    }
    return worst;
}

Transformer::Request request_of(const nlohmann::json& input)
{
    Transformer::Request r;
    r.tokens = input.at("input_ids").get<std::vector<std::int32_t>>();
    if (input.contains("attention_mask")) r.attention_mask = input.at("attention_mask").get<std::vector<std::uint8_t>>();
    if (input.contains("token_type_ids")) r.token_type_ids = input.at("token_type_ids").get<std::vector<std::int32_t>>();
    return r;
}

// The case's files streamed through CheckpointLoader in chunks of `chunk` bytes.
std::unique_ptr<Transformer> stream(const HfCase& c, std::size_t chunk)
{
    CheckpointLoader loader(c.config);
    if (c.files.count("model.safetensors.index.json")) loader.set_index(c.files.at("model.safetensors.index.json"));
    std::vector<std::size_t> begins;
    for (const std::string& name : loader.files()) {
        const std::string& f = c.files.at(name);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(f.data());
        const std::size_t need = CheckpointLoader::needed_header_bytes("model.safetensors", bytes, f.size());
        begins.push_back(loader.add_header(name, bytes, need, f.size()));
    }
    loader.allocate();
    std::size_t i = 0;
    for (const std::string& name : loader.files()) {
        const std::string& f = c.files.at(name);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(f.data());
        for (std::size_t at = begins[i++]; at < f.size(); at += chunk)
            loader.write(name, at, bytes + at, std::min(chunk, f.size() - at));
    }
    return loader.finish();
}

}  // namespace

TEST_CASE("Hugging Face fixtures: hidden, logits, attention and generation match", "[pretrained][fixtures]")
{
    const auto names = attnscope_test::hf_case_names();
    REQUIRE(names.size() >= 3);
    for (const std::string& name : names) {
        CAPTURE(name);
        const HfCase c = attnscope_test::read_hf_case(name);
        std::unique_ptr<Transformer> model = load_checkpoint(c.config, c.views());
        for (const auto& input : c.reference.at("inputs")) {
            const Transformer::Output out = model->forward(request_of(input));
            CHECK(out.hidden.shape == shape_of(input.at("hidden")));
            CHECK(max_relative_error(out.hidden.data, data_of(input.at("hidden"))) < 1e-4);
            if (input.contains("logits")) {
                CHECK(out.logits.shape == shape_of(input.at("logits")));
                CHECK(max_relative_error(out.logits.data, data_of(input.at("logits"))) < 1e-4);
            } else {
                CHECK(out.logits.data.empty());
            }
            CHECK(out.attention.shape == shape_of(input.at("attention")));
            CHECK(max_abs_error(out.attention.data, data_of(input.at("attention"))) < 2e-5);
        }
        if (c.reference.contains("generate")) {
            const auto& g = c.reference.at("generate");
            const auto prompt = g.at("prompt").get<std::vector<std::int32_t>>();
            CHECK(model->generate(prompt, g.at("max_new_tokens").get<std::size_t>(), -1) ==
                  g.at("tokens").get<std::vector<std::int32_t>>());
        }
    }
}

TEST_CASE("streamed in any chunk size, a checkpoint loads to the same bits", "[pretrained][loader]")
{
    for (const std::string& name : {std::string("gpt2-lm"), std::string("llama-f16"), std::string("llama-bf16"),
                                    std::string("llama-sharded"), std::string("bert-mlm")}) {
        CAPTURE(name);
        const HfCase c = attnscope_test::read_hf_case(name);
        const auto whole = load_checkpoint(c.config, c.views());
        const Transformer::Request r = request_of(c.reference.at("inputs").at(0));
        const auto expected = whole->forward(r);
        for (std::size_t chunk : {std::size_t(1), std::size_t(3), std::size_t(7), std::size_t(4096)}) {
            CAPTURE(chunk);
            const auto streamed = stream(c, chunk);
            CHECK(streamed->parameter_bytes() == whole->parameter_bytes());
            const auto out = streamed->forward(r);
            CHECK(out.hidden.data == expected.hidden.data);
            CHECK(out.logits.data == expected.logits.data);
        }
    }
}

TEST_CASE("inputs longer than one block of query rows: causal prefixes agree, generate matches forward", "[pretrained][fixtures]")
{
    // forward() takes the queries 32 rows at a time; a causal model's first k rows cannot depend on what follows.
    for (const std::string& name : {std::string("llama-gqa"), std::string("mistral-window"), std::string("qwen2-window-layers")}) {
        CAPTURE(name);
        const HfCase c = attnscope_test::read_hf_case(name);
        auto model = load_checkpoint(c.config, c.views());
        const std::size_t T = std::min<std::size_t>(model->config().max_positions, 70), V = model->config().vocab;
        Transformer::Request whole;
        for (std::size_t t = 0; t < T; ++t) whole.tokens.push_back(std::int32_t((t * 7 + 3) % V));
        const auto all = model->forward(whole);
        for (std::size_t k : {std::size_t(31), std::size_t(33), std::size_t(64)}) {
            CAPTURE(k);
            Transformer::Request prefix;
            prefix.tokens.assign(whole.tokens.begin(), whole.tokens.begin() + long(k));
            const auto part = model->forward(prefix);
            const std::vector<float> rows(all.hidden.data.begin(), all.hidden.data.begin() + long(k * model->config().hidden));
            CHECK(max_relative_error(part.hidden.data, rows) < 1e-5);
            // The last query's attention row, at the same place of both [L, H, T, T] tensors.
            const std::size_t H = model->config().heads;
            for (std::size_t lh = 0; lh < model->config().layers * H; ++lh) {
                const float* a = all.attention.data.data() + (lh * T + k - 1) * T;
                const float* b = part.attention.data.data() + (lh * k + k - 1) * k;
                CHECK(max_relative_error(std::vector<float>(b, b + k), std::vector<float>(a, a + k)) < 1e-5);
                for (std::size_t j = k; j < T; ++j) CHECK(a[j] == 0.f);
            }
        }
        // Greedy decoding with the cache picks what forward() over the growing sequence picks.
        std::vector<std::int32_t> prompt(whole.tokens.begin(), whole.tokens.begin() + 40);
        const auto generated = model->generate(prompt, 5, -1);
        Transformer::Request grow;
        grow.tokens = prompt;
        grow.need_attention = false;
        for (std::int32_t token : generated) {
            const auto out = model->forward(grow);
            const float* last = out.logits.data.data() + (grow.tokens.size() - 1) * V;
            CHECK(std::int32_t(std::max_element(last, last + V) - last) == token);
            grow.tokens.push_back(token);
        }
    }
}

}  // namespace pretrained_fixtures_test
