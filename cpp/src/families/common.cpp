// The builders the families share (common.hpp). Cold code.
#include "common.hpp"

namespace attnscope {
namespace families {

using json::Num;

plan::Norm layer_norm(float eps, bool bias)
{
    plan::Norm n;
    n.kind = plan::NormKind::layer_norm;
    n.bias = bias;
    n.eps = eps;
    return n;
}

plan::Norm rms_norm(float eps, float weight_offset)
{
    plan::Norm n;
    n.kind = plan::NormKind::rms_norm;
    n.eps = eps;
    n.weight_offset = weight_offset;
    return n;
}

plan::Activation activation(const Config& f, const char* field, const char* fallback)
{
    const std::string act = f.text(field, fallback);
    if (act == "gelu") return plan::Activation::gelu_erf;  // GELUActivation: x·Φ(x) with erf
    if (act == "gelu_new" || act == "gelu_pytorch_tanh") return plan::Activation::gelu_tanh;  // the tanh approximation
    if (act == "relu") return plan::Activation::relu;
    if (act == "silu" || act == "swish") return plan::Activation::silu;
    f.fail({field, ": \"", act, "\" is not supported (expected \"gelu\", \"gelu_new\", \"gelu_pytorch_tanh\", \"relu\", \"silu\" or \"swish\")"});
}

void check_divides(const Config& f, const char* field, std::size_t divisor, const char* of, std::size_t n)
{
    if (n % divisor != 0) f.fail({field, ": expected a divisor of ", of, " (", Num(n), "), got ", Num(divisor)});
}

double rope_theta(const Config& f, const char* field)
{
    // theta ≤ 1 gives every frequency 1 or more per position, and 1e-300 overflows the frequencies to infinity: the
    // logits come out NaN. No config means that.
    const double top = f.real(field, 10000.0, 1, 1e30);
    if (!f.has("rope_parameters")) return top;
    // transformers 5 writes rope_theta, and any scaling, into one rope_parameters object. Its plain form is read,
    // {"rope_type": "default", "rope_theta": θ}, θ before a top-level one as standardize_rope_params takes it; a
    // scaling, a partial rotation or a form per layer type in it is refused until it is read, never run without.
    if (f.has("rope_scaling"))
        f.fail({"rope_parameters: given with rope_scaling (expected one of them: transformers 5 writes rope_parameters, earlier "
                "versions rope_theta and rope_scaling)"});
    const Config p = f.nested("rope_parameters");
    const json::Value object = f.get("rope_parameters");
    json::Value key = object.first();
    for (std::size_t i = 0; i < object.size(); ++i, key = key.following().following()) {
        const std::string name = key.string();
        if (name != "rope_type" && name != "type" && name != "rope_theta")
            p.fail({name, ": is not read yet (rope_parameters is read in its plain form, {\"rope_type\": \"default\", \"rope_theta\": …}; "
                    "a scaled or partial RoPE is read from rope_scaling and partial_rotary_factor)"});
    }
    const char* type_key = p.has("rope_type") ? "rope_type" : "type";
    const std::string type = p.text(type_key, "default");
    if (type != "default")
        p.fail({type_key, ": \"", type, "\" is not read in rope_parameters yet (expected \"default\"; a scaled RoPE is read from rope_scaling)"});
    return p.has("rope_theta") ? p.real("rope_theta", top, 1, 1e30) : top;
}

plan::Rope read_rope(const Config& f, std::size_t dims, const char* theta_field)
{
    plan::Rope r;
    r.dims = dims;
    r.theta = rope_theta(f, theta_field);
    if (!f.has("rope_scaling")) return r;
    const Config s = f.nested("rope_scaling");
    const char* type_key = s.has("rope_type") ? "rope_type" : "type";
    const std::string type = s.text(type_key, "default");
    if (type == "default") return r;
    if (type != "linear" && type != "llama3")
        s.fail({type_key, ": \"", type, "\" is not supported (expected \"default\", \"linear\" or \"llama3\")"});
    if (!s.has("factor")) s.fail({"factor: missing (required by \"", type, "\")"});
    // Below 1/1024 a scaling only multiplies the frequencies towards overflow; real factors are 1 to 64.
    r.factor = s.real("factor", 1, 1.0 / 1024, 1e6, false);
    if (type == "linear") {  // _compute_linear_scaling_rope_parameters: inv_freq / factor
        r.scaling = plan::RopeScaling::linear;
        return r;
    }
    // _compute_llama3_parameters: long wavelengths divided by factor, short ones kept, smooth in between.
    r.scaling = plan::RopeScaling::llama3;
    for (const char* k : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
        if (!s.has(k)) s.fail({k, ": missing (required by \"llama3\")"});
    r.low_freq_factor = s.real("low_freq_factor", 1, 0, 1e6);
    r.high_freq_factor = s.real("high_freq_factor", 4, 0, 1e6);
    if (!(r.high_freq_factor > r.low_freq_factor))
        s.fail({"high_freq_factor: expected more than low_freq_factor, got ", s.get("high_freq_factor").excerpt()});
    r.original_max_positions = s.size("original_max_position_embeddings", 0, 1, Limits::positions);
    return r;
}

std::int32_t token_id(const Config& f, const char* name, std::int32_t fallback, std::size_t vocab)
{
    if (!f.has(name)) {
        if (fallback < 0 || std::size_t(fallback) >= vocab)
            f.fail({name, ": missing, and its default ", Num(std::uint64_t(fallback < 0 ? 0 : fallback)), " is not a token id of vocab_size ", Num(vocab)});
        return fallback;
    }
    const json::Value v = f.get(name);
    if (!v.is(json::Type::number)) f.type_fail(name, "a token id (an integer)", v);
    std::uint64_t id = 0;
    if (!v.to_index(vocab - 1, id)) f.fail({name, ": expected a token id from 0 to ", Num(vocab - 1), " (vocab_size - 1), got ", v.excerpt()});
    return std::int32_t(id);
}

void uniform_layers(plan::Stack& s, const plan::Layer& layer, std::size_t layers)
{
    s.kinds = {layer};
    s.kind_of.assign(layers, 0);
}

std::vector<std::uint8_t> read_layer_types(const Config& f, std::size_t layers)
{
    const json::Value types = f.get("layer_types");
    if (!types.is(json::Type::array)) f.type_fail("layer_types", "an array of strings", types);
    if (types.size() != layers) f.fail({"layer_types: expected ", Num(layers), " entries (num_hidden_layers), got ", Num(types.size())});
    std::vector<std::uint8_t> sliding(layers, 0);
    json::Value t = types.first();
    for (std::size_t l = 0; l < layers; ++l, t = t.following()) {
        const std::string name = "layer_types[" + std::string(Num(l)) + "]";
        if (!t.is(json::Type::string)) f.type_fail(name.c_str(), "a string", t);
        const std::string kind = t.string();
        if (kind != "sliding_attention" && kind != "full_attention")
            f.fail({name, ": ", t.excerpt(), " is not supported (expected \"full_attention\" or \"sliding_attention\")"});
        sliding[l] = kind == "sliding_attention";
    }
    return sliding;
}

void refuse_unsupported(const Config& f, bool reads_capping)
{
    f.require_absent("quantization_config", "quantized weights are not read");
    if (!reads_capping) {
        f.require_absent("attn_logit_softcapping", "score capping is not part of this family");
        f.require_absent("final_logit_softcapping", "logit capping is not part of this family");
    }
    f.require_flag("is_encoder_decoder", false, "this family is read as a decoder or an encoder alone");
    f.require_flag("add_cross_attention", false, "cross-attention is read only in encoder-decoder families");
}

}  // namespace families
}  // namespace attnscope
