// LanguageModel: a GPT-style stack of pre-LayerNorm blocks; its config checks, the teacher-forced pass with every
// attention map (trace() runs it too: attention_trace.cpp), and greedy generation with a key/value cache.
// Orchestration only (the steps are in transformer_layers.cpp).
#include <algorithm>

#include "json.hpp"
#include "model_parts.hpp"

namespace attnscope {

using detail::ModelParts;
using detail::checked_product;

LanguageModel::LanguageModel(const LanguageModelConfig& c) : config_(c) { build(nullptr); }

LanguageModel::LanguageModel(const LanguageModelConfig& c, const std::map<std::string, TensorView>& state) : config_(c) { build(&state); }

void LanguageModel::add_parts(ModelParts& m)
{
    const LanguageModelConfig& c = config_;
    detail::check_sizes("LanguageModel", {{"vocab_size", c.vocab_size}, {"max_len", c.max_len}, {"d_model", c.d_model},
                                          {"num_heads", c.num_heads}, {"d_ff", c.d_ff}, {"num_layers", c.num_layers}},
                        c.d_model, c.num_heads);
    m.token_embedding = m.add("tok_emb.weight", {c.vocab_size, c.d_model});
    m.position_embedding = m.add("pos_emb.weight", {c.max_len, c.d_model});
    m.add_blocks(m.decoder_blocks, "blocks", c.num_layers, false, c.d_model, c.num_heads, c.d_ff);
    m.final_norm = m.add_layer_norm("ln_f", c.d_model);
    if (c.tie_head) m.add_tied_linear(m.head, m.token_embedding, "head", c.d_model, c.vocab_size);
    else m.add_linear(m.head, "head", c.d_model, c.vocab_size);
}

LanguageModel::Output LanguageModel::forward(const std::vector<std::int32_t>& tokens, bool need_attention,
                                             const HeadMask& ablate)
{
    detail::check_tokens("LanguageModel.forward: tokens", tokens, config_.vocab_size, config_.max_len);
    detail::check_head_mask("LanguageModel.forward: ablate", ablate, config_.num_layers, config_.num_heads);
    return run(tokens, need_attention, ablate, nullptr, "LanguageModel.forward");
}

LanguageModel::Output LanguageModel::run(const std::vector<std::int32_t>& tokens, bool need_attention,
                                         const HeadMask& ablate, AttentionTrace* trace, const char* call)
{
    const ModelParts& m = *parts_;
    const std::size_t T = tokens.size(), d = config_.d_model, H = config_.num_heads, L = config_.num_layers;
    // Every buffer's size is checked before the first is allocated: with 32-bit sizes (WASM), tokens × d_ff or
    // L·H·T² wraps for sizes a small file can claim. (Literal messages: strings built here would cost the .wasm.)
    checked_product({T, config_.d_ff}, trace ? "LanguageModel.trace: tokens × d_ff" : "LanguageModel.forward: tokens × d_ff", sizeof(float));
    if (!trace) checked_product({T, config_.vocab_size}, "LanguageModel.forward: logits, tokens × vocab_size", sizeof(float));
    if (need_attention) checked_product({L, H, T, T}, "LanguageModel.forward: attention, n_layers × n_heads × tokens²", sizeof(float));
    std::vector<float> x = detail::work_floats({T, d}, call), h = x, a = x, u = detail::work_floats({T, config_.d_ff}, call);
    detail::embed(*m.token_embedding, *m.position_embedding, tokens.data(), T, 0, d, x.data());

    Output out;
    if (need_attention) out.attention = Tensor({L, H, T, T});
    for (std::size_t l = 0; l < L; ++l) {
        const detail::Block& b = m.decoder_blocks[l];
        AttentionTrace* here = trace && trace->layer == l ? trace : nullptr;
        detail::residual_attention(*b.self_attn, b.ln1, x.data(), T, nullptr, 0, true, d, h.data(), a.data(),
                                   detail::layer_slice(out.attention, l),
                                   detail::layer_heads(ablate, l, H), here);
        if (here) return out;  // nothing after the traced attention changes what it recorded
        detail::residual_mlp(b, b.ln2, x.data(), T, d, h.data(), u.data());
    }
    out.logits = Tensor({T, config_.vocab_size});
    detail::logits_of(m, x.data(), T, d, h.data(), out.logits.data.data());
    return out;
}

std::vector<std::int32_t> LanguageModel::generate(const std::vector<std::int32_t>& prompt,
                                                  std::size_t max_new_tokens, std::int32_t stop_token,
                                                  const HeadMask& ablate)
{
    detail::check_tokens("LanguageModel.generate: prompt", prompt, config_.vocab_size, config_.max_len);
    detail::check_head_mask("LanguageModel.generate: ablate", ablate, config_.num_layers, config_.num_heads);
    const ModelParts& m = *parts_;
    const std::size_t d = config_.d_model, L = config_.num_layers, V = config_.vocab_size;
    // The caches hold only the positions this call reaches: they grow with the steps taken, up to `capacity`
    // positions, whose size is checked first.
    const std::size_t capacity = std::min(config_.max_len, detail::checked_add(prompt.size(), std::min(max_new_tokens, config_.max_len), "LanguageModel.generate: positions"));
    checked_product({L, capacity, d}, json::join({"LanguageModel.generate: the key and value caches of ", json::Num(capacity),
                                                  " positions, n_layers × positions × d_model"}).c_str(), sizeof(float));
    const char* call = "LanguageModel.generate";
    std::vector<std::vector<float>> key_cache(L), value_cache(L);
    std::vector<float> x(d), h(d), a(d), u = detail::work_floats({config_.d_ff}, call), logits = detail::work_floats({V}, call);

    // One position through every block, appending its keys and values to the caches.
    auto step = [&](std::int32_t token, std::size_t position) {
        detail::embed(*m.token_embedding, *m.position_embedding, &token, 1, position, d, x.data());
        for (std::size_t l = 0; l < L; ++l) {
            const detail::Block& b = m.decoder_blocks[l];
            key_cache[l].resize((position + 1) * d);  // position < capacity: checked above
            value_cache[l].resize((position + 1) * d);
            detail::cached_self_attention(b, x.data(), d, key_cache[l].data(), value_cache[l].data(), position, h.data(),
                                          a.data(), nullptr, detail::layer_heads(ablate, l, config_.num_heads));
            detail::residual_mlp(b, b.ln2, x.data(), 1, d, h.data(), u.data());
        }
        detail::logits_of(m, x.data(), 1, d, h.data(), logits.data());
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

}  // namespace attnscope
