// DecoderLM and Seq2Seq: pre-LayerNorm transformer blocks around MultiHeadAttention, strict state dicts,
// teacher-forced passes with every attention map, and greedy decoding with key/value caches.
#include "attnscope/transformer.hpp"

#include <algorithm>
#include <stdexcept>

#include "attend.hpp"
#include "attnscope/multihead_attention.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/layer_norm.hpp"

namespace attnscope {
namespace detail {

using arch = xsimd::default_arch;
constexpr float layer_norm_eps = 1e-5f;  // nn.LayerNorm's default

[[noreturn]] void model_error(const std::string& message) { throw std::invalid_argument(message); }

struct Parameter {
    Shape shape;
    std::vector<float> data;
};

struct Linear {
    std::size_t in = 0, out = 0;
    const Parameter* weight = nullptr;  // [out, in]
    const Parameter* bias = nullptr;    // [out]
    std::vector<float> packed;

    void repack()
    {
        packed.resize(packed_floats(in, out));
        pack_transposed(in, out, weight->data.data(), in, packed.data());
    }
    void apply(const float* x, std::size_t rows, float* y) const
    {
        matmul_packed(rows, out, in, x, in, packed.data(), y, out, bias->data.data());
    }
};

struct LayerNorm {
    const Parameter* gamma = nullptr;
    const Parameter* beta = nullptr;
    void apply(const float* x, std::size_t rows, std::size_t d, float* y) const
    {
        for (std::size_t r = 0; r < rows; ++r)
            kernels::layer_norm{}(arch{}, x + r * d, d, gamma->data.data(), beta->data.data(), layer_norm_eps, y + r * d);
    }
};

struct Block {
    LayerNorm ln1, ln2, ln3;                // ln3 only in decoder blocks
    MultiHeadAttention* self_attn = nullptr;
    MultiHeadAttention* cross_attn = nullptr;  // decoder blocks only
    Linear fc1, fc2;
};

struct ModelParts {
    std::map<std::string, Parameter> parameters;
    std::vector<std::string> keys;  // registration order
    std::vector<std::pair<std::string, std::unique_ptr<MultiHeadAttention>>> attentions;  // prefix → layer
    std::vector<Linear*> linears;   // repacked after every load
    // When set, every parameter's shape is checked against it before the parameter is allocated.
    const std::map<std::string, TensorView>* expected = nullptr;

    void expect(const std::string& name, const Shape& shape) const
    {
        if (!expected) return;
        const auto it = expected->find(name);
        if (it == expected->end())
            model_error("the config implies a tensor '" + name + "' of shape " + to_string(shape) + ", which is missing");
        if (it->second.shape != shape)
            model_error("the config implies shape " + to_string(shape) + " for '" + name + "', got " +
                        to_string(it->second.shape));
    }
    // Reserved to their final size before any block is added: `linears` points into them.
    std::vector<Block> encoder_blocks, decoder_blocks;
    const Parameter *token_embedding = nullptr, *position_embedding = nullptr;          // LM, or the decoder
    const Parameter *source_embedding = nullptr, *source_position_embedding = nullptr;  // Seq2Seq encoder
    LayerNorm encoder_norm, final_norm;
    Linear head;

