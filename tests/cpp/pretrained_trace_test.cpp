// trace(): the numbers of one head at one query, recorded inside forward(), agree with forward()'s attention and
// with each other (scores = q·k, weights = softmax over the visible keys, context = weights·values), and show the
// family's parts: GQA's shared K/V head, RoPE's rotation, the window, BERT's padding and post-norm.
#include <catch2/catch.hpp>

#include <cmath>

#include "pretrained_files.hpp"
#include "test_utils.hpp"

namespace pretrained_trace_test {

using namespace attnscope;

namespace {

Transformer::Request first_request(const attnscope_test::HfCase& c)
{
    const auto& input = c.reference.at("inputs").at(c.reference.at("inputs").size() - 1);
    Transformer::Request r;
    r.tokens = input.at("input_ids").get<std::vector<std::int32_t>>();
    if (input.contains("attention_mask")) r.attention_mask = input.at("attention_mask").get<std::vector<std::uint8_t>>();
    if (input.contains("token_type_ids")) r.token_type_ids = input.at("token_type_ids").get<std::vector<std::int32_t>>();
    return r;
}

double norm_of(const std::vector<float>& v)
{
    double s = 0;
    for (float x : v) s += double(x) * x;
    return std::sqrt(s);
}

}  // namespace

TEST_CASE("trace agrees with forward and with itself", "[pretrained][trace]")
{
    for (const std::string& name : {std::string("llama-gqa"), std::string("qwen3-qknorm"), std::string("mistral-window"),
                                    std::string("bert-mlm"), std::string("gpt2-lm")}) {
        CAPTURE(name);
        const auto c = attnscope_test::read_hf_case(name);
        auto model = load_checkpoint(c.config, c.views());
        const ModelConfig& cfg = model->config();
        const plan::Stack& stack = model->plan().main();
        const Transformer::Request r = first_request(c);
        const std::size_t T = r.tokens.size(), hd = cfg.head_dim, L = cfg.layers, H = cfg.heads;
        const auto out = model->forward(r);
        for (std::size_t layer = 0; layer < L; ++layer)
            for (std::size_t head = 0; head < H; ++head) {
                const std::size_t query = (layer + 3 * head + 1) % T;
                CAPTURE(layer, head, query);
                const AttentionTrace t = model->trace(r, AttentionKind::self, layer, head, query);
                CHECK(t.kv_head == head / (H / cfg.kv_heads));
                // The weights are forward()'s own row, bit for bit.
                const float* row = out.attention.data.data() + ((layer * H + head) * T + query) * T;
                CHECK(t.weights.data == std::vector<float>(row, row + T));
                // Visible: causal, the window, padding.
                double total = 0;
                std::vector<double> expected(T, 0.0);
                double largest = -INFINITY;
                for (std::size_t j = 0; j < T; ++j) {
                    bool visible = !cfg.causal || j <= query;
                    if (stack.layer(layer).self.window && query - j >= stack.layer(layer).self.window) visible = false;
                    if (!r.attention_mask.empty() && r.attention_mask[j] == 0) visible = false;
                    CHECK(t.visible[j] == (visible ? 1 : 0));
                    if (!visible) CHECK(t.weights.data[j] == 0.f);
                    total += t.weights.data[j];
                    // scores = q·k over the final (rotated, normed) vectors.
                    double dot = 0;
                    for (std::size_t i = 0; i < hd; ++i) dot += double(t.query_final.data[i]) * t.keys_final.data[j * hd + i];
                    CHECK(std::fabs(dot - t.scores.data[j]) <= 1e-5 * (1 + std::fabs(dot)));
                    if (visible) largest = std::max(largest, double(t.scores.data[j]) * t.scale);
                }
                CHECK(std::fabs(total - 1.0) < 1e-5);
                double sum = 0;
                for (std::size_t j = 0; j < T; ++j)
                    if (t.visible[j]) sum += expected[j] = std::exp(double(t.scores.data[j]) * t.scale - largest);
                for (std::size_t j = 0; j < T; ++j) CHECK(std::fabs(expected[j] / sum - t.weights.data[j]) < 1e-6);
                CHECK(t.scale == Approx(1.0 / std::sqrt(double(hd))));  // none of these cases scales by the layer
                // context = weights · values.
                for (std::size_t i = 0; i < hd; ++i) {
                    double ctx = 0;
                    for (std::size_t j = 0; j < T; ++j) ctx += double(t.weights.data[j]) * t.values.data[j * hd + i];
                    CHECK(std::fabs(ctx - t.context.data[i]) < 1e-5);
                }
                // The parts: RoPE rotates pairs (norm kept) unless QK-norm rescales first; learned positions leave q.
                if (!stack.layer(layer).self.rope) CHECK(t.query_final.data == t.query_raw.data);
                else if (stack.layer(layer).self.qk_norm == plan::QkNorm::none) CHECK(norm_of(t.query_final.data) == Approx(norm_of(t.query_raw.data)).epsilon(1e-5));
                if (stack.layer(layer).attn_norms.after.present()) CHECK(t.attention_input.data == t.layer_input.data);
                CHECK(t.head_output.shape == Shape{cfg.hidden});
                // GQA: the heads of one group read the same keys, in place.
                if (head % (H / cfg.kv_heads) != 0) CHECK(t.keys_final.data == model->trace(r, AttentionKind::self, layer, head - 1, query).keys_final.data);
            }
        // The attention's output row is the same in every head's trace and, where out_proj has no bias (Llama,
        // Mistral, Qwen), the sum of the heads' outputs; with a bias they differ by the same vector at every query.
        for (std::size_t layer = 0; layer < L; ++layer) {
            std::vector<double> sum(cfg.hidden, 0.0);
            const AttentionTrace first = model->trace(r, AttentionKind::self, layer, 0, T - 1);
            REQUIRE(first.attention_output.shape == Shape{cfg.hidden});
            for (std::size_t head = 0; head < H; ++head) {
                const AttentionTrace t = model->trace(r, AttentionKind::self, layer, head, T - 1);
                CHECK(t.attention_output.data == first.attention_output.data);
                for (std::size_t o = 0; o < cfg.hidden; ++o) sum[o] += t.head_output.data[o];
            }
            if (!stack.layer(layer).self.out_bias) CHECK(attnscope_test::max_relative_error(first.attention_output.data, sum) < 1e-5);
        }
        // An ablated head's context and contribution are zero; its weights are still shown.
        Transformer::Request ablated = r;
        ablated.ablate.assign(L * H, 0);
        ablated.ablate[0] = 1;
        const AttentionTrace t = model->trace(ablated, AttentionKind::self, 0, 0, T - 1);
        CHECK(t.context.data == std::vector<float>(hd, 0.f));
        CHECK(t.head_output.data == std::vector<float>(cfg.hidden, 0.f));
        CHECK(t.weights.data == model->trace(r, AttentionKind::self, 0, 0, T - 1).weights.data);
        CHECK(model->forward(ablated).hidden.data != out.hidden.data);
    }
}

}  // namespace pretrained_trace_test
