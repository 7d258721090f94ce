// The research outputs of the one pass against tools/references/hf_research_reference.py (float64 PyTorch from the
// fixtures' weights): the residual stream, the values' norms, the logit lens and a head's weights (a GQA head's).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace pretrained_research_test {

using namespace attnscope;

TEST_CASE("pretrained research outputs match PyTorch", "[pretrained][research]")
{
    for (const char* name : {"gpt2-lm", "llama-gqa", "bert-mlm"}) {
        SECTION(name) {
            const auto c = attnscope_test::read_hf_case(name);
            const auto ref = nlohmann::json::parse(attnscope_test::read_text(attnscope_test::hf_dir(name) + "/research.json"));
            auto model = load_checkpoint(c.config, c.views());
            Transformer::Request r;
            r.tokens = ref.at("ids").get<std::vector<std::int32_t>>();
            r.keep_residual = r.value_norms = r.keep_qkv = true;
            const auto out = model->forward(r);
            const std::size_t L = model->config().layers, T = r.tokens.size(), d = model->config().hidden, vocab = model->config().vocab;
            REQUIRE(out.residual.shape == Shape{L + 1, T, d});
            CHECK(attnscope_test::max_relative_error(out.residual.data, ref.at("residual").get<std::vector<double>>()) < 1e-5);
            CHECK(attnscope_test::max_relative_error(out.residual_mid.data, ref.at("residual_mid").get<std::vector<double>>()) < 1e-5);
            CHECK(attnscope_test::max_relative_error(out.value_norms.data, ref.at("value_norms").get<std::vector<double>>()) < 1e-5);

            const std::size_t k = 3;
            const auto lens = model->logit_lens(r, k);
            const auto probs = ref.at("lens_probabilities").get<std::vector<double>>();
            REQUIRE(lens.probabilities.shape == Shape{L + 1, T, k});
            for (std::size_t row = 0; row < (L + 1) * T; ++row) {
                std::vector<double> p(probs.begin() + std::ptrdiff_t(row * vocab), probs.begin() + std::ptrdiff_t((row + 1) * vocab));
                std::vector<double> sorted = p;
                std::sort(sorted.begin(), sorted.end(), std::greater<double>());
                for (std::size_t i = 0; i < k; ++i) {
                    const std::int32_t id = lens.ids[row * k + i];
                    CHECK(std::fabs(lens.probabilities.data[row * k + i] - p[std::size_t(id)]) < 1e-5);  // float32 logits: ~1e-6 of a logit of ~10
                    CHECK(p[std::size_t(id)] >= sorted[k - 1] - 1e-6);
                }
            }

            // The head's weights give PyTorch's QK = W_Q·W_Kᵀ and OV = W_V·W_O (multiplied here in double).
            const auto& circuit = ref.at("circuit");
            const std::size_t head = circuit.at("head");
            const auto w = model->head_weights(circuit.at("layer"), head);
            CHECK(w.kv_head == head / (model->config().heads / model->config().kv_heads));
            const std::size_t hd = model->config().head_dim;
            REQUIRE(w.q.shape == Shape{d, hd});
            const auto times = [&](const Tensor& x, const Tensor& y) {
                std::vector<float> p(d * d);
                for (std::size_t i = 0; i < d; ++i)
                    for (std::size_t j = 0; j < d; ++j) {
                        double sum = 0;
                        for (std::size_t c = 0; c < hd; ++c) sum += double(x.data[i * hd + c]) * y.data[j * hd + c];
                        p[i * d + j] = float(sum);
                    }
                return p;
            };
            CHECK(attnscope_test::max_relative_error(times(w.q, w.k), circuit.at("qk").get<std::vector<double>>()) < 1e-5);
            CHECK(attnscope_test::max_relative_error(times(w.v, w.o), circuit.at("ov").get<std::vector<double>>()) < 1e-5);
        }
    }
}

}  // namespace pretrained_research_test
