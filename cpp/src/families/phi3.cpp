// Phi-3 and Phi-4-mini (HF configuration_phi3.py, modeling_phi3.py): the rotary decoder's layers without biases, q|k|v fused
// in `qkv_proj` and gate|up in `gate_up_proj`, `partial_rotary_factor`, LongRoPE, and `sliding_window` on every layer.
#include <cmath>

#include "rotary_decoder.hpp"

namespace attnscope {
namespace families {
namespace {

using json::Num;
using model::Part;

// rope_theta and rope_scaling as Phi3Config reads them: none, or "longrope" (its older names "su" and "yarn" are renamed
// to it by Phi3Config); every other type is refused (Phi3Config.validate_rope). modeling_rope_utils'
// _compute_longrope_parameters: inv_freq = 1 / (ext · theta^(2i/dims)), ext the short_factor, or the long_factor once
// an input is longer than original_max_position_embeddings; cos and sin times attention_factor.
plan::Rope read_longrope(const Config& f, std::size_t dims)
{
    plan::Rope r;
    r.dims = dims;
    r.theta = rope_theta(f, "rope_theta");
    if (!f.has("rope_scaling")) return r;
    const Config s = f.nested("rope_scaling");
    const char* type_key = s.has("rope_type") ? "rope_type" : "type";
    const std::string type = s.text(type_key, "default");
    if (type == "default") return r;
    if (type != "longrope" && type != "su" && type != "yarn")
        s.fail({type_key, ": \"", type, "\" is not supported (expected \"longrope\", or its older names \"su\" and \"yarn\")"});
    r.scaling = plan::RopeScaling::longrope;
    for (const char* name : {"short_factor", "long_factor"}) {
        std::vector<double>& out = name[0] == 's' ? r.short_factor : r.long_factor;
        if (!s.has(name)) s.fail({name, ": missing (required by \"longrope\")"});
        const json::Value list = s.get(name);
        if (!list.is(json::Type::array)) s.type_fail(name, "an array of numbers", list);
        if (list.size() != dims / 2)
            s.fail({name, ": expected ", Num(dims / 2), " numbers (one per rotated pair of features), got ", Num(list.size())});
        json::Value v = list.first();
        for (std::size_t i = 0; i < dims / 2; ++i, v = v.following()) {
            const std::string at = std::string(name) + "[" + std::string(Num(i)) + "]";
            // A factor divides its pair's frequency: below 1/1024 (rope_scaling.factor's floor) it only drives the
            // frequencies towards overflow, and the logits to NaN; real ones are about 1 to 64.
            out.push_back(s.real_of(v, at.c_str(), 1.0 / 1024, 1e6, false));
        }
    }
    // original_max_position_embeddings (Phi3Config's default 4096): the length trained on; `factor` is then
    // max_position_embeddings / it, whatever rope_scaling.factor says.
    r.original_max_positions = f.size("original_max_position_embeddings", 4096, 2, Limits::positions);
    const double factor = double(f.size("max_position_embeddings", 4096, 1, Limits::positions)) / double(r.original_max_positions);
    r.factor = factor;
    r.attention_factor = s.has("attention_factor") ? s.real("attention_factor", 1, 0, 1e6)
                         : factor <= 1.0           ? 1.0
                                                   : std::sqrt(1 + std::log(factor) / std::log(double(r.original_max_positions)));
    return r;
}

plan::Plan read(const Config& f)
{
    RotaryDecoder family{"phi3"};
    family.attention_bias = false;  // Phi3Attention and Phi3MLP: bias=False, whatever the config says
    family.window = RotaryDecoder::Window::every_layer;  // Phi3Model: sliding_window (null: none) on every layer
    family.partial_rotary = true;
    family.rope = read_longrope;
    return read_rotary_decoder(f, family);
}

// Phi3Model: LlamaModel's names with q|k|v fused (qkv_proj: q's rows, then k's, then v's) and gate|up fused
// (gate_up_proj: chunk(2) gives the gate first).
constexpr TensorName tensors[] = {
    {"embed_tokens.weight", Part::token_embedding},
    {"layers.{}.input_layernorm.weight", Part::attn_in},
    {"layers.{}.self_attn.qkv_proj.weight", Part::qkv},
    {"layers.{}.self_attn.o_proj.weight", Part::o},
    {"layers.{}.post_attention_layernorm.weight", Part::mlp_in},
    {"layers.{}.mlp.gate_up_proj.weight", Part::gate_up},
    {"layers.{}.mlp.down_proj.weight", Part::down},
    {"norm.weight", Part::final_norm},
    {"lm_head.weight", Part::head, 0, model::Layout::standard, Group::lm_head},
};
constexpr Architecture architectures[] = {{"Phi3ForCausalLM", true}, {"Phi3Model", false}, {nullptr, false}};

}  // namespace

extern const Family phi3_family{"phi3", "Phi-3", read, tensors, std::size(tensors), rotary_decoder_prefixes, rotary_decoder_ignored, architectures};

}  // namespace families
}  // namespace attnscope
