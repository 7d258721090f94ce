// Transformer: the request checks, forward() (every stack over its whole input, caches as long as it) and trace()
// (the same pass with a sink, ending after the traced attention).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "../json.hpp"
#include "../sizes.hpp"
#include "pass.hpp"

namespace attnscope {

using json::Num;

Transformer::Transformer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transformer::~Transformer() = default;
const plan::Plan& Transformer::plan() const { return impl_->plan; }
const ModelConfig& Transformer::config() const { return impl_->config; }
std::uint64_t Transformer::parameter_bytes() const { return impl_->parameter_bytes; }
std::size_t Transformer::max_steps_limit() const { return impl_->plan.main().max_positions; }
std::size_t Transformer::default_steps() const { return std::min(max_steps_limit() - 1, default_translate_steps); }

namespace model {
namespace {

[[noreturn]] void fail(const char* call, std::initializer_list<std::string_view> parts)
{
    throw std::invalid_argument(json::join({call, ": ", json::join(parts)}));
}

}  // namespace

void check_id_range(const char* call, const char* name, const std::vector<std::int32_t>& ids, std::size_t vocab)
{
    for (std::size_t t = 0; t < ids.size(); ++t)
        if (ids[t] < 0 || std::size_t(ids[t]) >= vocab)
            fail(call, {name, "[", Num(t), "]: expected a token id from 0 to ", Num(vocab - 1), ", got ", ids[t] < 0 ? "-" : "",
                        Num(std::uint64_t(ids[t] < 0 ? -std::int64_t(ids[t]) : ids[t]))});
}

namespace {

// The JS API's wording (docs/errors.md), the same for every model.
void check_ids(const char* call, const char* name, const std::vector<std::int32_t>& ids, std::size_t vocab, std::size_t positions)
{
    if (ids.empty() || ids.size() > positions)
        fail(call, {name, ": expected from 1 to ", Num(positions), " token ids (the model's limit), got ", Num(ids.size())});
    check_id_range(call, name, ids, vocab);
}

void check_mask(const char* call, const char* name, const std::vector<std::uint8_t>& mask, std::size_t T)
{
    if (mask.empty()) return;
    if (mask.size() != T) fail(call, {name, ": expected ", Num(T), " entries (one per token), got ", Num(mask.size())});
    for (std::size_t t = 0; t < T; ++t)
        if (mask[t] > 1) fail(call, {name, "[", Num(t), "]: expected 0 (padding) or 1 (a real token)"});
}

void check_heads(const char* call, const char* name, const HeadMask& mask, const plan::Stack& s, bool cross)
{
    const std::size_t heads = cross ? s.layer(0).cross.heads : s.layer(0).self.heads, flags = s.layers() * heads;
    if (!mask.empty() && mask.size() != flags) fail(call, {name, ": expected ", Num(flags), " flags (layers × heads), got ", Num(mask.size())});
}

}  // namespace

void check_request(const plan::Plan& p, const Transformer::Request& r, const char* call)
{
    const plan::Stack& main = p.main();
    const std::size_t T = r.tokens.size();
    check_ids(call, p.seq2seq() ? "target" : "tokens", r.tokens, main.embedding.vocab, main.max_positions);
    check_mask(call, "attentionMask", r.attention_mask, T);
    if (!r.token_type_ids.empty()) {
        const std::size_t types = main.embedding.type_vocab;
        if (types == 0) fail(call, {"tokenTypeIds: this model has no token types"});
        if (r.token_type_ids.size() != T) fail(call, {"tokenTypeIds: expected ", Num(T), " entries (one per token), got ", Num(r.token_type_ids.size())});
        for (std::size_t t = 0; t < T; ++t)
            if (r.token_type_ids[t] < 0 || std::size_t(r.token_type_ids[t]) >= types)
                fail(call, {"tokenTypeIds[", Num(t), "]: expected a type from 0 to ", Num(types - 1)});
    }
    check_heads(call, "ablate", r.ablate, main, false);
    if (p.seq2seq()) {
        const plan::Stack& encoder = p.stacks.front();
        check_ids(call, "source", r.source, encoder.embedding.vocab, encoder.max_positions);
        check_mask(call, "sourceMask", r.source_mask, r.source.size());
        check_heads(call, "ablate (cross-attention)", r.ablate_cross, main, true);
        check_heads(call, "ablate (the encoder's)", r.ablate_encoder, encoder, false);
    }
    if (r.logits_to_keep > T) fail(call, {"options.logitsToKeep: expected a whole number from 1 to ", Num(T), " (one row per token), got ", Num(r.logits_to_keep)});
    if (r.patch.empty()) {
        if (!r.patch_positions.empty()) fail(call, {"patchPositions: expected with options.patch (the heads to patch), got no heads"});
        return;
    }
    check_heads(call, "patch", r.patch, main, false);
    for (std::size_t i = 0; i < r.patch_positions.size(); ++i) {
        const std::int32_t at = r.patch_positions[i];
        if (at < 0 || std::size_t(at) >= T)
            fail(call, {"patchPositions[", Num(i), "]: expected a position from 0 to ", Num(T - 1), ", got ", at < 0 ? "-" : "",
                        Num(std::uint64_t(at < 0 ? -std::int64_t(at) : at))});
    }
    const plan::Attention& a = main.layer(0).self;
    if (!r.patch_from) fail(call, {"patchFrom: expected a kept run's heads (keepHeads), got none"});
    const Shape want{main.layers(), T, a.heads, a.head_dim};
    const Shape& got = r.patch_from->shape;
    if (got.size() != 4 || got[0] != want[0] || got[2] != want[2] || got[3] != want[3])
        fail(call, {"patchFrom: expected [", Num(want[0]), ", T, ", Num(want[2]), ", ", Num(want[3]), "] (a kept run of this model), got another shape"});
    if (got != want) fail(call, {"patchFrom: expected a kept run of ", Num(T), " tokens (this request's), got one of ", Num(got[1])});
    if (r.patch_from->numel() != want[0] * T * want[2] * want[3]) fail(call, {"patchFrom: its data do not match its shape"});
}

namespace {

}  // namespace

std::vector<std::uint8_t> patched_positions(const Transformer::Request& r)
{
    if (r.patch_positions.empty()) return {};
    std::vector<std::uint8_t> at(r.tokens.size(), 0);
    for (const std::int32_t p : r.patch_positions) at[std::size_t(p)] = 1;
    return at;
}

std::size_t logit_rows(const Transformer::Request& r)
{
    return r.logits_to_keep ? r.logits_to_keep : r.tokens.size();
}

namespace {

std::vector<float> floats(std::uint64_t n, const char* call)
{
    if (n > std::uint64_t(SIZE_MAX / sizeof(float))) throw std::length_error(std::string(call) + ": the input is too long to address");
    std::vector<float> v;
    resize_floats(v, std::size_t(n), call, "caches");
    return v;
}

Tensor tensor(const Shape& shape)
{
    return shape.empty() ? Tensor() : Tensor(shape);
}

// The research outputs a request asks for (keep_residual, keep_qkv), allocated and handed to the main stack's pass.
// Opt-in like keep_heads: the memory plan counts the maps every view needs, not these.
void keep_layers(const plan::Stack& main, const Transformer::Request& r, std::size_t T, Transformer::Output& out, StackStep& d)
{
    const std::size_t L = main.layers(), width = main.width();
    const plan::Attention& a = main.layer(0).self;
    if (r.keep_residual) {
        out.residual = Tensor({L + 1, T, width});
        d.residual = out.residual.data.data();
        bool parallel = false;
        for (std::size_t l = 0; l < L; ++l) parallel = parallel || main.layer(l).parallel;
        if (!parallel) {
            out.residual_mid = Tensor({L, T, width});
            d.residual_mid = out.residual_mid.data.data();
        }
    }
    if (r.keep_qkv) {
        out.qkv = Tensor({L, T, a.q_width() + 2 * a.kv_width()});
        d.qkv = out.qkv.data.data();
    }
}

}  // namespace

Tensor value_norms(const plan::Attention& a, std::size_t L, std::size_t T, const float* values, std::size_t capacity)
{
    const std::size_t H = a.heads, hd = a.head_dim, kv_cols = a.kv_width(), group = a.heads / a.kv_heads;
    Tensor norms({L, H, T});
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t t = 0; t < T; ++t) {
                const float* v = values + (l * capacity + t) * kv_cols + (h / group) * hd;
                double sum = 0;
                for (std::size_t i = 0; i < hd; ++i) sum += double(v[i]) * v[i];
                norms.data[(l * H + h) * T + t] = float(std::sqrt(sum));
            }
    return norms;
}

// forward() and trace(): every stack over its whole input, caches as long as it. With a sink the pass ends after the
// traced attention: no hidden state, logits or maps are filled.
Transformer::Output run_request(const Transformer::Impl& m, const Transformer::Request& r, TraceSink* sink, bool encoder_trace)
{
    const plan::Plan& p = m.plan;
    const char* call = r.call;
    const bool whole = sink == nullptr, head = whole && m.config.has_lm_head;
    const std::size_t T = r.tokens.size(), S = r.source.size();
    const RequestBuffers sizes = request_buffers(p, T, S, whole && r.need_attention, r.keep_heads, head);
    std::vector<float> caches = floats(sizes.caches, call), memory = floats(sizes.memory, call);
    Transformer::Output out;
    out.hidden = tensor(sizes.hidden);
    out.logits = head ? Tensor({logit_rows(r), sizes.logits[1]}) : Tensor();
    out.attention = tensor(sizes.attention);
    out.encoder_attention = tensor(sizes.encoder_attention);
    out.cross_attention = tensor(sizes.cross_attention);
    out.heads = tensor(sizes.heads);
    float* cache = caches.data();
    auto take = [&](std::size_t n) {
        float* at = cache;
        cache += n;
        return at;
    };
    auto data = [](Tensor& t) { return t.data.empty() ? nullptr : t.data.data(); };

    StackStep d;
    if (p.seq2seq()) {
        const plan::Stack& e = p.stacks.front();
        StackStep s;
        s.tokens = r.source.data();
        s.key_mask = r.source_mask.empty() ? nullptr : r.source_mask.data();
        s.rows = s.capacity = S;
        s.key_cache = take(e.layers() * S * e.layer(0).self.kv_width());
        s.value_cache = take(e.layers() * S * e.layer(0).self.kv_width());
        s.self.ablate = &r.ablate_encoder;
        s.self.ablation = r.ablation;
        s.attention = data(out.encoder_attention);
        s.sink = encoder_trace ? sink : nullptr;
        s.out = memory.data();
        s.call = call;
        run_stack(m, 0, s);
        if (encoder_trace) return out;
        d.memory = memory.data();
        d.memory_rows = S;
        d.memory_mask = s.key_mask;
        d.cross_kv = take(p.main().layers() * S * 2 * p.main().layer(0).cross.kv_width());
        d.cross.ablate = &r.ablate_cross;
        d.cross.ablation = r.ablation;
        d.cross_attention = data(out.cross_attention);
    }
    const plan::Stack& main = p.main();
    d.tokens = r.tokens.data();
    d.token_types = r.token_type_ids.empty() ? nullptr : r.token_type_ids.data();
    d.key_mask = r.attention_mask.empty() ? nullptr : r.attention_mask.data();
    d.rows = d.capacity = T;
    d.key_cache = take(main.layers() * T * main.layer(0).self.kv_width());
    d.value_cache = take(main.layers() * T * main.layer(0).self.kv_width());
    d.self = {&r.ablate, r.ablation, &r.patch, r.patch.empty() ? nullptr : r.patch_from->data.data(), data(out.heads)};
    const std::vector<std::uint8_t> patch_at = patched_positions(r);
    d.self.patch_at = patch_at.empty() ? nullptr : patch_at.data();
    d.attention = data(out.attention);
    d.sink = encoder_trace ? nullptr : sink;
    if (whole) keep_layers(main, r, T, out, d);
    std::vector<float> hidden;
    if (!whole) hidden = floats(std::uint64_t(T) * main.width(), call);  // a trace keeps no hidden state
    d.out = whole ? out.hidden.data.data() : hidden.data();
    d.call = call;
    run_stack(m, p.stacks.size() - 1, d);
    if (head) {  // the last logit_rows(r) rows
        const std::size_t rows = logit_rows(r);
        std::vector<float> scratch = floats(std::uint64_t(rows) * main.width(), call);
        run_head(m, out.hidden.data.data() + (T - rows) * main.width(), rows, scratch.data(), out.logits.data.data());
    }
    if (whole && r.value_norms) out.value_norms = value_norms(main.layer(0).self, main.layers(), T, d.value_cache, T);
    return out;
}

// A trace of the main stack's self-attention at `layer` from that layer's input rows [T, width] as a kept pass
// computed them (a ForwardCache's, kept_layer_input): the layers below are not run again, and the traced layer
// computes from the same bits as a fresh pass's, so its numbers are a fresh trace's. The pass ends after the traced
// attention.
void trace_from(const Transformer::Impl& m, const Transformer::Request& r, TraceSink* sink, std::size_t layer, const float* input)
{
    const plan::Stack& main = m.plan.main();
    const std::size_t T = r.tokens.size(), kv = std::size_t(main.layers()) * T * main.layer(0).self.kv_width();
    std::vector<float> keys = floats(kv, r.call), values = floats(kv, r.call), hidden = floats(std::uint64_t(T) * main.width(), r.call);
    StackStep d;
    d.tokens = r.tokens.data();
    d.token_types = r.token_type_ids.empty() ? nullptr : r.token_type_ids.data();
    d.key_mask = r.attention_mask.empty() ? nullptr : r.attention_mask.data();
    d.rows = d.capacity = T;
    d.key_cache = keys.data();
    d.value_cache = values.data();
    d.self = {&r.ablate, r.ablation};
    d.sink = sink;
    d.first_layer = layer;
    d.resume = input;
    d.out = hidden.data();
    d.call = r.call;
    run_stack(m, m.plan.stacks.size() - 1, d);
}

}  // namespace model