    const Parameter* add(const std::string& name, Shape shape)
    {
        expect(name, shape);
        Parameter& p = parameters[name];
        p.shape = std::move(shape);
        p.data.assign(checked_numel(p.shape, "model"), 0.f);
        keys.push_back(name);
        return &p;
    }
    MultiHeadAttention* add_attention(const std::string& prefix, std::size_t d, std::size_t heads)
    {
        // The layer's two largest parameters (nn.MultiheadAttention with bias, kdim = vdim = d), checked before
        // the layer allocates its d² weights; its load_state_dict checks all of its keys.
        expect(prefix + ".in_proj_weight", {3 * d, d});
        expect(prefix + ".out_proj.weight", {d, d});
        auto mha = std::make_unique<MultiHeadAttention>(MultiHeadAttentionConfig{d, heads, 0, 0, true, 0});
        for (const std::string& key : mha->state_dict_keys()) keys.push_back(prefix + "." + key);
        attentions.emplace_back(prefix, std::move(mha));
        return attentions.back().second.get();
    }
    LayerNorm add_layer_norm(const std::string& prefix, std::size_t d)
    {
        return {add(prefix + ".weight", {d}), add(prefix + ".bias", {d})};
    }
    void add_linear(Linear& linear, const std::string& prefix, std::size_t in, std::size_t out)
    {
        linear.in = in;
        linear.out = out;
        linear.weight = add(prefix + ".weight", {out, in});
        linear.bias = add(prefix + ".bias", {out});
        linears.push_back(&linear);
    }
    // Encoder/LM blocks have self-attention and an MLP; decoder blocks add cross-attention and ln3.
    void add_blocks(std::vector<Block>& blocks, const std::string& prefix, std::size_t count, bool decoder,
                    std::size_t d, std::size_t heads, std::size_t d_ff)
    {
        // The last block must exist before `count` blocks are reserved: a config claiming a million layers is
        // refused without reserving them.
        if (count > 0) expect(prefix + "." + std::to_string(count - 1) + ".ln1.weight", {d});
        blocks.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            blocks.emplace_back();
            Block& b = blocks.back();
            const std::string p = prefix + "." + std::to_string(i);
            b.ln1 = add_layer_norm(p + ".ln1", d);
            b.self_attn = add_attention(p + (decoder ? ".self_attn" : ".attn"), d, heads);
            b.ln2 = add_layer_norm(p + ".ln2", d);
            if (decoder) {
                b.cross_attn = add_attention(p + ".cross_attn", d, heads);
                b.ln3 = add_layer_norm(p + ".ln3", d);
            }
            add_linear(b.fc1, p + ".mlp.fc1", d, d_ff);
            add_linear(b.fc2, p + ".mlp.fc2", d_ff, d);
        }
    }
};

void check_sizes(const char* model, std::initializer_list<std::pair<const char*, std::size_t>> sizes, std::size_t d,
                 std::size_t heads)
{
    for (const auto& size : sizes)
        if (size.second == 0)
            model_error(std::string(model) + ": " + size.first + " must be at least 1, got 0");
    if (d % heads != 0)
        model_error(std::string(model) + ": d_model (" + std::to_string(d) + ") must be divisible by num_heads (" +
                    std::to_string(heads) + ")");
}

void check_tokens(const char* what, const std::vector<std::int32_t>& tokens, std::size_t vocab, std::size_t max_len)
{
    if (tokens.empty()) model_error(std::string(what) + ": expected at least 1 token, got 0");
    if (tokens.size() > max_len)
        model_error(std::string(what) + ": at most " + std::to_string(max_len) + " tokens (the model's max_len), got " +
                    std::to_string(tokens.size()));
    for (std::size_t t = 0; t < tokens.size(); ++t)
        if (tokens[t] < 0 || std::size_t(tokens[t]) >= vocab)
            model_error(std::string(what) + "[" + std::to_string(t) + "]: token id " + std::to_string(tokens[t]) +
                        " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
}

// A head mask must be empty or have one flag per head of every layer of its stack.
void check_head_mask(const char* what, const HeadMask& mask, std::size_t layers, std::size_t heads)
{
    if (!mask.empty() && mask.size() != layers * heads)
        model_error(std::string(what) + ": expected " + std::to_string(layers * heads) + " flags (" +
                    std::to_string(layers) + " layers of " + std::to_string(heads) + " heads) or none, got " +
                    std::to_string(mask.size()));
}

// Layer `layer`'s flags inside a stack's mask, or null when nothing is ablated.
const std::uint8_t* layer_heads(const HeadMask& mask, std::size_t layer, std::size_t heads)
{
    return mask.empty() ? nullptr : mask.data() + layer * heads;
}

// x[t] = token_embedding[tokens[t]] + position_embedding[first_position + t]
void embed(const Parameter& tokens_table, const Parameter& positions_table, const std::int32_t* tokens,
           std::size_t count, std::size_t first_position, std::size_t d, float* x)
{
    for (std::size_t t = 0; t < count; ++t) {
        const float* tok = tokens_table.data.data() + std::size_t(tokens[t]) * d;
        const float* pos = positions_table.data.data() + (first_position + t) * d;
        for (std::size_t c = 0; c < d; ++c) x[t * d + c] = tok[c] + pos[c];
    }
}

// x += fc2(gelu(fc1(ln(x)))) for `rows` rows; `h` holds rows·d, `u` rows·d_ff.
void residual_mlp(const Block& b, const LayerNorm& ln, float* x, std::size_t rows, std::size_t d, float* h, float* u)
{
    ln.apply(x, rows, d, h);
    b.fc1.apply(h, rows, u);
    kernels::gelu_inplace{}(arch{}, u, rows * b.fc1.out);
    b.fc2.apply(u, rows, h);
    kernels::add_inplace{}(arch{}, x, rows * d, h);
}

// x += attention(ln(x), memory) over T rows; weights (may be null) [H, T, S].
void residual_attention(MultiHeadAttention& attention, const LayerNorm& ln, float* x, std::size_t T,
                        const float* memory, std::size_t S, bool causal, std::size_t d, float* h, float* a,
                        float* weights, const std::uint8_t* ablate_heads)
{
    ln.apply(x, T, d, h);
    ForwardOptions options;
    options.causal = causal;
    options.need_weights = weights != nullptr;
    options.ablate_heads = ablate_heads;
    attention.forward(h, memory ? memory : h, memory ? memory : h, {1, T, memory ? S : T}, options, a, weights);
    kernels::add_inplace{}(arch{}, x, T * d, a);
}

// x += self_attn(ln1(x)) for the one new position `position`, appending its key and value to the caches;
// the new row's weights [H, position + 1] go to `weights` when it is not null.
void cached_self_attention(const Block& b, float* x, std::size_t d, float* keys, float* values, std::size_t position,
                           float* h, float* a, float* weights, const std::uint8_t* ablate_heads)
{
    ForwardOptions options;  // the cache holds only the past: no causal mask needed
    options.need_weights = weights != nullptr;
    options.ablate_heads = ablate_heads;
    b.ln1.apply(x, 1, d, h);
    b.self_attn->project_key_value(h, h, 1, keys + position * d, values + position * d);
    b.self_attn->forward_projected(h, 1, keys, values, position + 1, options, a, weights);
    kernels::add_inplace{}(arch{}, x, d, a);
}

std::int32_t argmax(const float* logits, std::size_t n)
{
    return std::int32_t(std::max_element(logits, logits + n) - logits);
}

// One block's attention weights inside an [L, H, rows, cols] tensor.
float* layer_slice(Tensor& t, std::size_t layer)
{
    return t.data.empty() ? nullptr : t.data.data() + layer * (t.data.size() / t.shape[0]);
}

}  // namespace detail

using detail::ModelParts;

StateDictModel::StateDictModel() : parts_(std::make_unique<ModelParts>()) {}
StateDictModel::~StateDictModel() = default;

std::vector<std::string> StateDictModel::state_dict_keys() const { return parts_->keys; }

Shape StateDictModel::state_dict_shape(const std::string& key) const
{
    auto it = parts_->parameters.find(key);
    if (it != parts_->parameters.end()) return it->second.shape;
    for (const auto& attention : parts_->attentions) {
        const std::string& prefix = attention.first;
        if (key.size() > prefix.size() + 1 && key.compare(0, prefix.size(), prefix) == 0 && key[prefix.size()] == '.') {
            const std::string inner = key.substr(prefix.size() + 1);
            for (const std::string& k : attention.second->state_dict_keys())
                if (k == inner) return attention.second->state_dict_shape(inner);
        }
    }
    detail::model_error("load_state_dict: unexpected key '" + key + "' (the model has " +
                        std::to_string(parts_->keys.size()) + " keys such as '" + parts_->keys.front() + "')");
}

void StateDictModel::load_state_dict(const std::map<std::string, TensorView>& state)
{
    for (const auto& entry : state) {
        const Shape expected = state_dict_shape(entry.first);
        if (entry.second.shape != expected)
            detail::model_error("load_state_dict: '" + entry.first + "': expected shape " + to_string(expected) +
                                ", got " + to_string(entry.second.shape));
        if (!entry.second.data) detail::model_error("load_state_dict: '" + entry.first + "': data is null");
    }
    for (const std::string& key : parts_->keys)
        if (!state.count(key))
            detail::model_error("load_state_dict: missing key '" + key + "' of shape " + to_string(state_dict_shape(key)));

    for (auto& p : parts_->parameters) {
        const TensorView& source = state.at(p.first);
        std::copy(source.data, source.data + p.second.data.size(), p.second.data.begin());
    }
    for (auto& attention : parts_->attentions) {
        std::map<std::string, TensorView> inner;
        for (const std::string& k : attention.second->state_dict_keys()) inner.emplace(k, state.at(attention.first + "." + k));
        attention.second->load_state_dict(inner);
    }
    for (detail::Linear* linear : parts_->linears) linear->repack();
}

namespace {

// logits[rows × vocab] = head(final_norm(x)); `h` holds rows·d.
void logits_of(const ModelParts& m, const float* x, std::size_t rows, std::size_t d, float* h, float* logits)
{
    m.final_norm.apply(x, rows, d, h);
    m.head.apply(h, rows, logits);
}

}  // namespace

DecoderLM::DecoderLM(const DecoderLMConfig& c) : config_(c) { build(nullptr); }

DecoderLM::DecoderLM(const DecoderLMConfig& c, const std::map<std::string, TensorView>& state) : config_(c)
{
    build(&state);
    load_state_dict(state);
}

void DecoderLM::build(const std::map<std::string, TensorView>* expected)
{
    const DecoderLMConfig& c = config_;
    detail::check_sizes("DecoderLM", {{"vocab_size", c.vocab_size}, {"max_len", c.max_len}, {"d_model", c.d_model},
                                      {"num_heads", c.num_heads}, {"d_ff", c.d_ff}, {"num_layers", c.num_layers}},
                        c.d_model, c.num_heads);
    ModelParts& m = *parts_;
    m.expected = expected;
    m.token_embedding = m.add("tok_emb.weight", {c.vocab_size, c.d_model});
    m.position_embedding = m.add("pos_emb.weight", {c.max_len, c.d_model});
    m.add_blocks(m.decoder_blocks, "blocks", c.num_layers, false, c.d_model, c.num_heads, c.d_ff);
    m.final_norm = m.add_layer_norm("ln_f", c.d_model);
    m.add_linear(m.head, "head", c.d_model, c.vocab_size);
    m.expected = nullptr;
    if (!expected)
        for (detail::Linear* linear : m.linears) linear->repack();  // a load repacks anyway
}

DecoderLM::Output DecoderLM::forward(const std::vector<std::int32_t>& tokens, bool need_attention,
                                     const HeadMask& ablate)
{
    detail::check_tokens("DecoderLM.forward: tokens", tokens, config_.vocab_size, config_.max_len);
    detail::check_head_mask("DecoderLM.forward: ablate", ablate, config_.num_layers, config_.num_heads);
    const ModelParts& m = *parts_;
    const std::size_t T = tokens.size(), d = config_.d_model, H = config_.num_heads, L = config_.num_layers;
    std::vector<float> x(T * d), h(T * d), a(T * d), u(T * config_.d_ff);
    detail::embed(*m.token_embedding, *m.position_embedding, tokens.data(), T, 0, d, x.data());

    Output out;
    if (need_attention) out.attention = Tensor({L, H, T, T});
    for (std::size_t l = 0; l < L; ++l) {
        const detail::Block& b = m.decoder_blocks[l];
        detail::residual_attention(*b.self_attn, b.ln1, x.data(), T, nullptr, 0, true, d, h.data(), a.data(),
                                   detail::layer_slice(out.attention, l), detail::layer_heads(ablate, l, H));
        detail::residual_mlp(b, b.ln2, x.data(), T, d, h.data(), u.data());
    }
    out.logits = Tensor({T, config_.vocab_size});
    logits_of(m, x.data(), T, d, h.data(), out.logits.data.data());
    return out;
}

std::vector<std::int32_t> DecoderLM::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                              std::int32_t stop_token, const HeadMask& ablate)
{
    detail::check_tokens("DecoderLM.generate: prompt", prompt, config_.vocab_size, config_.max_len);
    detail::check_head_mask("DecoderLM.generate: ablate", ablate, config_.num_layers, config_.num_heads);
    const ModelParts& m = *parts_;
    const std::size_t d = config_.d_model, L = config_.num_layers, V = config_.vocab_size;
    // The caches hold only the positions this call can reach, not max_len of them.
    const std::size_t capacity = std::min(config_.max_len, prompt.size() + std::min(max_new_tokens, config_.max_len));
    std::vector<float> key_cache(L * capacity * d), value_cache(key_cache.size());
    std::vector<float> x(d), h(d), a(d), u(config_.d_ff), logits(V);

    // One position through every block, appending its keys and values to the caches.
    auto step = [&](std::int32_t token, std::size_t position) {
        detail::embed(*m.token_embedding, *m.position_embedding, &token, 1, position, d, x.data());
        for (std::size_t l = 0; l < L; ++l) {
            const detail::Block& b = m.decoder_blocks[l];
            float* keys = key_cache.data() + l * capacity * d;
            float* values = value_cache.data() + l * capacity * d;
            detail::cached_self_attention(b, x.data(), d, keys, values, position, h.data(), a.data(), nullptr,
                                          detail::layer_heads(ablate, l, config_.num_heads));
            detail::residual_mlp(b, b.ln2, x.data(), 1, d, h.data(), u.data());
        }
        logits_of(m, x.data(), 1, d, h.data(), logits.data());
    };

    std::size_t position = 0;
    for (std::int32_t token : prompt) step(token, position++);
    std::vector<std::int32_t> generated;
    while (generated.size() < max_new_tokens) {
        const std::int32_t next = detail::argmax(logits.data(), V);
        generated.push_back(next);
        if (next == stop_token || position == config_.max_len) break;
        step(next, position++);
    }
    return generated;
}

