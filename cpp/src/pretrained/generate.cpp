// PretrainedModel::generate: greedy decoding with a key/value cache, one position per step through the same forward
// pass (forward.cpp), so each new token costs O(T).
#include <algorithm>
#include <stdexcept>

#include "../json.hpp"
#include "../sizes.hpp"
#include "parts.hpp"

namespace attnscope {

std::vector<std::int32_t> PretrainedModel::generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                                    std::int32_t stop_token, const HeadMask& ablate)
{
    const PretrainedConfig& c = impl_->config;
    if (!c.causal || !c.has_lm_head)
        throw std::invalid_argument(json::join({"PretrainedModel.generate: ", to_string(c.family),
                                                !c.causal ? " is not a causal model" : " has no LM head in this file"}));
    Request r;
    r.tokens = prompt;
    r.ablate = ablate;
    pretrained::check_request(c, r, "PretrainedModel.generate");
    // The caches hold only the positions this call can reach.
    const std::size_t capacity = std::min(c.max_positions, prompt.size() + std::min(max_new_tokens, c.max_positions));
    const std::size_t kv = detail::checked_mul(c.kv_heads, c.head_dim, "generate");
    std::vector<float> keys(detail::checked_mul(detail::checked_mul(c.layers, capacity, "generate"), kv, "generate"));
    std::vector<float> values(keys.size());
    // The prompt in one pass (its GEMMs over every row at once), then one position per step.
    std::vector<float> hidden(detail::checked_mul(prompt.size(), c.hidden, "generate"));
    std::vector<float> logits(c.vocab);  // the last row's only: the prompt's other rows are never read

    pretrained::Step s{};
    s.capacity = capacity;
    s.ablate = &r.ablate;
    s.key_cache = keys.data();
    s.value_cache = values.data();
    s.hidden = hidden.data();
    s.logits = logits.data();
    s.last_logits_only = true;
    s.call = "generate";
    s.tokens = prompt.data();
    s.rows = prompt.size();
    s.first_position = 0;
    pretrained::run(*impl_, s);
    const float* last = logits.data();
    std::size_t position = prompt.size();
    s.rows = 1;
    auto step = [&](const std::int32_t* token) {
        s.tokens = token;
        s.first_position = position++;
        pretrained::run(*impl_, s);
        last = logits.data();
    };
    std::vector<std::int32_t> generated;
    while (generated.size() < max_new_tokens) {
        const std::int32_t next = std::int32_t(std::max_element(last, last + c.vocab) - last);
        generated.push_back(next);
        if (next == stop_token || position == c.max_positions) break;
        step(&generated.back());
    }
    return generated;
}

}  // namespace attnscope
