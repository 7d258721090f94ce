// Hugging Face encoder–decoders (BART, Marian, T5: tests/fixtures/hf/seq2seq-cases.json, made by
// tools/references/make_hf_checkpoints.py from HF's modeling_bart.py, modeling_marian.py and modeling_t5.py): logits
// to 1e-4 of their largest magnitude and the encoder's, the decoder's and cross-attention's maps to 2e-5; translate()
// gives the reference's greedy tokens; trace() of each attention is forward()'s row; every config field they read is
// refused by name when hostile.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "checkpoint_refusals.hpp"
#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace pretrained_seq2seq_test {

using namespace attnscope;
using attnscope_test::HfCase;
using attnscope_test::max_relative_error;
using attnscope_test::refusals::config_of;
using attnscope_test::refusals::refuses;
using attnscope_test::refusals::with;
using Json = nlohmann::json;

namespace {

std::vector<float> data_of(const Json& t) { return t.at("data").get<std::vector<float>>(); }

double max_abs_error(const std::vector<float>& a, const std::vector<float>& e)
{
    if (a.size() != e.size()) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::isnan(a[i]) ? INFINITY : std::fabs(double(a[i]) - double(e[i])));
    return worst;
}

// The families read so far (each case of seq2seq-cases.json names its family).
const std::vector<std::string> families = {"bart", "marian", "t5"};

std::vector<std::string> seq2seq_cases()
{
    std::vector<std::string> names;
    for (const auto& c : Json::parse(attnscope_test::read_text(attnscope_test::hf_dir("seq2seq-cases.json"))))
        if (std::find(families.begin(), families.end(), c.at("family").get<std::string>()) != families.end()) names.push_back(c.at("case"));
    return names;
}

void check_map(const Tensor& got, const Json& expected, const char* what)
{
    CAPTURE(what);
    REQUIRE(got.shape == expected.at("shape").get<Shape>());
    CHECK(max_abs_error(got.data, data_of(expected)) <= 2e-5);
}

// The fields BartConfig and MarianConfig share, read by post_norm_seq2seq.cpp.
void refuses_bart_fields(const Json& config)
{
    using K = FileError::Kind;
    refuses(with(config, "d_model", "16"), K::type, "d_model: expected an integer, got a string");
    refuses(with(config, "d_model", 0), K::range, "d_model: expected an integer from 1");
    refuses(with(config, "encoder_attention_heads", 3), K::range, "encoder_attention_heads: expected a divisor of d_model (16), got 3");
    refuses(with(config, "decoder_attention_heads", 5), K::range, "decoder_attention_heads: expected a divisor of d_model (16), got 5");
    refuses(with(config, "encoder_layers", -1), K::range, "encoder_layers: expected an integer from 1");
    refuses(with(config, "decoder_layers", 2.5), K::range, "decoder_layers: expected an integer");
    refuses(with(config, "encoder_ffn_dim", true), K::type, "encoder_ffn_dim: expected an integer, got a boolean");
    refuses(with(config, "decoder_ffn_dim", 0), K::range, "decoder_ffn_dim");
    refuses(with(config, "max_position_embeddings", 0), K::range, "max_position_embeddings: expected an integer from 1");
    refuses(with(config, "vocab_size", 4294967296.0), K::range, "vocab_size");
    refuses(with(config, "activation_function", "tanh"), K::range, "activation_function: \"tanh\" is not supported");
    refuses(with(config, "scale_embedding", "yes"), K::type, "scale_embedding: expected a boolean");
    refuses(with(config, "tie_word_embeddings", 1), K::type, "tie_word_embeddings: expected a boolean");
    refuses(with(config, "is_encoder_decoder", false), K::range, "is_encoder_decoder: false is not supported");
    refuses(with(config, "decoder_start_token_id", 48), K::range, "decoder_start_token_id: expected a token id from 0 to 47");
    refuses(with(config, "decoder_start_token_id", "0"), K::type, "decoder_start_token_id: expected a token id");
    refuses(with(config, "eos_token_id", -1), K::range, "eos_token_id: expected a token id from 0 to 47");
    refuses(with(config, "quantization_config", Json::object()), K::range, "quantization_config");
    refuses(with(config, "architectures", Json{"T5ForConditionalGeneration"}), K::range, "architectures: \"T5ForConditionalGeneration\" is not a class");
}

}  // namespace

