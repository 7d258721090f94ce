// A tied output head (config tie_head, as GPT-2's lm_head is wte): a tied model computes what an untied model whose
// head.weight is a copy of tok_emb.weight computes, through the C++ API and through a model file, and a state dict or
// file that contradicts the flag is refused by name. (The untied model's agreement with PyTorch is
// model_golden_test.cpp's.)
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "attnscope/model_file.hpp"
#include "attnscope/transformer.hpp"
#include "model_files.hpp"
#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace tied_head_test {

using namespace attnscope;
using attnscope_test::file_error_of;
using attnscope_test::random_state;
using attnscope_test::views;
using Catch::Contains;
using nlohmann::ordered_json;

namespace {

const LanguageModelConfig untied{/*vocab*/ 13, /*max_len*/ 8, /*d*/ 8, /*heads*/ 2, /*d_ff*/ 12, /*layers*/ 2};

LanguageModelConfig tied()
{
    LanguageModelConfig c = untied;
    c.tie_head = true;
    return c;
}

using State = std::map<std::string, Tensor>;

// Random parameters of the untied model, its head.weight replaced by a copy of tok_emb.weight.
State copied_head_state()
{
    State s = random_state(LanguageModel(untied), 7);
    s.at("head.weight") = s.at("tok_emb.weight");
    return s;
}

State without_head_weight(State s)
{
    s.erase("head.weight");
    return s;
}

const std::vector<std::int32_t> tokens{1, 4, 12, 4, 0, 9};

// A decoder_lm model file of `state` (float32, the tensors in name order) whose config has `options` added.
std::vector<std::uint8_t> lm_file(const State& state, const ordered_json& options)
{
    ordered_json config = {{"vocab_size", untied.vocab_size}, {"d_model", untied.d_model}, {"n_heads", untied.num_heads},
                           {"n_layers", untied.num_layers},   {"d_ff", untied.d_ff},       {"max_len", untied.max_len},
                           {"causal", true}};
    config.update(options);
    ordered_json vocab = {{"tokenizer", "codepoint"}, {"tokens", {"<unk>", "<bos>"}}, {"unk_id", 0}, {"bos_id", 1},
                          {"specials", {"<unk>", "<bos>"}}};
    for (std::size_t i = 2; i < untied.vocab_size; ++i) vocab["tokens"].push_back(std::string(1, char('a' + i)));
    std::vector<attnscope_test::FakeTensor> tensors;
    for (const auto& entry : state) {
        const auto& d = entry.second.data;
        tensors.push_back({entry.first, "F32", entry.second.shape,
                           std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(float))});
    }
    const std::string file = attnscope_test::rewrite_header(attnscope_test::safetensors_file(tensors), [&](ordered_json& h) {
        h["__metadata__"] = {{"format", model_file_format}, {"kind", "decoder_lm"}, {"config", config.dump()},
                             {"vocab", vocab.dump()}};
    });
    return std::vector<std::uint8_t>(file.begin(), file.end());
}

}  // namespace

TEST_CASE("tied head: the logits of an untied model whose head weight is a copy of tok_emb", "[transformer][tie_head]")
{
    const State copied = copied_head_state();
    LanguageModel reference(untied, views(copied));
    LanguageModel model(tied(), views(without_head_weight(copied)));

    const auto keys = model.state_dict_keys();
    CHECK(std::count(keys.begin(), keys.end(), "head.weight") == 0);
    CHECK(std::count(keys.begin(), keys.end(), "head.bias") == 1);
    CHECK(keys.size() + 1 == reference.state_dict_keys().size());
    CHECK_THROWS_WITH(model.state_dict_shape("head.weight"), Contains("unexpected key 'head.weight'"));

    // The same floats in the same kernels: equal to the bit.
    const auto want = reference.forward(tokens, true), got = model.forward(tokens, true);
    CHECK(got.logits.shape == want.logits.shape);
    CHECK(got.logits.data == want.logits.data);
    CHECK(got.attention.data == want.attention.data);
    CHECK(model.generate({1, 4}, 5, -1) == reference.generate({1, 4}, 5, -1));

    // The head's own random weight gives other logits: the tied model did not ignore the embedding's role.
    LanguageModel own_head(untied, views(random_state(LanguageModel(untied), 7)));
    CHECK(own_head.forward(tokens, false).logits.data != got.logits.data);
}

TEST_CASE("tied head: a state dict with head.weight is refused", "[transformer][tie_head][errors]")
{
    const State copied = copied_head_state();
    CHECK_THROWS_WITH(LanguageModel(tied(), views(copied)),
                      Contains("'head.weight' is in the state dict, but tie_head is true: the head's weight is the "
                               "token embedding, and a tied model has only 'head.bias'"));
    LanguageModel model(tied(), views(without_head_weight(copied)));
    CHECK_THROWS_WITH(model.load_state_dict(views(copied)), Contains("unexpected key 'head.weight'"));
    // The untied model still needs its head weight.
    CHECK_THROWS_WITH(LanguageModel(untied, views(without_head_weight(copied))),
                      Contains("a tensor 'head.weight' of shape [13, 8], which is missing"));
}

TEST_CASE("model files: config.tie_head", "[model_file][tie_head]")
{
    const State copied = copied_head_state();
    const auto untied_file = lm_file(copied, ordered_json::object());  // tie_head absent = false
    const auto tied_file = lm_file(without_head_weight(copied), {{"tie_head", true}});
    const ModelFile a = read_model_file(untied_file.data(), untied_file.size());
    const ModelFile b = read_model_file(tied_file.data(), tied_file.size());
    REQUIRE(a.language_model);
    REQUIRE(b.language_model);
    CHECK_FALSE(a.language_model->config().tie_head);
    CHECK(b.language_model->config().tie_head);
    CHECK(b.language_model->forward(tokens, false).logits.data == a.language_model->forward(tokens, false).logits.data);

    const auto explicit_false = lm_file(copied, {{"tie_head", false}});
    CHECK_FALSE(read_model_file(explicit_false.data(), explicit_false.size()).language_model->config().tie_head);

    const FileError both = file_error_of(lm_file(copied, {{"tie_head", true}}));
    CHECK(both.kind() == FileError::Kind::range);
    CHECK_THAT(both.what(), Catch::StartsWith("__metadata__.config does not match the tensors: 'head.weight' is in the "
                                              "state dict, but tie_head is true"));
    const FileError neither = file_error_of(lm_file(without_head_weight(copied), {{"tie_head", false}}));
    CHECK(neither.kind() == FileError::Kind::range);
    CHECK_THAT(neither.what(), Contains("a tensor 'head.weight' of shape [13, 8], which is missing"));
    for (const ordered_json& bad : {ordered_json("true"), ordered_json(1), ordered_json(nullptr)}) {
        CAPTURE(bad.dump());
        const FileError e = file_error_of(lm_file(without_head_weight(copied), {{"tie_head", bad}}));
        CHECK(e.kind() == FileError::Kind::type);
        CHECK_THAT(e.what(), Catch::StartsWith("__metadata__.config.tie_head: expected a boolean, got "));
    }
}

}  // namespace tied_head_test
