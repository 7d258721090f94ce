// The GRU encoder–decoders: the gate kernel against the double reference, RnnSeq2SeqModel against PyTorch's golden
// cases (tests/fixtures/rnn, tools/references/make_rnn_fixtures.py), and rnn_seq2seq model files that lie.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "attnscope/model_file.hpp"
#include "attnscope/rnn.hpp"
#include "kernels/gru.hpp"
#include "model_files.hpp"
#include "reference/gru.hpp"
#include "test_utils.hpp"

namespace rnn_test {

using namespace attnscope;
using attnscope_test::random_floats;
using nlohmann::json;

namespace {

using arch = xsimd::default_arch;
const std::string fixture_dir = std::string(ATTNSCOPE_MODEL_FIXTURE_DIR) + "/../rnn/";

std::vector<float> floats(const json& rows)
{
    std::vector<float> out;
    for (const json& r : rows) {
        if (r.is_array())
            for (const json& x : r) out.push_back(x.get<float>());
        else
            out.push_back(r.get<float>());
    }
    return out;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b)
{
    if (a.size() != b.size()) return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
    return std::isnan(worst) ? INFINITY : worst;
}

std::vector<std::uint8_t> fixture_bytes(const std::string& name)
{
    return attnscope_test::read_bytes(fixture_dir + name);
}

}  // namespace

TEST_CASE("GRU gates match the double reference of nn.GRU's cell at hidden sizes around the SIMD width", "[rnn][kernels]")
{
    for (std::size_t H : {1, 3, 4, 5, 7, 8, 9, 16, 17, 33})
        for (std::size_t in : {std::size_t(1), std::size_t(6)})
            for (float scale : {1.f, 6.f}) {  // 6: gates saturate (σ and tanh near their limits)
                CAPTURE(H, in, scale);
                const unsigned seed = unsigned(H * 100 + in * 10 + scale);
                const auto x = random_floats(in, seed, -scale, scale);
                const auto h = random_floats(H, seed + 1);
                const auto w_ih = random_floats(3 * H * in, seed + 2, -scale, scale);
                const auto w_hh = random_floats(3 * H * H, seed + 3, -scale / std::sqrt(float(H)), scale / std::sqrt(float(H)));
                const auto b_ih = random_floats(3 * H, seed + 4), b_hh = random_floats(3 * H, seed + 5);
                // The projections in double rounded once to float: the kernel's own error is what is measured.
                std::vector<float> gi(3 * H), gh(3 * H);
                for (std::size_t g = 0; g < 3 * H; ++g) {
                    double si = b_ih[g], sh = b_hh[g];
                    for (std::size_t k = 0; k < in; ++k) si += double(w_ih[g * in + k]) * x[k];
                    for (std::size_t k = 0; k < H; ++k) sh += double(w_hh[g * H + k]) * h[k];
                    gi[g] = float(si);
                    gh[g] = float(sh);
                }
                std::vector<float> got = h;
                kernels::gru_gates{}(arch{}, gi.data(), gh.data(), got.data(), H);
                const auto want = reference::gru_cell(x.data(), in, h.data(), H, w_ih.data(), w_hh.data(), b_ih.data(), b_hh.data());
                // |h'| ≤ 1; float σ/tanh/exp are within a few ulp, the inputs' rounding adds ~|gh|·2^-24.
                double worst = 0.0;
                for (std::size_t j = 0; j < H; ++j) worst = std::max(worst, std::fabs(double(got[j]) - want[j]));
                CHECK(worst < 1e-5);
            }
}

TEST_CASE("RnnSeq2SeqModel matches PyTorch's golden cases (float64 from the float32 weights)", "[rnn][golden]")
{
    for (const char* name : {"tiny-none", "tiny-dot", "dates-gru", "dates-gru-attention"}) {
        CAPTURE(name);
        std::ifstream in(fixture_dir + name + ".json");
        REQUIRE(in);
        const json fixture = json::parse(in);
        const std::string model_path = std::string(ATTNSCOPE_MODEL_DIR) + "/../" + fixture["model"].get<std::string>();
        const auto bytes = attnscope_test::read_bytes(model_path);
        ModelFile file = read_model_file(bytes.data(), bytes.size());
        REQUIRE(file.kind == ModelKind::rnn_seq2seq);
        RnnSeq2SeqModel& model = *file.rnn_seq2seq;
        const bool dot = model.config().attention == RnnAttention::dot;
        for (const json& c : fixture["cases"]) {
            const auto source = c["source"].get<std::vector<std::int32_t>>();
            CAPTURE(source.size());
            const auto out = model.forward(source, c["target"].get<std::vector<std::int32_t>>());
            // Logits of magnitude up to ~10 after a few float32 products of ~100 terms: 1e-4 absolute.
            CHECK(max_abs_diff(out.logits.data, floats(c["logits"])) < 1e-4);
            CHECK(out.attention.data.empty() == !dot);
            if (dot) CHECK(max_abs_diff(out.attention.data, floats(c["attention"])) < 1e-5);

            const auto tr = model.translate(source, c["bos"].get<int>(), c["eos"].get<int>(), 1000);
            REQUIRE(tr.tokens == c["tokens"].get<std::vector<std::int32_t>>());
            CHECK(max_abs_diff(tr.context, floats(c["context"])) < 1e-5);
            CHECK(tr.encoder_states.shape == Shape{source.size(), model.config().hidden_size});
            CHECK(tr.decoder_states.shape == Shape{tr.tokens.size(), model.config().hidden_size});
            CHECK(max_abs_diff(tr.decoder_states.data, floats(c["decoder_states"])) < 1e-5);
            if (dot) {
                CHECK(tr.attention.shape == Shape{tr.tokens.size(), source.size()});
                CHECK(max_abs_diff(tr.attention.data, floats(c["translate_attention"])) < 1e-5);
            } else {
                CHECK(tr.attention.data.empty());
            }
        }
    }
}

TEST_CASE("RnnSeq2SeqModel: calls outside the model are refused", "[rnn]")
{
    const auto bytes = fixture_bytes("tiny-dot.safetensors");
    ModelFile file = read_model_file(bytes.data(), bytes.size());
    RnnSeq2SeqModel& model = *file.rnn_seq2seq;
    CHECK_THROWS_WITH(model.translate({}, 1, 2, 5), Catch::Contains("source: expected from 1 to 16 token ids (the model's limit), got 0"));
    CHECK_THROWS_WITH(model.translate({11}, 1, 2, 5), Catch::Contains("source[0]: expected a token id from 0 to 10, got 11"));
    CHECK_THROWS_WITH(model.translate(std::vector<std::int32_t>(17, 3), 1, 2, 5), Catch::Contains("source: expected from 1 to 16 token ids (the model's limit), got 17"));
    CHECK_THROWS_WITH(model.translate({3}, 8, 2, 5), Catch::Contains("bos[0]: expected a token id from 0 to 7, got 8"));
    CHECK_THROWS_WITH(model.translate({3}, 1, -1, 5), Catch::Contains("eos[0]: expected a token id from 0 to 7, got -1"));
    CHECK_THROWS_WITH(model.forward({3}, std::vector<std::int32_t>(7, 1)), Catch::Contains("target: expected from 1 to 6 token ids (the model's limit), got 7"));
    CHECK(model.translate({3}, 1, 2, 2).tokens.size() <= 2);  // max_steps bounds the steps
    CHECK(model.translate({3}, 1, 2, 0).tokens.empty());
    CHECK_THROWS_WITH(RnnSeq2SeqModel(RnnSeq2SeqConfig{5, 5, 3, 0, 4, 4, RnnAttention::none}), Catch::Contains("hidden_size must be at least 1"));
}

namespace {

// tests/fixtures/rnn/<name> with its safetensors header edited (the data section unchanged).
template <class Edit>
std::vector<std::uint8_t> edited(const std::string& name, Edit edit)
{
    const auto b = fixture_bytes(name);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | b[std::size_t(i)];
    json h = json::parse(b.begin() + 8, b.begin() + 8 + std::ptrdiff_t(n));
    edit(h);
    const std::string text = h.dump();
    std::vector<std::uint8_t> out(8 + text.size() + (b.size() - 8 - n));
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = std::uint8_t(std::uint64_t(text.size()) >> (8 * i));
    std::copy(text.begin(), text.end(), out.begin() + 8);
    std::copy(b.begin() + 8 + std::ptrdiff_t(n), b.end(), out.begin() + 8 + std::ptrdiff_t(text.size()));
    return out;
}

template <class Edit>
std::vector<std::uint8_t> edited_config(const std::string& name, Edit edit)
{
    return edited(name, [&](json& h) {
        json c = json::parse(h["__metadata__"]["config"].get<std::string>());
        edit(c);
        h["__metadata__"]["config"] = c.dump();
    });
}

}  // namespace

TEST_CASE("rnn_seq2seq model files that lie are refused before anything is built", "[rnn][model_file]")
{
    for (const char* name : {"tiny-none.safetensors", "tiny-dot.safetensors"}) {
        const auto bytes = fixture_bytes(name);
        CHECK(read_model_file(bytes.data(), bytes.size()).rnn_seq2seq);
    }
    using Kind = FileError::Kind;
    const FileError hidden = attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c["hidden"] = 10; }));
    CHECK(hidden.kind() == Kind::range);
    CHECK_THAT(hidden.what(), Catch::Contains("the config implies shape [30, 4] for 'encoder.weight_ih_l0', got [27, 4]"));
    // The fixed-context file claiming dot attention: combine would read [context; h], twice the columns it has.
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-none.safetensors", [](json& c) { c["attention"] = "dot"; })).what(),
               Catch::Contains("shape [5, 10] for 'combine.weight', got [5, 5]"));
    // Sizes whose products wrap a 32-bit size_t (3 · 2^24 · 2^24 floats) are refused at the first shape compared.
    const FileError wrap = attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) {
        c["hidden"] = 16777216;
        c["emb"] = 16777216;
        c["src_vocab_size"] = 16777216;
    }));
    CHECK(wrap.kind() == Kind::range);
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c["hidden"] = 4294967296ull; })).what(),
               Catch::Contains("config.hidden: expected an integer from 1 to 16777216, got 4294967296"));
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c["max_tgt_len"] = 1; })).what(),
               Catch::Contains("config.max_tgt_len: expected an integer from 2"));
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c["attention"] = "multihead"; })).what(),
               Catch::Contains("config.attention: expected \"none\" or \"dot\", got \"multihead\""));
    CHECK(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c["attention"] = 1; })).kind() == Kind::type);
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c.erase("attention"); })).what(),
               Catch::Contains("config.attention: missing"));
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c["cell"] = "lstm"; })).what(),
               Catch::Contains("config.cell: attnscope implements \"gru\""));
    CHECK_THAT(attnscope_test::file_error_of(edited_config("tiny-dot.safetensors", [](json& c) { c.erase("emb"); })).what(),
               Catch::Contains("config.emb: missing"));
    CHECK_THAT(attnscope_test::file_error_of(edited("tiny-dot.safetensors", [](json& h) {
                   h["__metadata__"]["named_heads"] = R"([{"layer":0,"head":0,"name":"x","metric":"m","score":1}])";
               })).what(),
               Catch::Contains("named_heads: an rnn_seq2seq model has no heads to name"));
    // A tensor under another name: the model's own name is missing; an extra tensor is unexpected.
    CHECK_THAT(attnscope_test::file_error_of(edited("tiny-dot.safetensors", [](json& h) {
                   h["out.bias2"] = h["out.bias"];
                   h.erase("out.bias");
               })).what(),
               Catch::Contains("'out.bias'") && Catch::Contains("missing"));
    // A shape claiming more floats than the bytes it spans.
    CHECK(attnscope_test::file_error_of(edited("tiny-dot.safetensors", [](json& h) {
              h["encoder.weight_ih_l0"]["shape"] = {50331648, 16777216};
          })).kind() == Kind::range);
}

}  // namespace rnn_test
