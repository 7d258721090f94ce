// Seq2SeqModel: an encoder–decoder of pre-LayerNorm blocks; its config checks, the teacher-forced pass with every
// attention map (trace() runs it too: attention_trace.cpp), and greedy decoding with self-attention caches and
// cross-attention keys projected once.
// Orchestration only (the steps are in transformer_layers.cpp): built -O2, smaller than -O3 and as fast.
#include <algorithm>

#include "json.hpp"
#include "model_parts.hpp"

namespace attnscope {

using detail::ModelParts;
using detail::checked_product;

// Constructed as LanguageModel is: the shared build-then-load is StateDictModel::build, the rest this model's own.
Seq2SeqModel::Seq2SeqModel(const Seq2SeqModelConfig& c) : config_(c) { build(nullptr); }

Seq2SeqModel::Seq2SeqModel(const Seq2SeqModelConfig& c, const std::map<std::string, TensorView>& state) : config_(c) { build(&state); }

void Seq2SeqModel::add_parts(ModelParts& m)
{
    const Seq2SeqModelConfig& c = config_;
    detail::check_sizes("Seq2SeqModel", {{"src_vocab_size", c.src_vocab_size}, {"tgt_vocab_size", c.tgt_vocab_size},
                                         {"max_src_len", c.max_src_len}, {"max_tgt_len", c.max_tgt_len},
                                         {"d_model", c.d_model}, {"num_heads", c.num_heads}, {"d_ff", c.d_ff},
                                         {"num_encoder_layers", c.num_encoder_layers},
                                         {"num_decoder_layers", c.num_decoder_layers}},
                        c.d_model, c.num_heads);
    m.source_embedding = m.add("src_tok_emb.weight", {c.src_vocab_size, c.d_model});
    m.source_position_embedding = m.add("src_pos_emb.weight", {c.max_src_len, c.d_model});
    m.add_blocks(m.encoder_blocks, "enc_blocks", c.num_encoder_layers, false, c.d_model, c.num_heads, c.d_ff);
    m.encoder_norm = m.add_layer_norm("enc_ln_f", c.d_model);
    m.token_embedding = m.add("tgt_tok_emb.weight", {c.tgt_vocab_size, c.d_model});
    m.position_embedding = m.add("tgt_pos_emb.weight", {c.max_tgt_len, c.d_model});
    m.add_blocks(m.decoder_blocks, "dec_blocks", c.num_decoder_layers, true, c.d_model, c.num_heads, c.d_ff);
    m.final_norm = m.add_layer_norm("dec_ln_f", c.d_model);
    m.add_linear(m.head, "head", c.d_model, c.tgt_vocab_size);
}

namespace detail {

void check_seq2seq_ablation(const char* what, const Seq2SeqAblation& ablate, const Seq2SeqModelConfig& c)
{
    // One joined name in a loop, not three chains of std::string's +: that costs the .wasm several times the code.
    const struct {
        const char* name;
        const HeadMask& mask;
        std::size_t layers;
    } stacks[] = {{".encoder_self", ablate.encoder_self, c.num_encoder_layers},
                  {".decoder_self", ablate.decoder_self, c.num_decoder_layers},
                  {".decoder_cross", ablate.decoder_cross, c.num_decoder_layers}};
    for (const auto& s : stacks) detail::check_head_mask(json::join({what, s.name}).c_str(), s.mask, s.layers, c.num_heads);
}

}  // namespace detail

namespace {

// memory[S × d] = enc_ln_f(encoder(source)); encoder attention into `attention` [layers, H, S, S] when it has data.
// With a trace of the encoder's self-attention the pass ends at its layer (nothing after it changes what it
// records) and returns nothing.
std::vector<float> encode(const ModelParts& m, const Seq2SeqModelConfig& c, const std::vector<std::int32_t>& source,
                          Tensor& attention, const HeadMask& ablate, AttentionTrace* trace, const char* call)
{
    const std::size_t S = source.size(), d = c.d_model;
    std::vector<float> x = detail::work_floats({S, d}, call), h = x, a = x, u = detail::work_floats({S, c.d_ff}, call);
    detail::embed(*m.source_embedding, *m.source_position_embedding, source.data(), S, 0, d, x.data());
    for (std::size_t l = 0; l < c.num_encoder_layers; ++l) {
        const detail::Block& b = m.encoder_blocks[l];
        AttentionTrace* here = trace && trace->layer == l ? trace : nullptr;
        detail::residual_attention(*b.self_attn, b.ln1, x.data(), S, nullptr, 0, false, d, h.data(), a.data(),
                                   detail::layer_slice(attention, l),
                                   detail::layer_heads(ablate, l, c.num_heads), here);
        if (here) return {};
        detail::residual_mlp(b, b.ln2, x.data(), S, d, h.data(), u.data());
    }
    m.encoder_norm.apply(x.data(), S, d, h.data());
    return h;
}


}  // namespace

Seq2SeqModel::Output Seq2SeqModel::forward(const std::vector<std::int32_t>& source,
                                           const std::vector<std::int32_t>& target, bool need_attention,
                                           const Seq2SeqAblation& ablate)
{
    detail::check_tokens("Seq2SeqModel.forward: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("Seq2SeqModel.forward: target", target, config_.tgt_vocab_size, config_.max_tgt_len);
    detail::check_seq2seq_ablation("Seq2SeqModel.forward: ablate", ablate, config_);
    return run(source, target, need_attention, ablate, nullptr, Seq2SeqAttention::encoder_self, "Seq2SeqModel.forward");
}

Seq2SeqModel::Output Seq2SeqModel::run(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                                       bool need_attention, const Seq2SeqAblation& ablate, AttentionTrace* trace,
                                       Seq2SeqAttention which, const char* call)
{
    const ModelParts& m = *parts_;
    const std::size_t S = source.size(), T = target.size(), d = config_.d_model, H = config_.num_heads;
    // Every buffer's size is checked before the first is allocated (size_t is 32 bits in WASM). The messages are
    // literals: strings built here would cost the .wasm.
    const std::size_t Le = config_.num_encoder_layers, Ld = config_.num_decoder_layers;
    checked_product({S, config_.d_ff}, trace ? "Seq2SeqModel.trace: source tokens × d_ff" : "Seq2SeqModel.forward: source tokens × d_ff", sizeof(float));
    checked_product({T, config_.d_ff}, trace ? "Seq2SeqModel.trace: target tokens × d_ff" : "Seq2SeqModel.forward: target tokens × d_ff", sizeof(float));
    if (!trace) checked_product({T, config_.tgt_vocab_size}, "Seq2SeqModel.forward: logits, target tokens × tgt_vocab_size", sizeof(float));
    if (need_attention) {
        checked_product({Le, H, S, S}, "Seq2SeqModel.forward: encoder attention, n_enc_layers × n_heads × source tokens²", sizeof(float));
        checked_product({Ld, H, T, T}, "Seq2SeqModel.forward: decoder attention, n_dec_layers × n_heads × target tokens²", sizeof(float));
        checked_product({Ld, H, T, S}, "Seq2SeqModel.forward: cross attention, n_dec_layers × n_heads × target × source tokens", sizeof(float));
    }
    Output out;
    if (need_attention) {
        out.encoder_attention = Tensor({Le, H, S, S});
        out.decoder_attention = Tensor({Ld, H, T, T});
        out.cross_attention = Tensor({Ld, H, T, S});
    }
    const bool encoder_trace = trace && which == Seq2SeqAttention::encoder_self;
    const std::vector<float> memory = encode(m, config_, source, out.encoder_attention, ablate.encoder_self,
                                             encoder_trace ? trace : nullptr, call);
    if (encoder_trace) return out;

    std::vector<float> x = detail::work_floats({T, d}, call), h = x, a = x, u = detail::work_floats({T, config_.d_ff}, call);
    detail::embed(*m.token_embedding, *m.position_embedding, target.data(), T, 0, d, x.data());
    for (std::size_t l = 0; l < Ld; ++l) {
        const detail::Block& b = m.decoder_blocks[l];
        const bool traced = trace && trace->layer == l;
        AttentionTrace* self_trace = traced && which == Seq2SeqAttention::decoder_self ? trace : nullptr;
        AttentionTrace* cross_trace = traced && which == Seq2SeqAttention::decoder_cross ? trace : nullptr;
        detail::residual_attention(*b.self_attn, b.ln1, x.data(), T, nullptr, 0, true, d, h.data(), a.data(),
                                   detail::layer_slice(out.decoder_attention, l),
                                   detail::layer_heads(ablate.decoder_self, l, H), self_trace);
        if (self_trace) return out;  // nothing after the traced attention changes what it recorded
        detail::residual_attention(*b.cross_attn, b.ln2, x.data(), T, memory.data(), S, false, d, h.data(), a.data(),
                                   detail::layer_slice(out.cross_attention, l),
                                   detail::layer_heads(ablate.decoder_cross, l, H), cross_trace);
        if (cross_trace) return out;
        detail::residual_mlp(b, b.ln3, x.data(), T, d, h.data(), u.data());
    }
    out.logits = Tensor({T, config_.tgt_vocab_size});
    detail::logits_of(m, x.data(), T, d, h.data(), out.logits.data.data());
    return out;
}

Seq2SeqModel::Translation Seq2SeqModel::translate(const std::vector<std::int32_t>& source, std::int32_t bos,
                                                  std::int32_t eos, std::size_t max_steps, const Seq2SeqAblation& ablate)
{
    const char* call = "Seq2SeqModel.translate";
    detail::check_tokens("Seq2SeqModel.translate: source", source, config_.src_vocab_size, config_.max_src_len);
    detail::check_tokens("Seq2SeqModel.translate: bos", {bos}, config_.tgt_vocab_size, 1);
    detail::check_seq2seq_ablation("Seq2SeqModel.translate: ablate", ablate, config_);
    const ModelParts& m = *parts_;
    const std::size_t S = source.size(), d = config_.d_model, H = config_.num_heads, L = config_.num_decoder_layers;
    const std::size_t V = config_.tgt_vocab_size, steps = std::min(max_steps, max_steps_limit());
    // The result of the longest decoding this call allows must be addressable: with 32-bit sizes,
    // L·H·steps² wraps for sizes a small file can claim. The buffers below then grow with the steps actually
    // taken, so a model that stops early never holds the maximum.
    // The messages are joined (json::join): a chain of std::string + costs the .wasm several times the code.
    const std::string steps_text = json::join({json::Num(steps), " steps (max_steps ", json::Num(max_steps),
                                               ", at most max_tgt_len ", json::Num(config_.max_tgt_len), ")"});
    checked_product({L, H, steps, steps},
                    json::join({"Seq2SeqModel.translate: the decoder attention of ", steps_text, ", n_dec_layers × n_heads × steps²; pass a smaller max_steps"}).c_str(),
                    sizeof(float));
    checked_product({L, H, steps, S},
                    json::join({"Seq2SeqModel.translate: the cross attention of ", steps_text, ", n_dec_layers × n_heads × steps × source tokens; pass a smaller max_steps"}).c_str(),
                    sizeof(float));
    checked_product({L, steps, d}, json::join({"Seq2SeqModel.translate: the key and value caches of ", steps_text, ", n_dec_layers × steps × d_model"}).c_str(), sizeof(float));
    checked_product({L, S, d}, "Seq2SeqModel.translate: the cross-attention keys, n_dec_layers × source tokens × d_model", sizeof(float));
    checked_product({config_.num_encoder_layers, H, S, S}, "Seq2SeqModel.translate: encoder attention, n_enc_layers × n_heads × source tokens²", sizeof(float));
    checked_product({S, config_.d_ff}, "Seq2SeqModel.translate: source tokens × d_ff", sizeof(float));
    Translation out;
    out.encoder_attention = Tensor({config_.num_encoder_layers, H, S, S});
    const std::vector<float> memory = encode(m, config_, source, out.encoder_attention, ablate.encoder_self, nullptr, call);

    // Cross-attention keys and values depend only on the source: projected once, not per step.
    const std::size_t Sd = S * d;  // checked above
    std::vector<float> cross_keys = detail::work_floats({L, S, d}, call), cross_values = cross_keys;
    for (std::size_t l = 0; l < L; ++l)
        m.decoder_blocks[l].cross_attn->project_key_value(memory.data(), memory.data(), S, cross_keys.data() + l * Sd,
                                                          cross_values.data() + l * Sd);
    // Per layer, the keys and values of the steps so far; per step, every head's new row of self-attention
    // weights (t + 1 floats at step t) and of cross-attention weights (S floats): all grow with the steps taken.
    std::vector<std::vector<float>> key_cache(L), value_cache(L);
    std::vector<float> self_rows, cross_rows;
    std::vector<float> x(d), h(d), a(d), u = detail::work_floats({config_.d_ff}, call), logits = detail::work_floats({V}, call);
    std::vector<float> step_weights = detail::work_floats({H, std::max<std::size_t>(S, steps)}, call);
    ForwardOptions cross_options;

    std::int32_t token = bos;
    for (std::size_t t = 0; t < steps; ++t) {
        detail::embed(*m.token_embedding, *m.position_embedding, &token, 1, t, d, x.data());
        for (std::size_t l = 0; l < L; ++l) {
            const detail::Block& b = m.decoder_blocks[l];
            key_cache[l].resize((t + 1) * d);  // ≤ steps·d: checked above
            value_cache[l].resize((t + 1) * d);
            detail::cached_self_attention(b, x.data(), d, key_cache[l].data(), value_cache[l].data(), t, h.data(),
                                          a.data(), step_weights.data(), detail::layer_heads(ablate.decoder_self, l, H));
            self_rows.insert(self_rows.end(), step_weights.begin(), step_weights.begin() + H * (t + 1));

            b.ln2.apply(x.data(), 1, d, h.data());
            cross_options.ablate_heads = detail::layer_heads(ablate.decoder_cross, l, H);
            b.cross_attn->forward_projected(h.data(), 1, cross_keys.data() + l * Sd, cross_values.data() + l * Sd,
                                            S, cross_options, a.data(), step_weights.data());
            cross_rows.insert(cross_rows.end(), step_weights.begin(), step_weights.begin() + H * S);
            detail::add_inplace(x.data(), d, a.data());
            detail::residual_mlp(b, b.ln3, x.data(), 1, d, h.data(), u.data());
        }
        detail::logits_of(m, x.data(), 1, d, h.data(), logits.data());
        token = detail::argmax(logits.data(), V);
        out.tokens.push_back(token);
        if (token == eos) break;
    }

    // Step t's rows sit at L·H·t(t+1)/2 (self) and L·H·S·t (cross), layer by layer, head by head. The
    // self-attention rows are causal: the columns after t stay zero.
    const std::size_t N = out.tokens.size();
    out.decoder_attention = Tensor({L, H, N, N});
    out.cross_attention = Tensor({L, H, N, S});
    for (std::size_t t = 0; t < N; ++t) {
        const float* self_step = self_rows.data() + L * H * (t * (t + 1) / 2);
        const float* cross_step = cross_rows.data() + L * H * S * t;
        for (std::size_t lh = 0; lh < L * H; ++lh) {
            std::copy_n(self_step + lh * (t + 1), t + 1, out.decoder_attention.data.begin() + (lh * N + t) * N);
            std::copy_n(cross_step + lh * S, S, out.cross_attention.data.begin() + (lh * N + t) * S);
        }
    }
    return out;
}

}  // namespace attnscope