TEST_CASE("encoder-decoder checkpoints: logits, three attentions and greedy translation match the reference", "[pretrained][seq2seq]")
{
    const std::vector<std::string> names = seq2seq_cases();
    REQUIRE(names.size() >= 2 * families.size());
    for (const std::string& name : names) {
        CAPTURE(name);
        const HfCase c = attnscope_test::read_hf_case(name);
        const std::unique_ptr<Transformer> m = load_checkpoint(c.config, c.views());
        CHECK(m->plan().seq2seq());
        for (const Json& input : c.reference.at("inputs")) {
            Transformer::Request r;
            r.source = input.at("source_ids").get<std::vector<std::int32_t>>();
            r.tokens = input.at("target_ids").get<std::vector<std::int32_t>>();
            const Transformer::Output out = m->forward(r);
            REQUIRE(input.contains("logits"));
            REQUIRE(out.logits.shape == input.at("logits").at("shape").get<Shape>());
            CHECK(max_relative_error(out.logits.data, data_of(input.at("logits"))) <= 1e-4);
            CHECK(max_relative_error(out.hidden.data, data_of(input.at("hidden"))) <= 1e-4);
            check_map(out.encoder_attention, input.at("encoder_attention"), "encoder");
            check_map(out.attention, input.at("decoder_attention"), "decoder");
            check_map(out.cross_attention, input.at("cross_attention"), "cross");
            // trace(): one head at one query of each attention is forward()'s row.
            const Shape cs = out.cross_attention.shape;
            const std::size_t layer = cs[0] - 1, head = cs[1] - 1, query = cs[2] - 1, S = cs[3], T = cs[2];
            const AttentionTrace cross = m->trace(r, AttentionKind::cross, layer, head, query);
            const std::vector<float> row(out.cross_attention.data.begin() + std::ptrdiff_t(((layer * cs[1] + head) * T + query) * S),
                                         out.cross_attention.data.begin() + std::ptrdiff_t(((layer * cs[1] + head) * T + query + 1) * S));
            CHECK(max_abs_error(cross.weights.data, row) <= 1e-6);
            const AttentionTrace encoder = m->trace(r, AttentionKind::encoder, 0, 0, S - 1);
            const std::vector<float> erow(out.encoder_attention.data.begin() + std::ptrdiff_t((S - 1) * S),
                                          out.encoder_attention.data.begin() + std::ptrdiff_t(S * S));
            CHECK(max_abs_error(encoder.weights.data, erow) <= 1e-6);
        }
        const Json& t = c.reference.at("translate");
        const Transformer::Translation tr = m->translate(t.at("source_ids").get<std::vector<std::int32_t>>(), m->plan().decoder_start,
                                                         m->plan().eos, t.at("max_steps").get<std::size_t>());
        CHECK(tr.tokens == t.at("tokens").get<std::vector<std::int32_t>>());
    }
}


TEST_CASE("bart config: every field it reads is refused by name when hostile", "[pretrained][seq2seq][errors]")
{
    refuses_bart_fields(config_of("bart-scaled"));
}

TEST_CASE("marian config: every field it reads is refused by name when hostile", "[pretrained][seq2seq][errors]")
{
    using K = FileError::Kind;
    const Json marian = config_of("marian-mt");
    refuses_bart_fields(marian);
    refuses(with(marian, "share_encoder_decoder_embeddings", false), K::range, "share_encoder_decoder_embeddings: false is not supported");
    refuses(with(marian, "share_encoder_decoder_embeddings", "no"), K::type, "share_encoder_decoder_embeddings: expected a boolean");
    refuses(with(marian, "decoder_vocab_size", 40), K::range, "decoder_vocab_size: 40 is not supported");
    refuses(with(marian, "decoder_vocab_size", "48"), K::type, "decoder_vocab_size: expected an integer");
    refuses(with(with(marian, "decoder_start_token_id", nullptr), "pad_token_id", 1e9), K::range, "pad_token_id");
    Json no_start = with(marian, "pad_token_id", 58100);
    no_start.erase("decoder_start_token_id");
    refuses(no_start, K::range, "pad_token_id: expected a token id from 0 to 47");
    no_start.erase("pad_token_id");
    refuses(no_start, K::range, "pad_token_id: missing, and its default 58100 is not a token id of vocab_size 48");
}

TEST_CASE("t5 config: every field it reads is refused by name when hostile", "[pretrained][seq2seq][errors]")
{
    using K = FileError::Kind;
    const Json t5 = config_of("t5-relu");
    refuses(with(t5, "d_kv", 0), K::range, "d_kv: expected an integer from 1");
    refuses(with(t5, "num_heads", "3"), K::type, "num_heads: expected an integer");
    refuses(with(t5, "d_ff", -2), K::range, "d_ff");
    refuses(with(t5, "num_layers", 0), K::range, "num_layers");
    refuses(with(t5, "num_decoder_layers", 1.5), K::range, "num_decoder_layers");
    refuses(with(t5, "relative_attention_num_buckets", 2), K::range, "relative_attention_num_buckets: expected an integer from 4");
    refuses(with(t5, "relative_attention_num_buckets", 1 << 20), K::range, "relative_attention_num_buckets");
    refuses(with(t5, "relative_attention_max_distance", 4), K::range,
            "relative_attention_max_distance: expected more than relative_attention_num_buckets / 2 (4), got 4");
    refuses(with(t5, "relative_attention_max_distance", "128"), K::type, "relative_attention_max_distance: expected an integer");
    refuses(with(t5, "layer_norm_epsilon", -1), K::range, "layer_norm_epsilon");
    refuses(with(t5, "feed_forward_proj", "gated-gelu-fast"), K::range, "feed_forward_proj: \"gated-gelu-fast\" is not supported");
    refuses(with(t5, "feed_forward_proj", "double-relu"), K::range, "feed_forward_proj: \"double-relu\" is not supported");
    refuses(with(t5, "feed_forward_proj", "gated-tanh"), K::range, "the activation \"tanh\" is not supported");
    refuses(with(t5, "feed_forward_proj", 3), K::type, "feed_forward_proj: expected a string");
    refuses(with(t5, "is_gated_act", true), K::range, "is_gated_act: true disagrees with feed_forward_proj \"relu\"");
    refuses(with(t5, "dense_act_fn", "gelu"), K::range, "dense_act_fn: \"gelu\" disagrees with feed_forward_proj \"relu\"");
    refuses(with(t5, "n_positions", 0), K::range, "n_positions");
    refuses(with(t5, "tie_word_embeddings", "true"), K::type, "tie_word_embeddings: expected a boolean");
    refuses(with(t5, "is_encoder_decoder", false), K::range, "is_encoder_decoder: false is not supported");
    refuses(with(t5, "decoder_start_token_id", 100), K::range, "decoder_start_token_id: expected a token id from 0 to 47");
    refuses(with(t5, "eos_token_id", Json::array({1})), K::type, "eos_token_id: expected a token id");
    refuses(with(t5, "architectures", Json{"BartModel"}), K::range, "architectures: \"BartModel\" is not a class of model_type \"t5\"");
}

}  // namespace pretrained_seq2seq_test
