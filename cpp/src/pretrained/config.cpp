// config.json → PretrainedConfig: one table per family from Hugging Face's fields to our parts, each field checked
// for type, range and divisibility, and every field that would change the maths in a way not implemented refused.
// The meaning of each field is HF's (transformers/models/<family>/configuration_<family>.py and modeling_<family>.py).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "../file_errors.hpp"
#include "../json.hpp"
#include "parts.hpp"

namespace attnscope {

const char* to_string(PretrainedFamily family)
{
    switch (family) {
    case PretrainedFamily::gpt2: return "gpt2";
    case PretrainedFamily::bert: return "bert";
    case PretrainedFamily::llama: return "llama";
    case PretrainedFamily::mistral: return "mistral";
    case PretrainedFamily::qwen2: return "qwen2";
    case PretrainedFamily::qwen3: return "qwen3";
    }
    return "?";
}

namespace pretrained {
namespace {

using file_errors::range_error;
using json::Num;
using json::Type;
using json::Value;

constexpr const char* prefix = "loadModel: config.json: ";
// Largest size accepted from a config: the parameter-byte check refuses real overflows with a better message; this
// only keeps every product of two sizes exact in 64 bits.
constexpr std::uint64_t max_size = (std::uint64_t(1) << 31) - 1;

// A JSON number's value. Exact (correctly rounded) for up to 19 significant digits times 10^±22, which covers every
// value a config holds (1e-06, 10000.0, 500000.0, 8.0); beyond that within an ulp or so. Not strtod: its long-double
// arithmetic costs the .wasm about 14 KB.
double decimal_value(std::string_view text)
{
    std::size_t i = 0;
    const bool negative = i < text.size() && text[i] == '-';
    if (negative) ++i;
    std::uint64_t digits = 0;
    long exponent = 0;
    bool fraction = false;
    for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
        if (text[i] == '.') {
            fraction = true;
            continue;
        }
        if (digits < 1000000000000000000ull) {
            digits = digits * 10 + std::uint64_t(text[i] - '0');
            if (fraction) --exponent;
        } else if (!fraction) {
            ++exponent;  // digits past the 19th only scale the value
        }
    }
    if (i < text.size()) {  // the exponent: JSON guarantees [eE][+-]?digits
        ++i;
        const bool minus = text[i] == '-';
        if (text[i] == '-' || text[i] == '+') ++i;
        long e = 0;
        for (; i < text.size(); ++i) e = std::min(e * 10 + long(text[i] - '0'), 100000L);
        exponent += minus ? -e : e;
    }
    double value = double(digits);
    const long magnitude = exponent < 0 ? -exponent : exponent;
    if (digits < (std::uint64_t(1) << 53) && magnitude <= 22) {
        double power = 1;  // 10^k is exact in a double up to k = 22, so one rounding: the product or quotient
        for (long k = 0; k < magnitude; ++k) power *= 10;
        value = exponent < 0 ? value / power : value * power;
    } else {
        value *= std::pow(10.0, double(std::max(-400L, std::min(400L, exponent))));
    }
    return negative ? -value : value;
}

// The fields of one JSON object, read with defaults, each read checked against its type and range.
class Fields {
public:
    explicit Fields(const Value& object) : object_(object) {}