Seq2Seq::Seq2Seq(const Seq2SeqConfig& c) : config_(c) { build(nullptr); }

Seq2Seq::Seq2Seq(const Seq2SeqConfig& c, const std::map<std::string, TensorView>& state) : config_(c)
{
    build(&state);
    load_state_dict(state);
}

void Seq2Seq::build(const std::map<std::string, TensorView>* expected)
{
    const Seq2SeqConfig& c = config_;
    detail::check_sizes("Seq2Seq", {{"src_vocab_size", c.src_vocab_size}, {"tgt_vocab_size", c.tgt_vocab_size},
                                    {"max_src_len", c.max_src_len}, {"max_tgt_len", c.max_tgt_len},
                                    {"d_model", c.d_model}, {"num_heads", c.num_heads}, {"d_ff", c.d_ff},
                                    {"encoder_layers", c.encoder_layers}, {"decoder_layers", c.decoder_layers}},
                        c.d_model, c.num_heads);
    ModelParts& m = *parts_;
    m.expected = expected;
    m.source_embedding = m.add("src_tok_emb.weight", {c.src_vocab_size, c.d_model});
    m.source_position_embedding = m.add("src_pos_emb.weight", {c.max_src_len, c.d_model});
    m.add_blocks(m.encoder_blocks, "enc_blocks", c.encoder_layers, false, c.d_model, c.num_heads, c.d_ff);
    m.encoder_norm = m.add_layer_norm("enc_ln_f", c.d_model);
    m.token_embedding = m.add("tgt_tok_emb.weight", {c.tgt_vocab_size, c.d_model});
    m.position_embedding = m.add("tgt_pos_emb.weight", {c.max_tgt_len, c.d_model});
    m.add_blocks(m.decoder_blocks, "dec_blocks", c.decoder_layers, true, c.d_model, c.num_heads, c.d_ff);
    m.final_norm = m.add_layer_norm("dec_ln_f", c.d_model);
    m.add_linear(m.head, "head", c.d_model, c.tgt_vocab_size);
    m.expected = nullptr;
    if (!expected)
        for (detail::Linear* linear : m.linears) linear->repack();  // a load repacks anyway
}

