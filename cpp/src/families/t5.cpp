// T5 (HF configuration_t5.py; modeling_t5.py's T5LayerNorm, T5Attention, T5DenseActDense, T5DenseGatedActDense,
// T5Stack, T5ForConditionalGeneration): pre-norm blocks of an RMSNorm, attention without biases and without the
// 1/sqrt(d_kv) scale, a relative-position bias from buckets (bidirectional in the encoder, causal in the decoder; the
// table is block 0's, shared by its stack; cross-attention has none), ReLU or gated feed-forward, a `shared` token
// table, and a tied head that reads the decoder output times d_model^-0.5.
#include <cmath>

#include "common.hpp"

namespace attnscope {
namespace families {
namespace {

using model::Layout;
using model::Part;

// feed_forward_proj (T5Config.__init__): "act" or "gated-act"; "gated-gelu" means gelu_new. The derived
// dense_act_fn and is_gated_act are saved too, and must say the same.
plan::Mlp feed_forward(const Config& f, std::size_t inner)
{
    const std::string proj = f.text("feed_forward_proj", "relu");
    const std::size_t dash = proj.find('-');
    const bool gated = dash != std::string::npos && proj.substr(0, dash) == "gated";
    const std::string act = proj == "gated-gelu" ? "gelu_new" : gated ? proj.substr(dash + 1) : proj;
    if ((dash != std::string::npos && !gated) || act.find('-') != std::string::npos || act.empty())
        f.fail({"feed_forward_proj: \"", proj, "\" is not supported (expected \"act\" or \"gated-act\", e.g. \"relu\" or \"gated-gelu\")"});
    plan::Activation a = plan::Activation::relu;
    if (act == "gelu") a = plan::Activation::gelu_erf;
    else if (act == "gelu_new" || act == "gelu_pytorch_tanh") a = plan::Activation::gelu_tanh;
    else if (act == "silu" || act == "swish") a = plan::Activation::silu;
    else if (act != "relu") f.fail({"feed_forward_proj: \"", proj, "\": the activation \"", act, "\" is not supported (expected relu, gelu, gelu_new, silu)"});
    if (f.has("is_gated_act") && f.flag("is_gated_act", gated) != gated)
        f.fail({"is_gated_act: ", gated ? "false" : "true", " disagrees with feed_forward_proj \"", proj, "\""});
    if (f.has("dense_act_fn") && f.text("dense_act_fn", "") != act)
        f.fail({"dense_act_fn: ", f.get("dense_act_fn").excerpt(), " disagrees with feed_forward_proj \"", proj, "\" (", act, ")"});
    return {gated, a, inner, false};
}

plan::Plan read(const Config& f)
{
    f.require_absent("quantization_config", "quantized weights are not read");
    f.require_flag("is_encoder_decoder", true, "this family is read as an encoder-decoder");
    plan::Plan p;
    p.family = "t5";
    p.kind = plan::Kind::seq2seq;
    const std::size_t vocab = f.size("vocab_size", 32128, 1, Limits::vocab);
    const std::size_t d = f.size("d_model", 512, 1, Limits::width);
    const std::size_t d_kv = f.size("d_kv", 64, 1, Limits::head_dim);  // heads · d_kv need not be d_model
    const std::size_t heads = f.size("num_heads", 8, 1, Limits::heads);
    const std::size_t inner = f.size("d_ff", 2048, 1, Limits::inner);
    const std::size_t layers = f.size("num_layers", 6, 1, Limits::layers);
    const std::size_t decoder_layers = f.size("num_decoder_layers", layers, 1, Limits::layers);  // null: num_layers
    plan::RelativeBias relative;
    relative.buckets = f.size("relative_attention_num_buckets", 32, 4, Limits::buckets);
    // Past half the buckets of a direction the bucket grows with log(distance / exact) / log(max_distance / exact):
    // max_distance must pass that half, or every distance would fall in one bucket.
    relative.max_distance = f.size("relative_attention_max_distance", 128, 1, Limits::positions);
    if (relative.max_distance <= relative.buckets / 2)
        f.fail({"relative_attention_max_distance: expected more than relative_attention_num_buckets / 2 (",
                json::Num(relative.buckets / 2), "), got ", json::Num(relative.max_distance)});
    const plan::Norm norm = rms_norm(float(f.real("layer_norm_epsilon", 1e-6, 0, 1)));  // T5LayerNorm
    const plan::Mlp mlp = feed_forward(f, inner);
    // T5 has no position table: inputs are bounded by n_positions (older configs' field), else 512.
    const std::size_t positions = f.size("n_positions", 512, 1, Limits::positions);

    const auto stack = [&](std::size_t n, bool decoder) {
        plan::Layer layer;
        plan::Attention& a = layer.self;
        a.heads = a.kv_heads = heads;
        a.head_dim = d_kv;
        a.input_width = d;
        a.scale = 1.f;  // T5Attention: scores = q · kᵀ, unscaled
        a.relative_bias = true;
        a.causal = decoder;
        layer.attn_norms.in = norm;
        if (decoder) {
            layer.has_cross = true;
            layer.cross = a;
            layer.cross.causal = false;
            layer.cross.relative_bias = false;  // EncDecAttention: no relative_attention_bias
            layer.cross_norms.in = norm;
        }
        layer.mlp = mlp;
        layer.mlp_norms.in = norm;
        plan::Stack s;
        s.embedding.vocab = vocab;
        s.embedding.width = d;
        s.embedding.table = 0;  // `shared`
        s.final_norm = norm;
        s.relative = relative;
        s.relative.bidirectional = !decoder;
        s.max_positions = positions;
        uniform_layers(s, layer, n);
        return s;
    };
    p.stacks.push_back(stack(layers, false));
    p.stacks.push_back(stack(decoder_layers, true));
    p.head.present = true;
    p.head.tied = f.flag("tie_word_embeddings", true);
    // T5ForConditionalGeneration: a tied lm_head reads sequence_output · model_dim^-0.5.
    if (p.head.tied) p.head.input_scale = float(1.0 / std::sqrt(double(d)));
    p.head.vocab = vocab;
    p.decoder_start = token_id(f, "decoder_start_token_id", token_id(f, "pad_token_id", 0, vocab), vocab);
    p.eos = token_id(f, "eos_token_id", 1, vocab);
    return p;
}

// T5Model: shared (also saved as {encoder,decoder}.embed_tokens), {encoder,decoder}.block.N.layer.{0: SelfAttention,
// 1: EncDecAttention (decoder), last: DenseReluDense}, each with its layer_norm; block 0's relative_attention_bias;
// final_layer_norm; lm_head beside it (no prefix). The gated feed-forward's wi_1 is the up projection where the
// plain one has wi (one row, two names: the alias is the row number of `wi`).
constexpr TensorName tensors[] = {
    {"shared.weight", Part::token_embedding, 0},
    {"encoder.embed_tokens.weight", Part::token_embedding, 0, Layout::standard, Group::required, 0},
    {"decoder.embed_tokens.weight", Part::token_embedding, 0, Layout::standard, Group::required, 0},
    {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", Part::relative_bias, 0},
    {"encoder.block.{}.layer.0.layer_norm.weight", Part::attn_in, 0},
    {"encoder.block.{}.layer.0.SelfAttention.q.weight", Part::q, 0},
    {"encoder.block.{}.layer.0.SelfAttention.k.weight", Part::k, 0},
    {"encoder.block.{}.layer.0.SelfAttention.v.weight", Part::v, 0},
    {"encoder.block.{}.layer.0.SelfAttention.o.weight", Part::o, 0},
    {"encoder.block.{}.layer.1.layer_norm.weight", Part::mlp_in, 0},
    {"encoder.block.{}.layer.1.DenseReluDense.wi.weight", Part::up, 0},
    {"encoder.block.{}.layer.1.DenseReluDense.wi_0.weight", Part::gate, 0},
    {"encoder.block.{}.layer.1.DenseReluDense.wi_1.weight", Part::up, 0, Layout::standard, Group::required, 10},
    {"encoder.block.{}.layer.1.DenseReluDense.wo.weight", Part::down, 0},
    {"encoder.final_layer_norm.weight", Part::final_norm, 0},
    {"decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", Part::relative_bias, 1},
    {"decoder.block.{}.layer.0.layer_norm.weight", Part::attn_in, 1},
    {"decoder.block.{}.layer.0.SelfAttention.q.weight", Part::q, 1},
    {"decoder.block.{}.layer.0.SelfAttention.k.weight", Part::k, 1},
    {"decoder.block.{}.layer.0.SelfAttention.v.weight", Part::v, 1},
    {"decoder.block.{}.layer.0.SelfAttention.o.weight", Part::o, 1},
    {"decoder.block.{}.layer.1.layer_norm.weight", Part::cross_in, 1},
    {"decoder.block.{}.layer.1.EncDecAttention.q.weight", Part::cross_q, 1},
    {"decoder.block.{}.layer.1.EncDecAttention.k.weight", Part::cross_k, 1},
    {"decoder.block.{}.layer.1.EncDecAttention.v.weight", Part::cross_v, 1},
    {"decoder.block.{}.layer.1.EncDecAttention.o.weight", Part::cross_o, 1},
    {"decoder.block.{}.layer.2.layer_norm.weight", Part::mlp_in, 1},
    {"decoder.block.{}.layer.2.DenseReluDense.wi.weight", Part::up, 1},
    {"decoder.block.{}.layer.2.DenseReluDense.wi_0.weight", Part::gate, 1},
    {"decoder.block.{}.layer.2.DenseReluDense.wi_1.weight", Part::up, 1, Layout::standard, Group::required, 27},
    {"decoder.block.{}.layer.2.DenseReluDense.wo.weight", Part::down, 1},
    {"decoder.final_layer_norm.weight", Part::final_norm, 1},
    {"lm_head.weight", Part::head, 1, Layout::standard, Group::lm_head},
};
constexpr const char* none[] = {nullptr};
constexpr Architecture architectures[] = {{"T5ForConditionalGeneration", true}, {"T5Model", false}, {nullptr, false}};

}  // namespace

extern const Family t5_family{"t5", "T5", read, tensors, std::size(tensors), none, none, architectures};

}  // namespace families
}  // namespace attnscope
