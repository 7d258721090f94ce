// Our encoder–decoder's family, `seq2seq` (tools/MODEL_FORMAT.md; tools/training/attnscope_nets.py): source and target tables of
// their own with learned positions, pre-LayerNorm encoder blocks, decoder blocks that cross-attend to the encoder's
// output (nn.MultiheadAttention, its in_proj rows q for the decoder, k and v for the encoder's output), an untied head.
#include "common.hpp"
#include "ours.hpp"

namespace attnscope {
namespace families {
namespace {

using model::Part;

plan::Plan read(const Config& f) { return seq2seq_plan(read_seq2seq(f)); }

constexpr TensorName tensors[] = {
    {"src_tok_emb.weight", Part::token_embedding, 0},
    {"src_pos_emb.weight", Part::position_embedding, 0},
    {"enc_blocks.{}.ln1.weight", Part::attn_in, 0},
    {"enc_blocks.{}.ln1.bias", Part::attn_in_bias, 0},
    {"enc_blocks.{}.attn.in_proj_weight", Part::qkv, 0},
    {"enc_blocks.{}.attn.in_proj_bias", Part::qkv_bias, 0},
    {"enc_blocks.{}.attn.out_proj.weight", Part::o, 0},
    {"enc_blocks.{}.attn.out_proj.bias", Part::o_bias, 0},
    {"enc_blocks.{}.ln2.weight", Part::mlp_in, 0},
    {"enc_blocks.{}.ln2.bias", Part::mlp_in_bias, 0},
    {"enc_blocks.{}.mlp.fc1.weight", Part::up, 0},
    {"enc_blocks.{}.mlp.fc1.bias", Part::up_bias, 0},
    {"enc_blocks.{}.mlp.fc2.weight", Part::down, 0},
    {"enc_blocks.{}.mlp.fc2.bias", Part::down_bias, 0},
    {"enc_ln_f.weight", Part::final_norm, 0},
    {"enc_ln_f.bias", Part::final_norm_bias, 0},
    {"tgt_tok_emb.weight", Part::token_embedding, 1},
    {"tgt_pos_emb.weight", Part::position_embedding, 1},
    {"dec_blocks.{}.ln1.weight", Part::attn_in, 1},
    {"dec_blocks.{}.ln1.bias", Part::attn_in_bias, 1},
    {"dec_blocks.{}.self_attn.in_proj_weight", Part::qkv, 1},
    {"dec_blocks.{}.self_attn.in_proj_bias", Part::qkv_bias, 1},
    {"dec_blocks.{}.self_attn.out_proj.weight", Part::o, 1},
    {"dec_blocks.{}.self_attn.out_proj.bias", Part::o_bias, 1},
    {"dec_blocks.{}.ln2.weight", Part::cross_in, 1},
    {"dec_blocks.{}.ln2.bias", Part::cross_in_bias, 1},
    {"dec_blocks.{}.cross_attn.in_proj_weight", Part::cross_qkv, 1},
    {"dec_blocks.{}.cross_attn.in_proj_bias", Part::cross_qkv_bias, 1},
    {"dec_blocks.{}.cross_attn.out_proj.weight", Part::cross_o, 1},
    {"dec_blocks.{}.cross_attn.out_proj.bias", Part::cross_o_bias, 1},
    {"dec_blocks.{}.ln3.weight", Part::mlp_in, 1},
    {"dec_blocks.{}.ln3.bias", Part::mlp_in_bias, 1},
    {"dec_blocks.{}.mlp.fc1.weight", Part::up, 1},
    {"dec_blocks.{}.mlp.fc1.bias", Part::up_bias, 1},
    {"dec_blocks.{}.mlp.fc2.weight", Part::down, 1},
    {"dec_blocks.{}.mlp.fc2.bias", Part::down_bias, 1},
    {"dec_ln_f.weight", Part::final_norm, 1},
    {"dec_ln_f.bias", Part::final_norm_bias, 1},
    {"head.weight", Part::head, 1},
    {"head.bias", Part::head_bias, 1},
};
constexpr const char* none[] = {nullptr};
constexpr Architecture architectures[] = {{nullptr, false}};

}  // namespace

Seq2SeqModelConfig read_seq2seq(const Config& f)
{
    Seq2SeqModelConfig c;
    c.src_vocab_size = our_size(f, "src_vocab_size");
    c.tgt_vocab_size = our_size(f, "tgt_vocab_size");
    c.max_src_len = our_size(f, "max_src_len");
    c.max_tgt_len = our_size(f, "max_tgt_len");
    c.d_model = our_size(f, "d_model");
    c.num_heads = our_size(f, "n_heads");
    c.d_ff = our_size(f, "d_ff");
    c.num_encoder_layers = our_size(f, "n_enc_layers");
    c.num_decoder_layers = our_size(f, "n_dec_layers");
    check_our_config(f, c.d_model, c.num_heads);
    f.require_text("decoding", "greedy");
    return c;
}

plan::Plan seq2seq_plan(const Seq2SeqModelConfig& c)
{
    plan::Plan p;
    p.family = "seq2seq";
    p.kind = plan::Kind::seq2seq;
    const auto stack = [&](std::size_t vocab, std::size_t table, std::size_t positions) {
        plan::Stack s;
        s.embedding.vocab = vocab;
        s.embedding.width = c.d_model;
        s.embedding.table = table;
        s.embedding.positions = plan::Positions::learned;
        s.embedding.position_rows = positions;
        s.max_positions = positions;
        s.final_norm = layer_norm(1e-5f);
        return s;
    };
    plan::Stack encoder = stack(c.src_vocab_size, 0, c.max_src_len), decoder = stack(c.tgt_vocab_size, 1, c.max_tgt_len);
    uniform_layers(encoder, our_layer(c.d_model, c.num_heads, c.d_ff, false), c.num_encoder_layers);
    plan::Layer layer = our_layer(c.d_model, c.num_heads, c.d_ff, true);
    layer.has_cross = true;
    layer.cross_norms.in = layer_norm(1e-5f);  // ln2, before the cross-attention
    layer.cross = layer.self;
    layer.cross.causal = false;
    uniform_layers(decoder, layer, c.num_decoder_layers);
    p.stacks.push_back(std::move(encoder));
    p.stacks.push_back(std::move(decoder));
    p.head.present = true;
    p.head.bias = true;
    p.head.vocab = c.tgt_vocab_size;
    return p;
}

extern const Family seq2seq_family{"seq2seq", "our encoder–decoder", read, tensors, std::size(tensors), none, none, architectures};

}  // namespace families
}  // namespace attnscope
