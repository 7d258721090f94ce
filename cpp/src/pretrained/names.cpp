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

    if (c.family == PretrainedFamily::gpt2) {
        // GPT2Model: wte, wpe, h.N (ln_1, attn.c_attn = q|k|v, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj), ln_f. Conv1D
        // stores its weight [in, out].
        add("wte.weight", {V, d}, Role::token_embedding);
        add("wpe.weight", {c.max_positions, d}, Role::position_embedding);
        for (std::uint32_t l = 0; l < c.layers; ++l) {
            const std::string p = "h." + std::string(Num(l)) + ".";
            add(p + "ln_1.weight", {d}, Role::norm1_w, l);
            add(p + "ln_1.bias", {d}, Role::norm1_b, l);
            add(p + "attn.c_attn.weight", {d, 3 * d}, Role::qkv_w, l, Group::required, true);
            add(p + "attn.c_attn.bias", {3 * d}, Role::qkv_b, l);
            add(p + "attn.c_proj.weight", {d, d}, Role::o_w, l, Group::required, true);
            add(p + "attn.c_proj.bias", {d}, Role::o_b, l);
            add(p + "ln_2.weight", {d}, Role::norm2_w, l);
            add(p + "ln_2.bias", {d}, Role::norm2_b, l);
            add(p + "mlp.c_fc.weight", {d, I}, Role::up_w, l, Group::required, true);
            add(p + "mlp.c_fc.bias", {I}, Role::up_b, l);
            add(p + "mlp.c_proj.weight", {I, d}, Role::down_w, l, Group::required, true);
            add(p + "mlp.c_proj.bias", {d}, Role::down_b, l);
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
            add(p + "attention.self.query.weight", {d, d}, Role::q_w, l);
            add(p + "attention.self.query.bias", {d}, Role::q_b, l);
            add(p + "attention.self.key.weight", {d, d}, Role::k_w, l);
            add(p + "attention.self.key.bias", {d}, Role::k_b, l);
            add(p + "attention.self.value.weight", {d, d}, Role::v_w, l);
            add(p + "attention.self.value.bias", {d}, Role::v_b, l);
            add(p + "attention.output.dense.weight", {d, d}, Role::o_w, l);
            add(p + "attention.output.dense.bias", {d}, Role::o_b, l);
            add(p + "attention.output.LayerNorm.weight", {d}, Role::norm1_w, l);
            add(p + "attention.output.LayerNorm.bias", {d}, Role::norm1_b, l);
            add(p + "intermediate.dense.weight", {I, d}, Role::up_w, l);
            add(p + "intermediate.dense.bias", {I}, Role::up_b, l);
            add(p + "output.dense.weight", {d, I}, Role::down_w, l);
            add(p + "output.dense.bias", {d}, Role::down_b, l);
            add(p + "output.LayerNorm.weight", {d}, Role::norm2_w, l);
            add(p + "output.LayerNorm.bias", {d}, Role::norm2_b, l);
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
        add(p + "self_attn.q_proj.weight", {q_out, d}, Role::q_w, l);
        add(p + "self_attn.k_proj.weight", {kv_out, d}, Role::k_w, l);
        add(p + "self_attn.v_proj.weight", {kv_out, d}, Role::v_w, l);
        if (c.qkv_bias) {
            add(p + "self_attn.q_proj.bias", {q_out}, Role::q_b, l);
            add(p + "self_attn.k_proj.bias", {kv_out}, Role::k_b, l);
            add(p + "self_attn.v_proj.bias", {kv_out}, Role::v_b, l);
        }
        add(p + "self_attn.o_proj.weight", {d, q_out}, Role::o_w, l);
        if (c.out_bias) add(p + "self_attn.o_proj.bias", {d}, Role::o_b, l);
        if (c.qk_norm) {
            add(p + "self_attn.q_norm.weight", {hd}, Role::q_norm, l);
            add(p + "self_attn.k_norm.weight", {hd}, Role::k_norm, l);
        }
        add(p + "post_attention_layernorm.weight", {d}, Role::norm2_w, l);
        add(p + "mlp.gate_proj.weight", {I, d}, Role::gate_w, l);
        add(p + "mlp.up_proj.weight", {I, d}, Role::up_w, l);
        add(p + "mlp.down_proj.weight", {d, I}, Role::down_w, l);
        if (c.mlp_bias) {
            add(p + "mlp.gate_proj.bias", {I}, Role::gate_b, l);
            add(p + "mlp.up_proj.bias", {I}, Role::up_b, l);
            add(p + "mlp.down_proj.bias", {d}, Role::down_b, l);
        }
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
