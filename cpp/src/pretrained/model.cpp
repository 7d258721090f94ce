// PretrainedModel: the request checks and forward(), which runs the one forward pass (forward.cpp) over every token
// with a key/value cache as long as the input.
#include <stdexcept>

#include "../json.hpp"
#include "../sizes.hpp"
#include "parts.hpp"

namespace attnscope {

using json::Num;

PretrainedModel::PretrainedModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PretrainedModel::~PretrainedModel() = default;
const PretrainedConfig& PretrainedModel::config() const { return impl_->config; }
std::uint64_t PretrainedModel::parameter_bytes() const { return impl_->parameter_bytes; }

namespace pretrained {

void check_request(const PretrainedConfig& c, const PretrainedModel::Request& r, const char* call)
{
    auto fail = [&](std::initializer_list<std::string_view> parts) {
        throw std::invalid_argument(json::join({call, ": ", json::join(parts)}));
    };
    const std::size_t T = r.tokens.size();
    if (T == 0) fail({"tokens: expected at least one token"});
    if (T > c.max_positions) fail({"tokens: ", Num(T), " tokens, more than max_position_embeddings (", Num(c.max_positions), ")"});
    for (std::size_t t = 0; t < T; ++t)
        if (r.tokens[t] < 0 || std::size_t(r.tokens[t]) >= c.vocab)
            fail({"tokens[", Num(t), "]: expected an id from 0 to ", Num(c.vocab - 1), ", got ",
                  r.tokens[t] < 0 ? "a negative id" : std::string_view(Num(std::uint64_t(r.tokens[t])))});
    if (!r.attention_mask.empty()) {
        if (r.attention_mask.size() != T)
            fail({"attention_mask: expected ", Num(T), " entries (one per token), got ", Num(r.attention_mask.size())});
        for (std::size_t t = 0; t < T; ++t)
            if (r.attention_mask[t] > 1) fail({"attention_mask[", Num(t), "]: expected 0 (padding) or 1 (a real token)"});
    }
    if (!r.token_type_ids.empty()) {
        if (c.type_vocab == 0) fail({"token_type_ids: ", to_string(c.family), " has no token types"});
        if (r.token_type_ids.size() != T)
            fail({"token_type_ids: expected ", Num(T), " entries (one per token), got ", Num(r.token_type_ids.size())});
        for (std::size_t t = 0; t < T; ++t)
            if (r.token_type_ids[t] < 0 || std::size_t(r.token_type_ids[t]) >= c.type_vocab)
                fail({"token_type_ids[", Num(t), "]: expected a type from 0 to ", Num(c.type_vocab - 1)});
    }
    if (!r.ablate.empty() && r.ablate.size() != c.layers * c.heads)
        fail({"ablate: expected ", Num(c.layers * c.heads), " flags (layers × heads), got ", Num(r.ablate.size())});
    if (r.patch.empty()) return;
    if (r.patch.size() != c.layers * c.heads)
        fail({"patch: expected ", Num(c.layers * c.heads), " flags (layers × heads), got ", Num(r.patch.size())});
    if (!r.patch_from) fail({"patch_from: expected a kept run's heads (keep_heads), got none"});
    const Shape want{c.layers, T, c.heads, c.head_dim};
    const Shape& got = r.patch_from->shape;
    if (got.size() != 4 || got[0] != c.layers || got[2] != c.heads || got[3] != c.head_dim)
        fail({"patch_from: expected [", Num(c.layers), ", T, ", Num(c.heads), ", ", Num(c.head_dim),
              "] (a kept run of this model), got another shape"});
    if (got != want)
        fail({"patch_from: expected a kept run of ", Num(T), " tokens (this request's), got one of ", Num(got[1])});
    if (r.patch_from->numel() != c.layers * T * c.heads * c.head_dim)
        fail({"patch_from: its data do not match its shape"});
}

// forward() and trace(): the whole input at once, its caches as long as it.
PretrainedModel::Output run_request(const PretrainedModel::Impl& m, const PretrainedModel::Request& r, TraceSink* sink)
{
    const PretrainedConfig& c = m.config;
    const char* call = sink ? "trace" : "forward";
    const std::size_t T = r.tokens.size(), kv = detail::checked_mul(c.kv_heads, c.head_dim, call);
    std::vector<float> keys(detail::checked_mul(detail::checked_mul(c.layers, T, call), kv, call)), values(keys.size());
    PretrainedModel::Output out;
    // A trace stops after its layer (forward.cpp): it gets no hidden state, logits or maps to fill.
    const bool whole = sink == nullptr;
    if (whole) out.hidden = Tensor({T, c.hidden});
    if (whole && c.has_lm_head) out.logits = Tensor({T, c.vocab});
    if (whole && r.need_attention) out.attention = Tensor({c.layers, c.heads, T, T});
    Step s{};
    s.tokens = r.tokens.data();
    s.token_types = r.token_type_ids.empty() ? nullptr : r.token_type_ids.data();
    s.key_mask = r.attention_mask.empty() ? nullptr : r.attention_mask.data();
    s.rows = T;
    s.first_position = 0;
    s.capacity = T;
    s.ablate = &r.ablate;
    s.ablation = r.ablation;
    s.patch = &r.patch;
    s.patch_from = r.patch.empty() ? nullptr : r.patch_from->data.data();
    if (r.keep_heads) out.heads = Tensor({c.layers, T, c.heads, c.head_dim});
    s.kept = r.keep_heads ? out.heads.data.data() : nullptr;
    s.key_cache = keys.data();
    s.value_cache = values.data();
    s.attention = whole && r.need_attention ? out.attention.data.data() : nullptr;
    s.sink = sink;
    s.call = call;
    s.hidden = whole ? out.hidden.data.data() : nullptr;
    s.logits = whole && c.has_lm_head ? out.logits.data.data() : nullptr;
    run(m, s);
    return out;
}

}  // namespace pretrained

PretrainedModel::Output PretrainedModel::forward(const Request& request)
{
    pretrained::check_request(impl_->config, request, "PretrainedModel.forward");
    return pretrained::run_request(*impl_, request, nullptr);
}

PretrainedTrace PretrainedModel::trace(const Request& request, std::size_t layer, std::size_t head, std::size_t query)
{
    const PretrainedConfig& c = impl_->config;
    pretrained::check_request(c, request, "PretrainedModel.trace");
    auto fail = [](const char* what, std::size_t got, std::size_t n) {
        throw std::invalid_argument(json::join({"PretrainedModel.trace: ", what, ": expected 0 to ", Num(n - 1), ", got ", Num(got)}));
    };
    if (layer >= c.layers) fail("layer", layer, c.layers);
    if (head >= c.heads) fail("head", head, c.heads);
    if (query >= request.tokens.size()) fail("query", query, request.tokens.size());
    PretrainedTrace trace;
    trace.layer = layer;
    trace.head = head;
    trace.query = query;
    trace.kv_head = head / (c.heads / c.kv_heads);
    Request r = request;
    r.need_attention = false;
    r.keep_heads = false;
    pretrained::TraceSink sink{&trace};
    pretrained::run_request(*impl_, r, &sink);
    return trace;
}

}  // namespace attnscope