Transformer::Output Transformer::forward(const Request& request)
{
    Request r = request;
    if (!r.call) r.call = "forward";
    model::check_request(impl_->plan, r, r.call);
    return model::run_request(*impl_, r, nullptr, false);
}

AttentionTrace Transformer::trace(const Request& request, AttentionKind kind, std::size_t layer, std::size_t head, std::size_t query)
{
    return trace(request, kind, layer, head, query, nullptr);
}

AttentionTrace Transformer::trace(const Request& request, AttentionKind kind, std::size_t layer, std::size_t head, std::size_t query,
                                  ForwardCache& cache)
{
    return trace(request, kind, layer, head, query, &cache);
}

AttentionTrace Transformer::trace(const Request& request, AttentionKind kind, std::size_t layer, std::size_t head, std::size_t query,
                                  ForwardCache* cache)
{
    Request r = request;
    if (!r.call) r.call = "trace";
    const char* call = r.call;
    const plan::Plan& p = impl_->plan;
    if (kind != AttentionKind::self && !p.seq2seq())
        model::fail(call, {"attention: this model has self-attention only (", kind == AttentionKind::cross ? "no cross-attention" : "no encoder", ")"});
    // The encoder's trace reads no decoder input: its tokens may then be empty.
    const bool encoder = kind == AttentionKind::encoder;
    if (encoder && r.tokens.empty()) r.tokens = {std::int32_t(p.decoder_start < 0 ? 0 : p.decoder_start)};
    model::check_request(p, r, call);
    const plan::Stack& stack = encoder ? p.stacks.front() : p.main();
    const plan::Attention& a = kind == AttentionKind::cross ? stack.layer(0).cross : stack.layer(0).self;
    auto range = [&](const char* what, std::size_t got, std::size_t n, const char* whose) {
        if (got >= n) model::fail(call, {what, ": expected 0 to ", Num(n - 1), whose, ", got ", Num(got)});
    };
    const bool two = p.seq2seq();
    range("layer", layer, stack.layers(), !two ? "" : encoder ? " (the encoder's layers)" : " (the decoder's layers)");
    range("head", head, a.heads, "");
    range("query", query, encoder ? r.source.size() : r.tokens.size(),
          !two ? " (one per token)" : encoder ? " (one per source token)" : " (one per target token)");
    AttentionTrace trace;
    trace.layer = layer;
    trace.head = head;
    trace.query = query;
    trace.kv_head = head / (a.heads / a.kv_heads);
    r.need_attention = false;
    r.keep_heads = false;
    model::TraceSink sink{&trace, kind == AttentionKind::cross};
    const float* kept = cache && kind == AttentionKind::self ? model::kept_layer_input(*cache->state, *this, r, layer) : nullptr;
    if (kept) model::trace_from(*impl_, r, &sink, layer, kept);
    else model::run_request(*impl_, r, &sink, encoder);
    return trace;
}

}  // namespace attnscope