    bool has(const char* name) const
    {
        Value v(object_);
        return object_.find(name, v) && !v.is(Type::null);
    }
    Value get(const char* name) const
    {
        Value v(object_);
        object_.find(name, v);
        return v;
    }
    // A positive integer (`min` ≤ value ≤ max_size); `fallback` when absent or null (0: the field is required).
    std::size_t size(const char* name, std::size_t fallback, std::size_t min = 1) const
    {
        if (!has(name)) {
            if (fallback == 0) range_error({prefix, name, ": missing (a required field)"});
            return fallback;
        }
        const Value v = get(name);
        if (!v.is(Type::number)) file_errors::type_error({prefix, name}, "an integer", v);
        std::uint64_t out = 0;
        if (!v.to_index(max_size, out) || out < min)
            range_error({prefix, name, ": expected an integer from ", Num(min), " to ", Num(max_size), ", got ", v.excerpt()});
        return std::size_t(out);
    }
    // A finite number in (low, high] (`low_open`) or [low, high].
    double real(const char* name, double fallback, double low, double high, bool low_open = true) const
    {
        if (!has(name)) return fallback;
        return real_of(get(name), name, low, high, low_open);
    }
    static double real_of(const Value& v, const char* name, double low, double high, bool low_open)
    {
        if (!v.is(Type::number)) file_errors::type_error({prefix, name}, "a number", v);
        const double x = decimal_value(v.raw());
        if (!std::isfinite(x) || x > high || x < low || (low_open && x == low))
            range_error({prefix, name, ": expected a number ", low_open ? "above " : "from ", Num(std::uint64_t(low)),
                         high <= 1 ? " to 1" : "", ", got ", v.excerpt()});
        return x;
    }
    bool flag(const char* name, bool fallback) const
    {
        if (!has(name)) return fallback;
        const Value v = get(name);
        if (!v.is(Type::boolean)) file_errors::type_error({prefix, name}, "true or false", v);
        return v.boolean();
    }
    std::string text(const char* name, const char* fallback) const
    {
        if (!has(name)) return fallback;
        const Value v = get(name);
        if (!v.is(Type::string)) file_errors::type_error({prefix, name}, "a string", v);
        return v.string();
    }
    // A field whose only implemented value is its default: anything else is refused, never ignored.
    void require_flag(const char* name, bool expected, const char* why) const
    {
        if (has(name) && flag(name, expected) != expected)
            range_error({prefix, name, ": ", expected ? "false" : "true", " is not supported (", why, ")"});
    }
    void require_absent(const char* name, const char* why) const
    {
        if (has(name)) range_error({prefix, name, ": ", get(name).excerpt(), " is not supported (", why, ")"});
    }

private:
    Value object_;
};

void check_divides(const char* field, std::size_t divisor, const char* of, std::size_t n)
{
    if (n % divisor != 0)
        range_error({prefix, field, ": expected a divisor of ", of, " (", Num(n), "), got ", Num(divisor)});
}

// An activation name (HF's ACT2FN keys) as one of our MLPs.
MlpKind activation(const Fields& f, const char* field, const char* fallback, bool gated)
{
    const std::string act = f.text(field, fallback);
    if (gated) {
        if (act == "silu" || act == "swish") return MlpKind::swiglu;
        range_error({prefix, field, ": \"", act, "\" is not supported (the gated MLP implements \"silu\")"});
    }
    if (act == "gelu") return MlpKind::gelu_erf;  // GELUActivation: x·Φ(x) with erf
    if (act == "gelu_new" || act == "gelu_pytorch_tanh") return MlpKind::gelu_tanh;  // the tanh approximation
    range_error({prefix, field, ": \"", act, "\" is not supported (expected \"gelu\", \"gelu_new\" or \"gelu_pytorch_tanh\")"});
}

// Fields that no family here implements, whatever the model_type says.
void refuse_common(const Fields& f)
{
    f.require_absent("attn_logit_softcapping", "Gemma-2's score capping is not implemented");
    f.require_absent("final_logit_softcapping", "Gemma-2's logit capping is not implemented");
    f.require_absent("quantization_config", "quantized weights are not read");
    f.require_flag("is_encoder_decoder", false, "encoder-decoder checkpoints are not read");
    f.require_flag("add_cross_attention", false, "cross-attention is not implemented");
    if (f.has("partial_rotary_factor") && f.real("partial_rotary_factor", 1, 0, 1) != 1.0)
        range_error({prefix, "partial_rotary_factor: ", f.get("partial_rotary_factor").excerpt(),
                     " is not supported (RoPE over the whole head only)"});
}

// GPT-2 (configuration_gpt2.py; modeling_gpt2.py's GPT2Attention, GPT2MLP, GPT2Model).
void read_gpt2(const Fields& f, PretrainedConfig& c)
{
    c.vocab = f.size("vocab_size", 50257);
    c.max_positions = f.size("n_positions", 1024);  // the learned position table's length (wpe)
    c.hidden = f.size("n_embd", 768);
    c.layers = f.size("n_layer", 12);
    c.heads = f.size("n_head", 12);
    check_divides("n_head", c.heads, "n_embd", c.hidden);  // split_heads: head_dim = n_embd / n_head
    c.kv_heads = c.heads;
    c.head_dim = c.hidden / c.heads;
    c.intermediate = f.size("n_inner", 4 * c.hidden);  // null → 4·n_embd (GPT2Block: inner_dim)
    c.mlp = activation(f, "activation_function", "gelu_new", false);
    c.norm = NormKind::layer_norm;
    c.norm_eps = float(f.real("layer_norm_epsilon", 1e-5, 0, 1));  // ln_1, ln_2, ln_f
    c.positions = PositionKind::learned;
    c.qkv_bias = c.out_bias = c.mlp_bias = true;  // Conv1D always has a bias
    c.tied = f.flag("tie_word_embeddings", true);  // GPT2LMHeadModel ties lm_head to wte by default
    // scale_attn_weights: scores / sqrt(head_dim) (GPT2Attention._attn); scale_attn_by_inverse_layer_idx: also
    // / (layer_idx + 1); reorder_and_upcast_attn changes only float16 numerics.
    f.require_flag("scale_attn_weights", true, "unscaled attention scores are not implemented");
    c.inverse_layer_scale = f.flag("scale_attn_by_inverse_layer_idx", false);
}

// BERT (configuration_bert.py; modeling_bert.py's BertEmbeddings, BertSelfAttention, BertLayer, BertLMPredictionHead).
void read_bert(const Fields& f, PretrainedConfig& c)
{
    c.vocab = f.size("vocab_size", 30522);
    c.hidden = f.size("hidden_size", 768);
    c.layers = f.size("num_hidden_layers", 12);
    c.heads = f.size("num_attention_heads", 12);
    check_divides("num_attention_heads", c.heads, "hidden_size", c.hidden);  // attention_head_size
    c.kv_heads = c.heads;
    c.head_dim = c.hidden / c.heads;
    c.intermediate = f.size("intermediate_size", 3072);
    c.mlp = activation(f, "hidden_act", "gelu", false);  // also the MLM transform's transform_act_fn
    c.max_positions = f.size("max_position_embeddings", 512);
    c.type_vocab = f.size("type_vocab_size", 2);  // token_type_embeddings rows
    c.norm = NormKind::layer_norm;
    c.norm_eps = float(f.real("layer_norm_eps", 1e-12, 0, 1));
    c.post_norm = true;  // BertSelfOutput / BertOutput: LayerNorm(hidden + input)
    c.causal = false;
    c.positions = PositionKind::learned;
    c.qkv_bias = c.out_bias = c.mlp_bias = true;
    c.tied = true;  // BertLMPredictionHead.decoder is tied to word_embeddings (tie_word_embeddings defaults to true)
    f.require_flag("tie_word_embeddings", true, "an untied MLM decoder is not read");
    const std::string pos = f.text("position_embedding_type", "absolute");
    if (pos != "absolute")
        range_error({prefix, "position_embedding_type: \"", pos, "\" is not supported (only \"absolute\")"});
    f.require_flag("is_decoder", false, "BERT as a causal decoder is not implemented");
}

// RoPE: rope_theta and rope_scaling (modeling_rope_utils.py: ROPE_INIT_FUNCTIONS; the type is `rope_type`, or the
// legacy `type`).
void read_rope(const Fields& f, PretrainedConfig& c)
{
    c.positions = PositionKind::rope;
    c.rope.theta = f.real("rope_theta", 10000.0, 0, 1e30);
    if (!f.has("rope_scaling")) return;
    const Value rs = f.get("rope_scaling");
    if (!rs.is(Type::object)) file_errors::type_error({prefix, "rope_scaling"}, "an object or null", rs);
    const Fields s(rs);
    const char* type_key = s.has("rope_type") ? "rope_type" : "type";
    const std::string type = s.text(type_key, "default");
    if (type == "default") return;
    if (type != "linear" && type != "llama3")
        range_error({prefix, "rope_scaling.", type_key, ": \"", type,
                     "\" is not supported (expected \"default\", \"linear\" or \"llama3\")"});
    if (!s.has("factor")) range_error({prefix, "rope_scaling.factor: missing (required by \"", type, "\")"});
    c.rope.factor = Fields::real_of(s.get("factor"), "rope_scaling.factor", 0, 1e30, true);
    if (type == "linear") {  // _compute_linear_scaling_rope_parameters: inv_freq / factor
        c.rope.scaling = RopeScaling::linear;
        return;
    }
    // _compute_llama3_parameters: long wavelengths divided by factor, short ones kept, smooth in between.
    c.rope.scaling = RopeScaling::llama3;
    for (const char* k : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
        if (!s.has(k)) range_error({prefix, "rope_scaling.", k, ": missing (required by \"llama3\")"});
    c.rope.low_freq_factor = Fields::real_of(s.get("low_freq_factor"), "rope_scaling.low_freq_factor", 0, 1e30, true);
    c.rope.high_freq_factor = Fields::real_of(s.get("high_freq_factor"), "rope_scaling.high_freq_factor", 0, 1e30, true);
    if (!(c.rope.high_freq_factor > c.rope.low_freq_factor))
        range_error({prefix, "rope_scaling.high_freq_factor: expected more than low_freq_factor, got ",
                     s.get("high_freq_factor").excerpt()});
    c.rope.original_max_positions = s.size("original_max_position_embeddings", 0);
}

// Llama, Mistral, Qwen2, Qwen3 (configuration_llama.py etc.; modeling_llama.py's LlamaAttention, LlamaMLP,
// LlamaRMSNorm, LlamaRotaryEmbedding; modeling_qwen3.py's q_norm/k_norm).
void read_llama_like(const Fields& f, PretrainedConfig& c)
{
    const bool mistral = c.family == PretrainedFamily::mistral, qwen2 = c.family == PretrainedFamily::qwen2,
               qwen3 = c.family == PretrainedFamily::qwen3;
    c.vocab = f.size("vocab_size", 32000);
    c.hidden = f.size("hidden_size", 4096);
    c.intermediate = f.size("intermediate_size", 11008);
    c.layers = f.size("num_hidden_layers", 32);
    c.heads = f.size("num_attention_heads", 32);
    // num_key_value_heads: K/V heads shared by groups of heads/kv_heads query heads (repeat_kv); absent → MHA.
    c.kv_heads = f.size("num_key_value_heads", c.heads);
    if (c.heads % c.kv_heads != 0)
        range_error({prefix, "num_key_value_heads: expected a divisor of num_attention_heads (", Num(c.heads), "), got ",
                     Num(c.kv_heads)});
    // head_dim: explicit in newer configs (Qwen3 decouples it from hidden_size); else hidden_size / heads.
    if (f.has("head_dim")) {
        c.head_dim = f.size("head_dim", 0);
    } else {
        check_divides("num_attention_heads", c.heads, "hidden_size", c.hidden);
        c.head_dim = c.hidden / c.heads;
    }
    if (c.head_dim % 2 != 0)
        range_error({prefix, "head_dim: expected an even number (RoPE rotates pairs of features), got ", Num(c.head_dim)});
    c.max_positions = f.size("max_position_embeddings", 2048);
    c.norm = NormKind::rms_norm;
    c.norm_eps = float(f.real("rms_norm_eps", 1e-6, 0, 1));
    c.mlp = activation(f, "hidden_act", "silu", true);
    c.tied = f.flag("tie_word_embeddings", false);
    read_rope(f, c);
    // Biases: Llama/Qwen3 `attention_bias` on q, k, v and o; Qwen2 has q, k, v biases and none on o_proj; Mistral none.
    if (qwen2) {
        c.qkv_bias = true;
    } else if (!mistral) {
        c.qkv_bias = c.out_bias = f.flag("attention_bias", false);
    }
    if (c.family == PretrainedFamily::llama) c.mlp_bias = f.flag("mlp_bias", false);
    c.qk_norm = qwen3;
    if (f.has("pretraining_tp")) f.size("pretraining_tp", 1);  // only slices the same products: the maths is equal
}

// The per-layer windows, read after the parameter check (their vector is proportional to num_hidden_layers).
void read_windows(const Fields& f, PretrainedConfig& c)
{
    const bool mistral = c.family == PretrainedFamily::mistral, qwen2 = c.family == PretrainedFamily::qwen2,
               qwen3 = c.family == PretrainedFamily::qwen3;
    // Sliding window: Mistral's `sliding_window` on every layer (null: none). Qwen2/Qwen3: only with
    // use_sliding_window, on layers ≥ max_window_layers, unless `layer_types` says per layer.
    c.window.assign(c.layers, 0);
    std::size_t window = 0;
    bool per_layer_rule = false;
    if (mistral) {
        window = f.has("sliding_window") ? f.size("sliding_window", 0) : 0;
    } else if (qwen2 || qwen3) {
        if (f.flag("use_sliding_window", false)) {
            window = f.has("sliding_window") ? f.size("sliding_window", 0) : 0;
            per_layer_rule = true;
        }
    } else {
        f.require_absent("sliding_window", "Llama has no sliding window; use model_type \"mistral\"");
    }
    if (f.has("layer_types")) {
        const Value types = f.get("layer_types");
        if (!types.is(Type::array)) file_errors::type_error({prefix, "layer_types"}, "an array of strings", types);
        if (types.size() != c.layers)
            range_error({prefix, "layer_types: expected ", Num(c.layers), " entries (num_hidden_layers), got ", Num(types.size())});
        Value t = types.first();
        for (std::size_t l = 0; l < c.layers; ++l, t = t.following()) {
            if (!t.is(Type::string)) file_errors::type_error({prefix, "layer_types[", Num(l), "]"}, "a string", t);
            const std::string kind = t.string();
            if (kind == "sliding_attention") {
                if (window == 0)
                    range_error({prefix, "layer_types[", Num(l), "]: \"sliding_attention\" without a sliding_window"});
                c.window[l] = window;
            } else if (kind != "full_attention") {
                range_error({prefix, "layer_types[", Num(l), "]: \"", kind,
                             "\" is not supported (expected \"full_attention\" or \"sliding_attention\")"});
            }
        }
    } else if (window != 0) {
        const std::size_t first = per_layer_rule ? f.size("max_window_layers", 28, 0) : 0;
        for (std::size_t l = first; l < c.layers; ++l) c.window[l] = window;
    }
}

}  // namespace

PretrainedConfig read_config(const std::string& text)
{
    json::Document doc;
    std::string error;
    if (!doc.parse(text, error)) range_error({prefix, "invalid JSON: ", error});
    const Value root = doc.root();
    if (!root.is(Type::object)) file_errors::type_error({prefix, "the document"}, "an object", root);
    std::string duplicate;
    if (root.has_duplicate_keys(duplicate)) range_error({prefix, "the key '", duplicate, "' appears twice"});
    const Fields f(root);
    if (!f.has("model_type")) range_error({prefix, "model_type: missing (expected gpt2, bert, llama, mistral, qwen2 or qwen3)"});
    const std::string type = f.text("model_type", "");

    PretrainedConfig c;
    const PretrainedFamily families[] = {PretrainedFamily::gpt2, PretrainedFamily::bert, PretrainedFamily::llama,
                                         PretrainedFamily::mistral, PretrainedFamily::qwen2, PretrainedFamily::qwen3};
    bool known = false;
    for (PretrainedFamily family : families)
        if (type == to_string(family)) {
            c.family = family;
            known = true;
        }
    if (!known)
        range_error({prefix, "model_type: \"", type, "\" is not supported (expected gpt2, bert, llama, mistral, qwen2 or qwen3)"});
    refuse_common(f);
    if (c.family == PretrainedFamily::gpt2) {
        read_gpt2(f, c);
    } else if (c.family == PretrainedFamily::bert) {
        read_bert(f, c);
    } else {
        read_llama_like(f, c);
    }
    c.has_lm_head = c.family != PretrainedFamily::bert;  // until a file says otherwise (names.cpp's groups)
    // Refuse a model that cannot fit before anything proportional to it is allocated (the smallest it can be).
    parameter_floats(c, false, false);
    if (c.positions == PositionKind::rope) {
        read_windows(f, c);
    } else {
        c.window.assign(c.layers, 0);
    }
    return c;
}

}  // namespace pretrained
}  // namespace attnscope
