// Our character language model's family, `decoder_lm` (tools/MODEL_FORMAT.md; tools/training/attnscope_nets.py): GPT-2's
// dialect with learned positions, pre-LayerNorm blocks of nn.MultiheadAttention and an exact-GELU MLP, and an output
// head that may be tied to the token embedding.
#include "common.hpp"
#include "ours.hpp"

namespace attnscope {
namespace families {
namespace {

using model::Part;

plan::Plan read(const Config& f) { return language_model_plan(read_language_model(f)); }

constexpr TensorName tensors[] = {
    {"tok_emb.weight", Part::token_embedding},
    {"pos_emb.weight", Part::position_embedding},
    {"blocks.{}.ln1.weight", Part::attn_in},
    {"blocks.{}.ln1.bias", Part::attn_in_bias},
    {"blocks.{}.attn.in_proj_weight", Part::qkv},  // nn.MultiheadAttention: rows q, k, v
    {"blocks.{}.attn.in_proj_bias", Part::qkv_bias},
    {"blocks.{}.attn.out_proj.weight", Part::o},
    {"blocks.{}.attn.out_proj.bias", Part::o_bias},
    {"blocks.{}.ln2.weight", Part::mlp_in},
    {"blocks.{}.ln2.bias", Part::mlp_in_bias},
    {"blocks.{}.mlp.fc1.weight", Part::up},
    {"blocks.{}.mlp.fc1.bias", Part::up_bias},
    {"blocks.{}.mlp.fc2.weight", Part::down},
    {"blocks.{}.mlp.fc2.bias", Part::down_bias},
    {"ln_f.weight", Part::final_norm},
    {"ln_f.bias", Part::final_norm_bias},
    {"head.weight", Part::head},  // not with tie_head: the head's weight is tok_emb.weight
    {"head.bias", Part::head_bias},
};
constexpr const char* none[] = {nullptr};
constexpr Architecture architectures[] = {{nullptr, false}};

}  // namespace

LanguageModelConfig read_language_model(const Config& f)
{
    LanguageModelConfig c;
    c.vocab_size = our_size(f, "vocab_size");
    c.max_len = our_size(f, "max_len");  // the longest input, `<bos>` included: rows of pos_emb
    c.d_model = our_size(f, "d_model");
    c.num_heads = our_size(f, "n_heads");
    c.d_ff = our_size(f, "d_ff");
    c.num_layers = our_size(f, "n_layers");
    check_our_config(f, c.d_model, c.num_heads);
    f.require_bool("causal", true);
    c.tie_head = f.flag("tie_head", false);  // absent: false (files written before the option existed)
    return c;
}

plan::Plan language_model_plan(const LanguageModelConfig& c)
{
    plan::Plan p;
    p.family = "decoder_lm";
    p.kind = plan::Kind::causal_lm;
    plan::Stack s;
    s.embedding.vocab = c.vocab_size;
    s.embedding.width = c.d_model;
    s.embedding.positions = plan::Positions::learned;
    s.embedding.position_rows = c.max_len;
    s.max_positions = c.max_len;
    s.final_norm = layer_norm(1e-5f);
    uniform_layers(s, our_layer(c.d_model, c.num_heads, c.d_ff, true), c.num_layers);
    p.stacks.push_back(std::move(s));
    p.head = {};
    p.head.present = true;
    p.head.tied = c.tie_head;
    p.head.bias = true;
    p.head.vocab = c.vocab_size;
    return p;
}

extern const Family decoder_lm_family{"decoder_lm", "our character language model", read, tensors, std::size(tensors), none, none,
                                      architectures};

}  // namespace families
}  // namespace attnscope
