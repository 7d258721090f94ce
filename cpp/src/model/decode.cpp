// Greedy decoding through the one forward pass: generate() (a causal model: the prompt in one pass, then one position
// per step over the key/value cache) and translate() (an encoder–decoder: the encoder once, cross-attention's keys and
// values once per layer, then one decoder position per step). Each new token costs O(positions).
#include <algorithm>
#include <stdexcept>

#include "../json.hpp"
#include "../sizes.hpp"
#include "pass.hpp"

namespace attnscope {

using json::Num;

namespace model {

void check_request(const plan::Plan& p, const Transformer::Request& r, const char* call);

namespace {

std::int32_t argmax(const float* x, std::size_t n) { return std::int32_t(std::max_element(x, x + n) - x); }

// Refuses, before any decoding, a worst case whose caches and maps would pass the budget: the message names the
// option that bounds it.
void check_budget(const char* call, std::uint64_t bytes, std::size_t steps, const char* option)
{
    if (bytes > Transformer::decode_budget_bytes)
        throw std::invalid_argument(json::join({call, ": ", option, " ", Num(steps), " could need ", Num(bytes >> 20),
                                                " MiB of caches and attention maps, more than the ",
                                                Num(Transformer::decode_budget_bytes >> 20), " MiB a call may take; pass a smaller ", option}));
}

}  // namespace
}  // namespace model

std::vector<std::int32_t> Transformer::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                                std::int32_t stop_token, const HeadMask& ablate, const char* call)
{
    const plan::Plan& p = impl_->plan;
    const plan::Stack& s = p.main();
    if (p.kind != plan::Kind::causal_lm || !impl_->config.has_lm_head)
        throw std::invalid_argument(json::join({call, ": ", p.kind != plan::Kind::causal_lm ? "this model is not a causal language model"
                                                                                           : "this checkpoint has no language-model head"}));
    Request r;
    r.tokens = prompt;
    r.ablate = ablate;
    model::check_request(p, r, call);
    // The caches hold only the positions this call can reach.
    const std::size_t capacity = std::min(s.max_positions, prompt.size() + std::min(max_new_tokens, s.max_positions));
    const std::uint64_t kv = s.layer(0).self.kv_width(), cache_floats = 2 * std::uint64_t(s.layers()) * capacity * kv;
    model::check_budget(call, cache_floats * sizeof(float), max_new_tokens, "maxNewTokens");
    std::vector<float> keys = model::floats(cache_floats / 2, call, "key cache"), values = model::floats(cache_floats / 2, call, "value cache");
    // The prompt in one pass (its GEMMs over every row at once), then one position per step.
    // LongRoPE changes every position's frequencies once the input is longer than original_max_position_embeddings:
    // at that step the whole sequence runs again, as HF's Phi3ForCausalLM drops its cache there.
    std::size_t rerun_at = 0;
    for (const plan::Layer& k : s.kinds)
        if (k.self.rope && k.self.rotary.scaling == plan::RopeScaling::longrope && prompt.size() <= k.self.rotary.original_max_positions)
            rerun_at = k.self.rotary.original_max_positions;
    std::vector<float> hidden = model::floats(std::uint64_t(rerun_at ? capacity : prompt.size()) * s.width(), call, "hidden states");
    std::vector<float> scratch(s.width()), logits = model::floats(p.head.vocab, call, "logits");
    model::StackStep step;
    step.capacity = capacity;
    step.self.ablate = &r.ablate;
    step.key_cache = keys.data();
    step.value_cache = values.data();
    step.out = hidden.data();
    step.call = call;
    step.tokens = prompt.data();
    step.rows = prompt.size();
    model::run_stack(*impl_, 0, step);
    // The head is the largest product of a pass (vocab × d per row): only the last row's logits are read.
    model::run_head(*impl_, hidden.data() + (prompt.size() - 1) * s.width(), 1, scratch.data(), logits.data());
    std::size_t position = prompt.size();
    step.rows = 1;
    std::vector<std::int32_t> generated;
    while (generated.size() < max_new_tokens) {
        const std::int32_t next = model::argmax(logits.data(), logits.size());
        generated.push_back(next);
        if (next == stop_token || position == s.max_positions) break;
        if (position == rerun_at) {
            std::vector<std::int32_t> all = prompt;
            all.insert(all.end(), generated.begin(), generated.end());
            step.tokens = all.data();
            step.rows = all.size();
            step.first_position = 0;
            model::run_stack(*impl_, 0, step);
            model::run_head(*impl_, hidden.data() + (all.size() - 1) * s.width(), 1, scratch.data(), logits.data());
            step.rows = 1;
            ++position;
            continue;
        }
        step.tokens = &generated.back();
        step.first_position = position++;
        model::run_stack(*impl_, 0, step);
        model::run_head(*impl_, hidden.data(), 1, scratch.data(), logits.data());
    }
    return generated;
}

Transformer::Translation Transformer::translate(const std::vector<std::int32_t>& source, std::int32_t start, std::int32_t eos,
                                                std::size_t max_steps)
{
    return translate(source, start, eos, max_steps, Request{});
}

