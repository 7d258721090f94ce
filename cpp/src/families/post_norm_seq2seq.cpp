// BartConfig's fields read into a plan (configuration_bart.py and configuration_marian.py, which copies it;
// modeling_bart.py's BartEncoderLayer, BartDecoderLayer, BartAttention, BartForConditionalGeneration), and
// BartModel's tensor table, for the families of post_norm_seq2seq.hpp.
#include <cmath>

#include "post_norm_seq2seq.hpp"

namespace attnscope {
namespace families {

using model::Layout;
using model::Part;

plan::Plan read_post_norm_seq2seq(const Config& f, const PostNormSeq2Seq& family)
{
    f.require_absent("quantization_config", "quantized weights are not read");
    f.require_flag("is_encoder_decoder", true, "this family is read as an encoder-decoder");
    plan::Plan p;
    p.family = family.family;
    p.kind = plan::Kind::seq2seq;
    const std::size_t vocab = f.size("vocab_size", 50265, 1, Limits::vocab);
    // MarianConfig: decoder_vocab_size (null: vocab_size) sizes a decoder table of its own, which only unshared
    // embeddings have; share_encoder_decoder_embeddings (default true) makes `shared` the table of both stacks.
    f.require_flag("share_encoder_decoder_embeddings", true, "separate source and target embeddings are not read");
    if (f.has("decoder_vocab_size") && f.size("decoder_vocab_size", 0, 1, Limits::vocab) != vocab)
        f.fail({"decoder_vocab_size: ", f.get("decoder_vocab_size").excerpt(), " is not supported (only vocab_size's, a shared table)"});
    const std::size_t d = f.size("d_model", 1024, 1, Limits::width);
    const std::size_t positions = f.size("max_position_embeddings", 1024, 1, Limits::positions - 2);
    // nn.LayerNorm(d_model) everywhere, at torch's default eps; the encoder and the decoder may differ in depth,
    // heads and MLP width.
    const plan::Norm norm = layer_norm(1e-5f);
    const plan::Activation act = activation(f, "activation_function", family.activation);
    // BartScaledWordEmbedding / embed_scale: the token embedding times sqrt(d_model) when scale_embedding.
    const float scale = f.flag("scale_embedding", false) ? float(std::sqrt(double(d))) : 1.f;
    const auto stack = [&](const char* layers_field, const char* heads_field, const char* ffn_field, bool decoder) {
        const std::size_t layers = f.size(layers_field, 12, 1, Limits::layers);
        const std::size_t heads = f.size(heads_field, 16, 1, Limits::heads);
        check_divides(f, heads_field, heads, "d_model", d);  // BartAttention: head_dim = embed_dim / num_heads
        const std::size_t inner = f.size(ffn_field, 4096, 1, Limits::inner);
        plan::Layer layer;
        plan::Attention& a = layer.self;
        a.heads = a.kv_heads = heads;
        a.head_dim = d / heads;
        a.input_width = d;
        a.scale = float(1.0 / std::sqrt(double(a.head_dim)));  // q_proj(x) · head_dim^-0.5
        a.qkv_bias = a.out_bias = true;
        a.causal = decoder;
        layer.attn_norms.after = norm;  // self_attn_layer_norm(x + attention)
        if (decoder) {
            layer.has_cross = true;
            layer.cross = a;
            layer.cross.causal = false;
            layer.cross_norms.after = norm;  // encoder_attn_layer_norm
        }
        layer.mlp = {false, act, inner, true};
        layer.mlp_norms.after = norm;  // final_layer_norm(x + fc2(act(fc1(x))))
        plan::Stack s;
        s.embedding.vocab = vocab;
        s.embedding.width = d;
        s.embedding.table = 0;  // `shared`
        s.embedding.scale = scale;
        if (family.learned_positions) {
            s.embedding.positions = plan::Positions::learned;
            s.embedding.position_rows = positions + 2;
            s.embedding.position_offset = 2;
            s.embedding.norm = norm;
        } else {
            s.embedding.positions = plan::Positions::sinusoidal;
            s.embedding.position_rows = positions;
        }
        s.max_positions = positions;
        uniform_layers(s, layer, layers);
        return s;
    };
    p.stacks.push_back(stack("encoder_layers", "encoder_attention_heads", "encoder_ffn_dim", false));
    p.stacks.push_back(stack("decoder_layers", "decoder_attention_heads", "decoder_ffn_dim", true));
    // lm_head tied to `shared` (tie_word_embeddings, default true), plus the final_logits_bias buffer.
    p.head.present = true;
    p.head.tied = f.flag("tie_word_embeddings", true);
    p.head.bias = true;
    p.head.vocab = vocab;
    // decoder_start_token_id: the decoder's first input (the family's default, or the pad token).
    const std::int32_t start = family.decoder_start >= 0 ? family.decoder_start : token_id(f, "pad_token_id", family.pad, vocab);
    p.decoder_start = token_id(f, "decoder_start_token_id", start, vocab);
    p.eos = token_id(f, "eos_token_id", family.eos, vocab);
    return p;
}

// `shared` may also be saved under the stacks' embed_tokens (one Parameter, three names); a tied lm_head saved anyway
// is skipped.
extern const TensorName post_norm_seq2seq_tensors[] = {
    {"shared.weight", Part::token_embedding, 0},
    {"encoder.embed_tokens.weight", Part::token_embedding, 0, Layout::standard, Group::required, 0},
    {"decoder.embed_tokens.weight", Part::token_embedding, 0, Layout::standard, Group::required, 0},
    {"encoder.embed_positions.weight", Part::position_embedding, 0},
    {"encoder.layernorm_embedding.weight", Part::embed_norm, 0},
    {"encoder.layernorm_embedding.bias", Part::embed_norm_bias, 0},
    {"encoder.layers.{}.self_attn.q_proj.weight", Part::q, 0},
    {"encoder.layers.{}.self_attn.q_proj.bias", Part::q_bias, 0},
    {"encoder.layers.{}.self_attn.k_proj.weight", Part::k, 0},
    {"encoder.layers.{}.self_attn.k_proj.bias", Part::k_bias, 0},
    {"encoder.layers.{}.self_attn.v_proj.weight", Part::v, 0},
    {"encoder.layers.{}.self_attn.v_proj.bias", Part::v_bias, 0},
    {"encoder.layers.{}.self_attn.out_proj.weight", Part::o, 0},
    {"encoder.layers.{}.self_attn.out_proj.bias", Part::o_bias, 0},
    {"encoder.layers.{}.self_attn_layer_norm.weight", Part::attn_after, 0},
    {"encoder.layers.{}.self_attn_layer_norm.bias", Part::attn_after_bias, 0},
    {"encoder.layers.{}.fc1.weight", Part::up, 0},
    {"encoder.layers.{}.fc1.bias", Part::up_bias, 0},
    {"encoder.layers.{}.fc2.weight", Part::down, 0},
    {"encoder.layers.{}.fc2.bias", Part::down_bias, 0},
    {"encoder.layers.{}.final_layer_norm.weight", Part::mlp_after, 0},
    {"encoder.layers.{}.final_layer_norm.bias", Part::mlp_after_bias, 0},
    {"decoder.embed_positions.weight", Part::position_embedding, 1},
    {"decoder.layernorm_embedding.weight", Part::embed_norm, 1},
    {"decoder.layernorm_embedding.bias", Part::embed_norm_bias, 1},
    {"decoder.layers.{}.self_attn.q_proj.weight", Part::q, 1},
    {"decoder.layers.{}.self_attn.q_proj.bias", Part::q_bias, 1},
    {"decoder.layers.{}.self_attn.k_proj.weight", Part::k, 1},
    {"decoder.layers.{}.self_attn.k_proj.bias", Part::k_bias, 1},
    {"decoder.layers.{}.self_attn.v_proj.weight", Part::v, 1},
    {"decoder.layers.{}.self_attn.v_proj.bias", Part::v_bias, 1},
    {"decoder.layers.{}.self_attn.out_proj.weight", Part::o, 1},
    {"decoder.layers.{}.self_attn.out_proj.bias", Part::o_bias, 1},
    {"decoder.layers.{}.self_attn_layer_norm.weight", Part::attn_after, 1},
    {"decoder.layers.{}.self_attn_layer_norm.bias", Part::attn_after_bias, 1},
    {"decoder.layers.{}.encoder_attn.q_proj.weight", Part::cross_q, 1},
    {"decoder.layers.{}.encoder_attn.q_proj.bias", Part::cross_q_bias, 1},
    {"decoder.layers.{}.encoder_attn.k_proj.weight", Part::cross_k, 1},
    {"decoder.layers.{}.encoder_attn.k_proj.bias", Part::cross_k_bias, 1},
    {"decoder.layers.{}.encoder_attn.v_proj.weight", Part::cross_v, 1},
    {"decoder.layers.{}.encoder_attn.v_proj.bias", Part::cross_v_bias, 1},
    {"decoder.layers.{}.encoder_attn.out_proj.weight", Part::cross_o, 1},
    {"decoder.layers.{}.encoder_attn.out_proj.bias", Part::cross_o_bias, 1},
    {"decoder.layers.{}.encoder_attn_layer_norm.weight", Part::cross_after, 1},
    {"decoder.layers.{}.encoder_attn_layer_norm.bias", Part::cross_after_bias, 1},
    {"decoder.layers.{}.fc1.weight", Part::up, 1},
    {"decoder.layers.{}.fc1.bias", Part::up_bias, 1},
    {"decoder.layers.{}.fc2.weight", Part::down, 1},
    {"decoder.layers.{}.fc2.bias", Part::down_bias, 1},
    {"decoder.layers.{}.final_layer_norm.weight", Part::mlp_after, 1},
    {"decoder.layers.{}.final_layer_norm.bias", Part::mlp_after_bias, 1},
    // *ForConditionalGeneration: outside the `model.` prefix.
    {"final_logits_bias", Part::head_bias, 1, Layout::row, Group::lm_head},
    {"lm_head.weight", Part::head, 1, Layout::standard, Group::lm_head},
};
extern const std::size_t post_norm_seq2seq_tensor_count = std::size(post_norm_seq2seq_tensors);
// BartForConditionalGeneration and MarianMTModel save their model as `model.`.
extern const char* const post_norm_seq2seq_prefixes[] = {"model.", nullptr};

}  // namespace families
}  // namespace attnscope
