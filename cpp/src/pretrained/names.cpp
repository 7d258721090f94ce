// The tensor-name tables of each family (the state-dict keys HF's modeling_<family>.py gives its modules), the
// buffers that are skipped, and the parameter count each config implies, checked before anything is allocated.
#include <stdexcept>

#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "parts.hpp"

namespace attnscope {
namespace pretrained {
namespace {

using json::Num;

bool starts_with(const std::string& s, const char* p)
{
    return s.compare(0, std::char_traits<char>::length(p), p) == 0;
}
bool ends_with(const std::string& s, const char* p)
{
    const std::size_t n = std::char_traits<char>::length(p);
    return s.size() >= n && s.compare(s.size() - n, n, p) == 0;
}

// 64-bit size arithmetic that cannot wrap: every config size is below 2^31, and a sum or product past 2^62 is
// far beyond any memory, so it saturates there (the byte check then refuses it).
constexpr std::uint64_t saturated = std::uint64_t(1) << 62;
std::uint64_t mul(std::uint64_t a, std::uint64_t b) { return a != 0 && b > saturated / a ? saturated : a * b; }
std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a + b > saturated ? saturated : a + b; }

std::uint64_t packed(std::uint64_t in, std::uint64_t out)
{
    constexpr std::uint64_t NR = kernels::panel_width<xsimd::default_arch>;
    return mul(add(out, NR - 1) / NR * NR, in);
}

}  // namespace

std::string strip_prefix(const PretrainedConfig& c, const std::string& name)
{
    // GPT2LMHeadModel saves GPT2Model as `transformer.`, BertForMaskedLM saves BertModel as `bert.`, the causal LMs
    // save their decoder as `model.`; the bare models save without a prefix. The heads (lm_head., cls.) have none.
    const char* prefix = c.family == PretrainedFamily::gpt2 ? "transformer." : c.family == PretrainedFamily::bert ? "bert." : "model.";
    return starts_with(name, prefix) ? name.substr(std::char_traits<char>::length(prefix)) : name;
}

bool ignored_tensor(const PretrainedConfig& c, const std::string& full)
{
    const std::string name = strip_prefix(c, full);
    switch (c.family) {
    case PretrainedFamily::gpt2:
        // GPT2Attention's registered causal-mask buffers (older transformers saved them), and the tied head.
        return (starts_with(name, "h.") && (ends_with(name, ".attn.bias") || ends_with(name, ".attn.masked_bias"))) ||
               (c.tied && full == "lm_head.weight");
    case PretrainedFamily::bert:
        // BertEmbeddings.position_ids (a buffer), BertPooler, BertForPreTraining's next-sentence head, and the
        // decoder weight that HF ties to word_embeddings on load whatever the file holds. (cls.predictions.decoder.bias
        // is the same Parameter as cls.predictions.bias: tensor_specs lists it as an alias.)
        return name == "embeddings.position_ids" || starts_with(name, "pooler.") || starts_with(full, "cls.seq_relationship.") ||
               full == "cls.predictions.decoder.weight";
    default:
        // LlamaRotaryEmbedding's inv_freq buffer (saved by older versions, per layer or once), and a tied head.
        return ends_with(name, "rotary_emb.inv_freq") || (c.tied && full == "lm_head.weight");
    }
}

std::vector<TensorSpec> tensor_specs(const PretrainedConfig& c)
{
    std::vector<TensorSpec> s;
    const std::size_t d = c.hidden, V = c.vocab, I = c.intermediate, hd = c.head_dim;
    const std::size_t q_out = c.heads * hd, kv_out = c.kv_heads * hd;
    auto add = [&](std::string name, Shape shape, Role role, std::uint32_t layer = 0, Group group = Group::required,
                   bool conv1d = false) { s.push_back({std::move(name), std::move(shape), role, layer, group, conv1d}); };
    // A module of layer l under prefix p: nn.Linear (weight [out, in]), GPT-2's Conv1D (weight [in, out]) or a norm
    // (in = 0: weight [out]); its bias, when it has one, is [out].
    struct Module {
        const char* name;
        std::size_t out, in;
        Role weight, bias;
        bool conv1d = false;
    };
    auto weight = [&](const std::string& p, std::uint32_t l, const Module& m) {
        const Shape shape = m.in == 0 ? Shape{m.out} : m.conv1d ? Shape{m.in, m.out} : Shape{m.out, m.in};
        add(p + m.name + ".weight", shape, m.weight, l, Group::required, m.conv1d);
    };
    auto bias = [&](const std::string& p, std::uint32_t l, const Module& m) { add(p + m.name + ".bias", {m.out}, m.bias, l); };
    // GPT-2 and BERT: every module has a bias, listed after its weight.
    auto biased_modules = [&](const std::string& p, std::uint32_t l, std::initializer_list<Module> modules) {
        for (const Module& m : modules) {
            weight(p, l, m);
            bias(p, l, m);
        }
    };
    // The Llama family: a group's weights, then, when the config gives that group biases, their biases (its configs
    // switch a group's biases on together: attention_bias, mlp_bias, Qwen2's q|k|v bias).
    auto group = [&](const std::string& p, std::uint32_t l, bool biased, std::initializer_list<Module> modules) {
        for (const Module& m : modules) weight(p, l, m);
        if (biased)
            for (const Module& m : modules) bias(p, l, m);
    };

    if (c.family == PretrainedFamily::gpt2) {
        // GPT2Model: wte, wpe, h.N (ln_1, attn.c_attn = q|k|v, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj), ln_f. Conv1D
        // stores its weight [in, out].
        add("wte.weight", {V, d}, Role::token_embedding);
        add("wpe.weight", {c.max_positions, d}, Role::position_embedding);
        for (std::uint32_t l = 0; l < c.layers; ++l) {
            const std::string p = "h." + std::string(Num(l)) + ".";
            biased_modules(p, l, {{"ln_1", d, 0, Role::norm1_w, Role::norm1_b},
                                  {"attn.c_attn", 3 * d, d, Role::qkv_w, Role::qkv_b, true},
                                  {"attn.c_proj", d, d, Role::o_w, Role::o_b, true},
                                  {"ln_2", d, 0, Role::norm2_w, Role::norm2_b},
                                  {"mlp.c_fc", I, d, Role::up_w, Role::up_b, true},
                                  {"mlp.c_proj", d, I, Role::down_w, Role::down_b, true}});
        }
        add("ln_f.weight", {d}, Role::final_norm_w);
        add("ln_f.bias", {d}, Role::final_norm_b);
        if (!c.tied) add("lm_head.weight", {V, d}, Role::head_w, 0, Group::lm_head);
        return s;
    }
    if (c.family == PretrainedFamily::bert) {
        // BertModel: embeddings (word, position, token_type, LayerNorm), encoder.layer.N (attention.self.query/key/
        // value, attention.output.dense + LayerNorm, intermediate.dense, output.dense + LayerNorm).
        add("embeddings.word_embeddings.weight", {V, d}, Role::token_embedding);
        add("embeddings.position_embeddings.weight", {c.max_positions, d}, Role::position_embedding);
        add("embeddings.token_type_embeddings.weight", {c.type_vocab, d}, Role::token_type_embedding);
        add("embeddings.LayerNorm.weight", {d}, Role::embed_norm_w);
        add("embeddings.LayerNorm.bias", {d}, Role::embed_norm_b);
        for (std::uint32_t l = 0; l < c.layers; ++l) {
            const std::string p = "encoder.layer." + std::string(Num(l)) + ".";
            biased_modules(p, l, {{"attention.self.query", d, d, Role::q_w, Role::q_b},
                                  {"attention.self.key", d, d, Role::k_w, Role::k_b},
                                  {"attention.self.value", d, d, Role::v_w, Role::v_b},
                                  {"attention.output.dense", d, d, Role::o_w, Role::o_b},
                                  {"attention.output.LayerNorm", d, 0, Role::norm1_w, Role::norm1_b},
                                  {"intermediate.dense", I, d, Role::up_w, Role::up_b},
                                  {"output.dense", d, I, Role::down_w, Role::down_b},
                                  {"output.LayerNorm", d, 0, Role::norm2_w, Role::norm2_b}});
        }
        // BertOnlyMLMHead: transform (dense, act, LayerNorm), then the tied decoder plus cls.predictions.bias.
        add("cls.predictions.transform.dense.weight", {d, d}, Role::mlm_dense_w, 0, Group::mlm_head);
        add("cls.predictions.transform.dense.bias", {d}, Role::mlm_dense_b, 0, Group::mlm_head);
        add("cls.predictions.transform.LayerNorm.weight", {d}, Role::mlm_norm_w, 0, Group::mlm_head);
        add("cls.predictions.transform.LayerNorm.bias", {d}, Role::mlm_norm_b, 0, Group::mlm_head);
        add("cls.predictions.bias", {V}, Role::mlm_bias, 0, Group::mlm_head);
        // BertLMPredictionHead: `self.decoder.bias = self.bias`, so a file may hold this name, the other, or both.
        add("cls.predictions.decoder.bias", {V}, Role::mlm_bias, 0, Group::mlm_head);
        s.back().alias_of = std::uint32_t(s.size() - 2);
        return s;
    }
    // LlamaModel and its relatives: embed_tokens, layers.N (input_layernorm, self_attn.{q,k,v,o}_proj [+ bias],
    // Qwen3's self_attn.{q,k}_norm, post_attention_layernorm, mlp.{gate,up,down}_proj), norm; lm_head outside.
    add("embed_tokens.weight", {V, d}, Role::token_embedding);
    for (std::uint32_t l = 0; l < c.layers; ++l) {
        const std::string p = "layers." + std::string(Num(l)) + ".";
        add(p + "input_layernorm.weight", {d}, Role::norm1_w, l);
        group(p, l, c.qkv_bias, {{"self_attn.q_proj", q_out, d, Role::q_w, Role::q_b},
                                 {"self_attn.k_proj", kv_out, d, Role::k_w, Role::k_b},
                                 {"self_attn.v_proj", kv_out, d, Role::v_w, Role::v_b}});
        group(p, l, c.out_bias, {{"self_attn.o_proj", d, q_out, Role::o_w, Role::o_b}});
        if (c.qk_norm) {
            add(p + "self_attn.q_norm.weight", {hd}, Role::q_norm, l);
            add(p + "self_attn.k_norm.weight", {hd}, Role::k_norm, l);
        }
        add(p + "post_attention_layernorm.weight", {d}, Role::norm2_w, l);
        group(p, l, c.mlp_bias, {{"mlp.gate_proj", I, d, Role::gate_w, Role::gate_b},
                                 {"mlp.up_proj", I, d, Role::up_w, Role::up_b},
                                 {"mlp.down_proj", d, I, Role::down_w, Role::down_b}});
    }
    add("norm.weight", {d}, Role::final_norm_w);
    // Untied: lm_head.weight; a base model file (LlamaModel) has none, and gives hidden states only.
    if (!c.tied) add("lm_head.weight", {V, d}, Role::head_w, 0, Group::lm_head);
    return s;
}

std::uint64_t parameter_floats(const PretrainedConfig& c, bool lm_head, bool mlm_head)
{
    const std::uint64_t d = c.hidden, V = c.vocab, I = c.intermediate, hd = c.head_dim;
    const std::uint64_t qkv_out = add(mul(c.heads, hd), mul(2 * std::uint64_t(c.kv_heads), hd));
    const bool layer_norm = c.norm == NormKind::layer_norm;
    // One layer: its norms, the q|k|v and output products with their biases, the MLP.
    std::uint64_t layer = mul(layer_norm ? 4 : 2, d);
    layer = add(layer, add(packed(d, qkv_out), c.qkv_bias ? qkv_out : 0));
    layer = add(layer, add(packed(mul(c.heads, hd), d), c.out_bias ? d : 0));
    const std::uint64_t mlps = c.mlp == MlpKind::swiglu ? 2 : 1;
    layer = add(layer, add(mul(mlps, packed(d, I)), c.mlp_bias ? mul(mlps, I) : 0));
    layer = add(layer, add(packed(I, d), c.mlp_bias ? d : 0));
    if (c.qk_norm) layer = add(layer, 2 * hd);

    std::uint64_t total = mul(layer, c.layers);
    // The token embedding: one copy, packed as the head's panels when tied (it serves the lookup too).
    const bool head = c.family == PretrainedFamily::bert ? mlm_head : lm_head;
    total = add(total, (c.tied && head) ? packed(d, V) : mul(V, d));
    if (head && !c.tied) total = add(total, packed(d, V));
    if (c.positions == PositionKind::learned) total = add(total, mul(c.max_positions, d));
    total = add(total, mul(c.type_vocab, d));
    if (c.post_norm) total = add(total, 2 * d);                         // the embeddings' LayerNorm
    else total = add(total, layer_norm ? 2 * d : d);                    // the final norm
    if (mlm_head) total = add(total, add(add(packed(d, d), 3 * d), V)); // transform dense + bias, its norm, bias

    const std::uint64_t bytes = mul(total, 4);
    if (bytes > max_pretrained_parameter_bytes)
        throw std::length_error(json::join({call_name, ": ", to_string(c.family), " with these sizes has about ",
                                            Num(total), " parameters, which need ", Num(bytes),
                                            " bytes as F32, more than the ", Num(max_pretrained_parameter_bytes),
                                            " bytes a model may take in 4 GiB of WASM memory"}));
    return total;
}

}  // namespace pretrained
}  // namespace attnscope