Transformer::Translation Transformer::translate(const std::vector<std::int32_t>& source, std::int32_t start, std::int32_t eos,
                                                std::size_t max_steps, const Request& heads)
{
    const char* call = heads.call ? heads.call : "translate";
    const plan::Plan& p = impl_->plan;
    if (!p.seq2seq()) throw std::invalid_argument(json::join({call, ": this model is not an encoder-decoder"}));
    const plan::Stack& e = p.stacks.front();
    const plan::Stack& d = p.main();
    Request r = heads;
    r.source = source;
    r.tokens = {start};
    model::check_request(p, r, call);
    const std::size_t S = source.size(), L = d.layers(), H = d.layer(0).self.heads, V = p.head.vocab, width = d.width();
    const std::size_t steps = std::min(max_steps, max_steps_limit());
    const std::uint64_t kv = d.layer(0).self.kv_width(), ckv = d.layer(0).cross.kv_width(), ekv = e.layer(0).self.kv_width();
    // What the call holds besides the maps, known now; the maps grow with the steps taken (a model that stops early
    // never holds the most), checked against the budget before each step: a model that never stops is refused
    // there, naming the option that bounds it, instead of decoding on into gigabytes.
    const std::uint64_t fixed = sizeof(float) * (2 * std::uint64_t(L) * steps * kv + 2 * std::uint64_t(L) * S * ckv +
                                                 2 * std::uint64_t(e.layers()) * S * ekv + std::uint64_t(e.layers()) * e.layer(0).self.heads * S * S);
    // The maps after n steps: every step's rows as decoded, then the [L, H, n, n] and [L, H, n, S] tensors made of them.
    const auto maps = [&](std::uint64_t n) { return sizeof(float) * std::uint64_t(L) * H * (n * (n + 1) / 2 + n * n + 2 * n * S); };
    // A worst case whose result WebAssembly could not even address is refused before the first step, whatever the
    // model writes: the [L, H, n, n] and [L, H, n, S] maps of `steps` steps and the caches.
    const std::uint64_t result = fixed + sizeof(float) * std::uint64_t(L) * H * steps * (std::uint64_t(steps) + S);
    if (result > (std::uint64_t(4) << 30))
        throw std::length_error(json::join({call, ": maxSteps ", Num(steps), ": the caches and attention maps of ", Num(steps),
                                                " steps would need ", Num(result >> 20), " MiB, more than WebAssembly's 4 GiB; pass a smaller maxSteps"}));
    model::check_budget(call, fixed + maps(1), steps, "maxSteps");
    Translation out;
    out.encoder_attention = Tensor({e.layers(), e.layer(0).self.heads, S, S});
    std::vector<float> ekeys = model::floats(std::uint64_t(e.layers()) * S * ekv, call, "encoder caches"), evalues = ekeys;
    std::vector<float> memory = model::floats(std::uint64_t(S) * e.width(), call, "encoder output");
    model::StackStep es;
    es.tokens = source.data();
    es.rows = es.capacity = S;
    es.key_cache = ekeys.data();
    es.value_cache = evalues.data();
    es.self.ablate = &r.ablate_encoder;
    es.attention = out.encoder_attention.data.data();
    es.out = memory.data();
    es.call = call;
    model::run_stack(*impl_, 0, es);

    // Per layer the keys and values of every step (the worst case was checked against the budget above), and
    // cross-attention's keys and values of the source, projected by the first step and read by every later one.
    std::vector<float> keys = model::floats(std::uint64_t(L) * steps * kv, call, "key cache"), values = keys;
    std::vector<float> cross = model::floats(std::uint64_t(L) * S * 2 * ckv, call, "cross-attention keys");
    std::vector<float> hidden(width), scratch(width), logits = model::floats(V, call, "logits");
    std::vector<float> self_rows, cross_rows, self_map, cross_map(std::size_t(L) * H * S);
    model::StackStep ds;
    ds.rows = 1;
    ds.capacity = steps;
    ds.key_cache = keys.data();
    ds.value_cache = values.data();
    ds.memory = memory.data();
    ds.memory_rows = S;
    ds.cross_kv = cross.data();
    ds.self.ablate = &r.ablate;
    ds.cross.ablate = &r.ablate_cross;
    ds.cross_attention = cross_map.data();
    ds.out = hidden.data();
    ds.call = call;
    std::int32_t token = start;
    for (std::size_t t = 0; t < steps; ++t) {
        if (fixed + maps(t + 1) > Transformer::decode_budget_bytes)
            throw std::invalid_argument(json::join({call, ": maxSteps ", Num(steps), ": after ", Num(t), " steps without the end token, the caches ",
                                                    "and attention maps would need more than the ", Num(Transformer::decode_budget_bytes >> 20),
                                                    " MiB a call may take; pass a maxSteps of at most ", Num(t)}));
        self_map.assign(std::size_t(L) * H * (t + 1), 0.f);
        ds.tokens = &token;
        ds.first_position = t;
        ds.cross_ready = t > 0;
        ds.attention = self_map.data();
        model::run_stack(*impl_, 1, ds);
        model::run_head(*impl_, hidden.data(), 1, scratch.data(), logits.data());
        self_rows.insert(self_rows.end(), self_map.begin(), self_map.end());
        cross_rows.insert(cross_rows.end(), cross_map.begin(), cross_map.end());
        token = model::argmax(logits.data(), V);
        out.tokens.push_back(token);
        if (token == eos) break;
    }
    // Step t's rows sit at L·H·t(t+1)/2 (self) and L·H·S·t (cross), layer by layer, head by head. The self-attention
    // rows are causal: the columns after t stay zero.
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