namespace {

// memory[S × d] = enc_ln_f(encoder(source)); encoder attention into `attention` [layers, H, S, S] when it has data.
std::vector<float> encode(const ModelParts& m, const Seq2SeqConfig& c, const std::vector<std::int32_t>& source,
                          Tensor& attention, const HeadMask& ablate)
{
    const std::size_t S = source.size(), d = c.d_model;
    std::vector<float> x(S * d), h(S * d), a(S * d), u(S * c.d_ff);
    detail::embed(*m.source_embedding, *m.source_position_embedding, source.data(), S, 0, d, x.data());
    for (std::size_t l = 0; l < c.encoder_layers; ++l) {
        const detail::Block& b = m.encoder_blocks[l];
        detail::residual_attention(*b.self_attn, b.ln1, x.data(), S, nullptr, 0, false, d, h.data(), a.data(),
                                   detail::layer_slice(attention, l), detail::layer_heads(ablate, l, c.num_heads));
        detail::residual_mlp(b, b.ln2, x.data(), S, d, h.data(), u.data());
    }
    m.encoder_norm.apply(x.data(), S, d, h.data());
    return h;
}

void check_ablation(const char* what, const Seq2SeqAblation& ablate, const Seq2SeqConfig& c)
{
    const std::string name(what);
    detail::check_head_mask((name + ".encoder_self").c_str(), ablate.encoder_self, c.encoder_layers, c.num_heads);
    detail::check_head_mask((name + ".decoder_self").c_str(), ablate.decoder_self, c.decoder_layers, c.num_heads);
    detail::check_head_mask((name + ".decoder_cross").c_str(), ablate.decoder_cross, c.decoder_layers, c.num_heads);
}

}  // namespace

