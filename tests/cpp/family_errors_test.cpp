// Hostile config.json fields of the families added after the first six (gpt_neox, phi3, olmo2): each refused by name
// (checkpoint_refusals.hpp), and their options reaching the plan.
#include <catch2/catch.hpp>

#include <cmath>

#include "checkpoint_refusals.hpp"

namespace family_errors_test {

using namespace attnscope;
using namespace attnscope_test::refusals;
using attnscope_test::HfCase;

TEST_CASE("config.json of gpt_neox: its own fields checked and refused by name", "[pretrained][errors][gpt_neox]")
{
    using K = FileError::Kind;
    const Json neox = config_of("gpt-neox-parallel");  // hidden 32, 2 heads of 16
    refuses(with(neox, "rotary_pct", "0.25"), K::type, "rotary_pct: expected a number, got a string");
    refuses(with(neox, "rotary_pct", 1.5), K::range, "rotary_pct: expected a number from 0 to 1");
    refuses(with(neox, "rotary_pct", -0.25), K::range, "rotary_pct");
    // int(16 · 0.1875) = 3 features: RoPE rotates pairs.
    refuses(with(neox, "rotary_pct", 0.1875), K::range, "rotary_pct: 0.1875 rotates 3 features of a head of 16");
    refuses(with(neox, "rotary_emb_base", 1), K::range, "rotary_emb_base");
    refuses(with(neox, "rotary_emb_base", "10000"), K::type, "rotary_emb_base: expected a number");
    refuses(with(neox, "rope_parameters", Json{{"rope_type", "linear"}, {"rope_theta", 10000}}), K::range, "rope_parameters.rope_type:");
    refuses(with(neox, "rope_parameters", Json{{"rope_theta", 10000}, {"partial_rotary_factor", 0.25}}), K::range,
            "rope_parameters.partial_rotary_factor: is not read yet");
    // Its plain form: the theta, before rotary_emb_base.
    CHECK(CheckpointLoader(with(neox, "rope_parameters", Json{{"rope_type", "default"}, {"rope_theta", 20000.0}}).dump()).plan().main().layer(0).self.rotary.theta ==
          20000.0);
    refuses(with(neox, "attn_logit_softcapping", 50.0), K::range, "attn_logit_softcapping: 50.0 is not supported");
    refuses(with(neox, "use_parallel_residual", "true"), K::type, "use_parallel_residual: expected a boolean");
    refuses(with(neox, "attention_bias", 1), K::type, "attention_bias: expected a boolean");
    refuses(with(neox, "num_attention_heads", 3), K::range, "num_attention_heads: expected a divisor of hidden_size (32), got 3");
    refuses(with(neox, "layer_norm_eps", 0), K::range, "layer_norm_eps");
    refuses(with(neox, "hidden_act", "gelu_fast"), K::range, "hidden_act: \"gelu_fast\" is not supported");
    refuses(with(neox, "rope_scaling", Json{{"type", "dynamic"}, {"factor", 2.0}}), K::range, "rope_scaling.type: \"dynamic\" is not supported");
    refuses(with(neox, "architectures", Json{"GPT2LMHeadModel"}), K::range,
            "architectures: \"GPT2LMHeadModel\" is not a class of model_type \"gpt_neox\" read here (expected GPTNeoXForCausalLM, GPTNeoXModel)");
    // The plan: a fraction of each head rotates; parallel or sequential residuals; biases as attention_bias says.
    const plan::Plan p = CheckpointLoader(neox.dump()).plan();
    CHECK(p.main().layer(0).parallel);
    CHECK(p.main().layer(0).self.rotary.dims == 4);
    CHECK(p.main().layer(0).self.qkv_bias);
    CHECK_FALSE(p.head.tied);
    const plan::Plan seq = CheckpointLoader(with(with(neox, "use_parallel_residual", false), "attention_bias", false).dump()).plan();
    CHECK_FALSE(seq.main().layer(0).parallel);
    CHECK_FALSE(seq.main().layer(0).self.qkv_bias);
    CHECK_FALSE(seq.main().layer(0).self.out_bias);
    CHECK(seq.main().layer(0).mlp.bias);
    // rotary_pct 0: no feature rotates (HF's rotary_ndims 0), so no positions at all.
    CHECK_FALSE(CheckpointLoader(with(neox, "rotary_pct", 0).dump()).plan().main().layer(0).self.rope);
}

TEST_CASE("config.json of phi3: partial rotary, LongRoPE and its factors checked and refused by name", "[pretrained][errors][phi3]")
{
    using K = FileError::Kind;
    const Json phi3 = config_of("phi3-longrope-partial");  // head_dim 8, partial_rotary_factor 0.75: 3 frequencies
    const Json scaling = phi3.at("rope_scaling");
    const auto with_scaling = [&](const std::string& key, const Json& value) { return with(phi3, "rope_scaling", with(scaling, key, value)); };
    Json no_short = scaling;
    no_short.erase("short_factor");
    refuses(with(phi3, "partial_rotary_factor", "0.75"), K::type, "partial_rotary_factor: expected a number, got a string");
    refuses(with(phi3, "partial_rotary_factor", 0), K::range, "partial_rotary_factor: expected a number above 0 to 1, got 0");
    refuses(with(phi3, "partial_rotary_factor", 1.5), K::range, "partial_rotary_factor: expected a number above 0 to 1");
    refuses(with(phi3, "partial_rotary_factor", 0.375), K::range, "partial_rotary_factor: 0.375 rotates 3 features of a head of 8");
    refuses(with_scaling("type", "linear"), K::range,
            "rope_scaling.type: \"linear\" is not supported (expected \"longrope\", or its older names \"su\" and \"yarn\")");
    refuses(with_scaling("type", "dynamic"), K::range, "rope_scaling.type: \"dynamic\" is not supported");
    refuses(with(phi3, "rope_scaling", no_short), K::range, "rope_scaling.short_factor: missing (required by \"longrope\")");
    refuses(with_scaling("long_factor", "1, 2, 3"), K::type, "rope_scaling.long_factor: expected an array of numbers, got a string");
    refuses(with_scaling("long_factor", Json{1.0, 2.0}), K::range,
            "rope_scaling.long_factor: expected 3 numbers (one per rotated pair of features), got 2");
    refuses(with_scaling("short_factor", Json{1.0, "2", 3.0}), K::type, "rope_scaling.short_factor[1]: expected a number, got a string");
    refuses(with_scaling("short_factor", Json{1.0, 0.0, 3.0}), K::range, "rope_scaling.short_factor[1]: expected a number from 1/1024 to 1000000");
    // A factor divides its pair's frequency: 1e-40 passed a floor of 0, and the logits came out NaN.
    refuses(with_scaling("short_factor", Json{1e-40, 1.0, 3.0}), K::range, "rope_scaling.short_factor[0]: expected a number from 1/1024 to 1000000");
    refuses(with_scaling("long_factor", Json{1.0, 1e-300, 3.0}), K::range, "rope_scaling.long_factor[1]: expected a number from 1/1024 to 1000000");
    // transformers 5's rope_parameters: refused, never run with the default theta in its place.
    refuses(with(phi3, "rope_parameters", Json{{"rope_type", "default"}, {"rope_theta", 500000.0}}), K::range,
            "config.json: rope_parameters: given with rope_scaling");
    refuses(with(with(phi3, "rope_scaling", nullptr), "rope_parameters", Json{{"rope_type", "longrope"}, {"rope_theta", 10000.0}}), K::range,
            "config.json: rope_parameters.rope_type: \"longrope\" is not read in rope_parameters yet");
    refuses(with_scaling("attention_factor", -1), K::range, "rope_scaling.attention_factor: expected a number above 0");
    refuses(with(phi3, "original_max_position_embeddings", 1), K::range, "original_max_position_embeddings: expected an integer from 2");
    refuses(with(phi3, "original_max_position_embeddings", "6"), K::type, "original_max_position_embeddings: expected an integer, got a string");
    refuses(with(phi3, "sliding_window", "5"), K::type, "sliding_window: expected an integer, got a string");
    refuses(with(phi3, "sliding_window", 0), K::range, "sliding_window: expected an integer from 1");
    // The plan: 6 of 8 features rotate; the long factors from position 6 on; cos and sin × sqrt(1 + ln(4096/6) / ln 6).
    const plan::Rope r = CheckpointLoader(phi3.dump()).plan().main().layer(0).self.rotary;
    CHECK(r.dims == 6);
    CHECK(r.scaling == plan::RopeScaling::longrope);
    CHECK(r.original_max_positions == 6);
    CHECK(r.long_factor == std::vector<double>{0.25, 0.5, 4.0});
    CHECK(r.attention_factor == Approx(std::sqrt(1 + std::log(4096.0 / 6) / std::log(6.0))));
    // Phi3Config renames the older "su" and "yarn" to "longrope"; a given attention_factor wins over the computed one.
    CHECK(CheckpointLoader(with_scaling("type", "su").dump()).plan().main().layer(0).self.rotary.scaling == plan::RopeScaling::longrope);
    CHECK(CheckpointLoader(with_scaling("attention_factor", 1.25).dump()).plan().main().layer(0).self.rotary.attention_factor == 1.25);
    // Without rope_scaling, no scaling; the families that rotate whole heads still refuse partial_rotary_factor.
    CHECK(CheckpointLoader(with(phi3, "rope_scaling", nullptr).dump()).plan().main().layer(0).self.rotary.scaling == plan::RopeScaling::none);
    refuses(with(config_of("llama-gqa"), "partial_rotary_factor", 0.5), K::range, "partial_rotary_factor: 0.5 is not supported");
}

TEST_CASE("olmo2: norms on the sublayer outputs and q_norm/k_norm over the whole projections, in the plan and the files", "[pretrained][errors][olmo2]")
{
    const HfCase olmo2 = attnscope_test::read_hf_case("olmo2-outnorm");  // 4 heads of 6, 2 KV heads
    const plan::Plan p = CheckpointLoader(olmo2.config).plan();
    const plan::Layer& layer = p.main().layer(0);
    CHECK_FALSE(layer.attn_norms.in.present());
    CHECK(layer.attn_norms.out.present());
    CHECK_FALSE(layer.mlp_norms.in.present());
    CHECK(layer.mlp_norms.out.present());
    CHECK(layer.self.qk_norm == plan::QkNorm::whole);
    Json config = Json::parse(olmo2.config);
    config.erase("rms_norm_eps");
    CHECK(CheckpointLoader(config.dump()).plan().main().final_norm.eps == 1e-5f);  // Olmo2Config's default, not Llama's 1e-6
    refuses(with(Json::parse(olmo2.config), "rms_norm_eps", "1e-6"), FileError::Kind::type, "rms_norm_eps: expected a number, got a string");
    // q_norm is as wide as q_proj's output (24), not one head (6); Llama's input_layernorm is not an OLMo 2 tensor.
    const std::string file = "model.safetensors";
    std::string message = load_error(olmo2, file, header_edit([](Header& h) { h["model.layers.0.self_attn.q_norm.weight"]["shape"] = {4, 6}; }));
    CHECK_THAT(message, Catch::Contains("'model.layers.0.self_attn.q_norm.weight': expected shape [24] (from config.json), got [4, 6]"));
    message = load_error(olmo2, file, header_edit([](Header& h) {
        rename(h, "model.layers.1.post_attention_layernorm.weight", "model.layers.1.input_layernorm.weight");
    }));
    CHECK_THAT(message, Catch::Contains("'model.layers.1.input_layernorm.weight' is not a tensor of a olmo2 checkpoint with this config"));
}

}  // namespace family_errors_test
