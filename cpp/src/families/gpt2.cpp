// GPT-2 (HF configuration_gpt2.py; modeling_gpt2.py's GPT2Attention, GPT2MLP, GPT2Model, GPT2LMHeadModel):
// learned positions, pre-LayerNorm blocks with GELU, Conv1D weights stored [in, out], q|k|v fused, a tied head.
#include <cmath>

#include "common.hpp"

namespace attnscope {
namespace families {
namespace {

using model::Layout;
using model::Part;

plan::Plan read(const Config& f)
{
    refuse_unsupported(f);
    plan::Plan p;
    p.family = "gpt2";
    p.kind = plan::Kind::causal_lm;
    const std::size_t vocab = f.size("vocab_size", 50257, 1, Limits::vocab);
    const std::size_t positions = f.size("n_positions", 1024, 1, Limits::positions);  // the learned table's length (wpe)
    const std::size_t d = f.size("n_embd", 768, 1, Limits::width);
    const std::size_t layers = f.size("n_layer", 12, 1, Limits::layers);
    const std::size_t heads = f.size("n_head", 12, 1, Limits::heads);
    check_divides(f, "n_head", heads, "n_embd", d);  // split_heads: head_dim = n_embd / n_head
    const std::size_t inner = f.size("n_inner", 4 * d, 1, Limits::inner);  // null → 4·n_embd (GPT2Block: inner_dim)
    const plan::Norm norm = layer_norm(float(f.real("layer_norm_epsilon", 1e-5, 0, 1)));  // ln_1, ln_2, ln_f
    // scale_attn_weights: scores / sqrt(head_dim) (GPT2Attention._attn); scale_attn_by_inverse_layer_idx: also
    // / (layer_idx + 1); reorder_and_upcast_attn changes only float16 numerics.
    f.require_flag("scale_attn_weights", true, "unscaled attention scores are not implemented");
    const bool inverse_layer_scale = f.flag("scale_attn_by_inverse_layer_idx", false);

    plan::Layer layer;
    layer.attn_norms.in = norm;
    plan::Attention& a = layer.self;
    a.heads = a.kv_heads = heads;
    a.head_dim = d / heads;
    a.input_width = d;
    a.causal = true;
    a.qkv_bias = a.out_bias = true;  // Conv1D always has a bias
    layer.mlp_norms.in = norm;
    layer.mlp = {false, activation(f, "activation_function", "gelu_new"), inner, true};

    plan::Stack s;
    s.embedding.vocab = vocab;
    s.embedding.width = d;
    s.embedding.positions = plan::Positions::learned;
    s.embedding.position_rows = positions;
    s.max_positions = positions;
    s.final_norm = norm;
    const float scale = float(1.0 / std::sqrt(double(a.head_dim)));
    if (!inverse_layer_scale) {
        a.scale = scale;
        uniform_layers(s, layer, layers);
    } else {  // every layer a scale of its own, so a kind of its own
        s.kinds.assign(layers, layer);
        s.kind_of.resize(layers);
        for (std::size_t l = 0; l < layers; ++l) {
            s.kinds[l].self.scale = float(1.0 / std::sqrt(double(a.head_dim)) / double(l + 1));
            s.kind_of[l] = std::uint32_t(l);
        }
    }
    p.stacks.push_back(std::move(s));
    p.head.present = true;
    p.head.tied = f.flag("tie_word_embeddings", true);  // GPT2LMHeadModel ties lm_head to wte by default
    p.head.vocab = vocab;
    return p;
}

// GPT2Model: wte, wpe, h.N (ln_1, attn.c_attn = q|k|v, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj), ln_f; the LM head
// outside it.
constexpr TensorName tensors[] = {
    {"wte.weight", Part::token_embedding},
    {"wpe.weight", Part::position_embedding},
    {"h.{}.ln_1.weight", Part::attn_in},
    {"h.{}.ln_1.bias", Part::attn_in_bias},
    {"h.{}.attn.c_attn.weight", Part::qkv, 0, Layout::conv1d},
    {"h.{}.attn.c_attn.bias", Part::qkv_bias},
    {"h.{}.attn.c_proj.weight", Part::o, 0, Layout::conv1d},
    {"h.{}.attn.c_proj.bias", Part::o_bias},
    {"h.{}.ln_2.weight", Part::mlp_in},
    {"h.{}.ln_2.bias", Part::mlp_in_bias},
    {"h.{}.mlp.c_fc.weight", Part::up, 0, Layout::conv1d},
    {"h.{}.mlp.c_fc.bias", Part::up_bias},
    {"h.{}.mlp.c_proj.weight", Part::down, 0, Layout::conv1d},
    {"h.{}.mlp.c_proj.bias", Part::down_bias},
    {"ln_f.weight", Part::final_norm},
    {"ln_f.bias", Part::final_norm_bias},
    {"lm_head.weight", Part::head, 0, Layout::standard, Group::lm_head},
};
// GPT2LMHeadModel saves GPT2Model as `transformer.`; openai-community/gpt2's own file has no prefix.
constexpr const char* prefixes[] = {"transformer.", nullptr};
// GPT2Attention's registered causal-mask buffers (older transformers saved them).
constexpr const char* ignored[] = {"h.{}.attn.bias", "h.{}.attn.masked_bias", nullptr};
constexpr Architecture architectures[] = {{"GPT2LMHeadModel", true}, {"GPT2Model", false}, {nullptr, false}};

}  // namespace

extern const Family gpt2_family{"gpt2", "GPT-2", read, tensors, std::size(tensors), prefixes, ignored, architectures};

}  // namespace families
}  // namespace attnscope