Seq2Seq::Output Seq2Seq::forward(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                                 bool need_attention, const Seq2SeqAblation& ablate)
{
    detail::check_tokens("Seq2Seq.forward: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("Seq2Seq.forward: target", target, config_.tgt_vocab_size, config_.max_tgt_len);
    check_ablation("Seq2Seq.forward: ablate", ablate, config_);
    const ModelParts& m = *parts_;
    const std::size_t S = source.size(), T = target.size(), d = config_.d_model, H = config_.num_heads;
    Output out;
    if (need_attention) {
        out.encoder_attention = Tensor({config_.encoder_layers, H, S, S});
        out.decoder_attention = Tensor({config_.decoder_layers, H, T, T});
        out.cross_attention = Tensor({config_.decoder_layers, H, T, S});
    }
    const std::vector<float> memory = encode(m, config_, source, out.encoder_attention, ablate.encoder_self);

    std::vector<float> x(T * d), h(T * d), a(T * d), u(T * config_.d_ff);
    detail::embed(*m.token_embedding, *m.position_embedding, target.data(), T, 0, d, x.data());
    for (std::size_t l = 0; l < config_.decoder_layers; ++l) {
        const detail::Block& b = m.decoder_blocks[l];
        detail::residual_attention(*b.self_attn, b.ln1, x.data(), T, nullptr, 0, true, d, h.data(), a.data(),
                                   detail::layer_slice(out.decoder_attention, l),
                                   detail::layer_heads(ablate.decoder_self, l, H));
        detail::residual_attention(*b.cross_attn, b.ln2, x.data(), T, memory.data(), S, false, d, h.data(), a.data(),
                                   detail::layer_slice(out.cross_attention, l),
                                   detail::layer_heads(ablate.decoder_cross, l, H));
        detail::residual_mlp(b, b.ln3, x.data(), T, d, h.data(), u.data());
    }
    out.logits = Tensor({T, config_.tgt_vocab_size});
    logits_of(m, x.data(), T, d, h.data(), out.logits.data.data());
    return out;
}

Seq2Seq::Decoded Seq2Seq::greedy_decode(const std::vector<std::int32_t>& source, std::int32_t bos, std::int32_t eos,
                                        std::size_t max_steps, const Seq2SeqAblation& ablate)
{
    detail::check_tokens("Seq2Seq.greedy_decode: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("Seq2Seq.greedy_decode: bos", {bos}, config_.tgt_vocab_size, 1);
    check_ablation("Seq2Seq.greedy_decode: ablate", ablate, config_);
    const ModelParts& m = *parts_;
    const std::size_t S = source.size(), d = config_.d_model, H = config_.num_heads, L = config_.decoder_layers;
    const std::size_t V = config_.tgt_vocab_size, steps = std::min(max_steps, config_.max_tgt_len);
    Decoded out;
    out.encoder_attention = Tensor({config_.encoder_layers, H, S, S});
    const std::vector<float> memory = encode(m, config_, source, out.encoder_attention, ablate.encoder_self);

    // Cross-attention keys and values depend only on the source: projected once, not per step.
    std::vector<float> cross_keys(L * S * d), cross_values(L * S * d);
    for (std::size_t l = 0; l < L; ++l)
        m.decoder_blocks[l].cross_attn->project_key_value(memory.data(), memory.data(), S, cross_keys.data() + l * S * d,
                                                          cross_values.data() + l * S * d);
    std::vector<float> key_cache(L * steps * d), value_cache(key_cache.size());
    std::vector<float> x(d), h(d), a(d), u(config_.d_ff), logits(V);
    std::vector<float> self_weights(L * H * steps * steps, 0.f), cross_weights(L * H * steps * S), step_weights(H * std::max(S, steps));
    ForwardOptions cross_options;

    std::int32_t token = bos;
    for (std::size_t t = 0; t < steps; ++t) {
        detail::embed(*m.token_embedding, *m.position_embedding, &token, 1, t, d, x.data());
        for (std::size_t l = 0; l < L; ++l) {
            const detail::Block& b = m.decoder_blocks[l];
            float* keys = key_cache.data() + l * steps * d;
            float* values = value_cache.data() + l * steps * d;
            detail::cached_self_attention(b, x.data(), d, keys, values, t, h.data(), a.data(), step_weights.data(),
                                          detail::layer_heads(ablate.decoder_self, l, H));
            for (std::size_t hh = 0; hh < H; ++hh)
                std::copy(step_weights.begin() + hh * (t + 1), step_weights.begin() + (hh + 1) * (t + 1),
                          self_weights.begin() + ((l * H + hh) * steps + t) * steps);

            b.ln2.apply(x.data(), 1, d, h.data());
            cross_options.ablate_heads = detail::layer_heads(ablate.decoder_cross, l, H);
            b.cross_attn->forward_projected(h.data(), 1, cross_keys.data() + l * S * d, cross_values.data() + l * S * d,
                                            S, cross_options, a.data(), step_weights.data());
            for (std::size_t hh = 0; hh < H; ++hh)
                std::copy(step_weights.begin() + hh * S, step_weights.begin() + (hh + 1) * S,
                          cross_weights.begin() + ((l * H + hh) * steps + t) * S);
            kernels::add_inplace{}(detail::arch{}, x.data(), d, a.data());
            detail::residual_mlp(b, b.ln3, x.data(), 1, d, h.data(), u.data());
        }
        logits_of(m, x.data(), 1, d, h.data(), logits.data());
        token = detail::argmax(logits.data(), V);
        out.tokens.push_back(token);
        if (token == eos) break;
    }

    const std::size_t N = out.tokens.size();
    out.decoder_attention = Tensor({L, H, N, N});
    out.cross_attention = Tensor({L, H, N, S});
    for (std::size_t lh = 0; lh < L * H; ++lh)
        for (std::size_t t = 0; t < N; ++t) {
            std::copy_n(self_weights.begin() + (lh * steps + t) * steps, N, out.decoder_attention.data.begin() + (lh * N + t) * N);
            std::copy_n(cross_weights.begin() + (lh * steps + t) * S, S, out.cross_attention.data.begin() + (lh * N + t) * S);
        }
    return out;
}

}  // namespace attnscope
