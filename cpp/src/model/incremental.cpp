// forward() through a ForwardCache (model.hpp): a causal model's rows depend only on the tokens up to them, so when a
// new input starts with the kept one's tokens, their keys, values and rows of output are the kept pass's, and only
// the positions after them are run (run_stack from first_position, as generate() does). The reused prefix is a whole
// number of attend_heads' query blocks: a block's softmax runs over the keys up to its last row, so a row of a block
// the kept pass cut short would sum its weights in another order; from a block's start the new pass's blocks are the
// fresh pass's, and so are their bits. A patched call of the kept input starts at its lowest patched layer, from
// the kept pass's input to that layer: the layers below compute what they computed then. One patched only from a
// position on starts there too (in whole query blocks, as above): the rows before it see nothing it changes.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "../json.hpp"
#include "../sizes.hpp"
#include "heads.hpp"
#include "pass.hpp"
#include "patch_runs.hpp"
#include "../zeroed.hpp"

namespace attnscope {

struct ForwardCache::State {
    const Transformer* model = nullptr;  ///< the model that filled it
    Transformer::Output out;             ///< the last call's output
    std::vector<std::int32_t> tokens, types;
    std::vector<std::uint8_t> mask;      ///< as the request gave it (empty: every token real)
    HeadMask ablate;                     ///< ablated heads
    Ablation ablation = Ablation::zero;
    bool extendable = false;             ///< no mean ablation: its rows stand for any input that shares them
    std::size_t capacity = 0, reused = 0, resumed_layer = 0, resumed_position = 0;
    std::size_t logits_from = 0;         ///< the first position whose logits out.logits holds (logits_to_keep)
    std::vector<float> keys, values;     ///< [layers, capacity, kv_width]
    Tensor layer_inputs;                 ///< [layers, T, width]: the residual stream entering each layer
    Transformer::Output patched;         ///< the last patched call's output (patched calls leave the pass as it was)
};

ForwardCache::ForwardCache() : state(new State) {}
ForwardCache::~ForwardCache() = default;
std::size_t ForwardCache::positions() const { return state->tokens.size(); }
std::size_t ForwardCache::reused() const { return state->reused; }
std::size_t ForwardCache::resumed_layer() const { return state->resumed_layer; }
std::size_t ForwardCache::resumed_position() const { return state->resumed_position; }
std::uint64_t ForwardCache::bytes() const
{
    std::uint64_t floats = state->keys.size() + state->values.size() + state->layer_inputs.numel();
    for (const Transformer::Output* o : {&state->out, &state->patched})
        floats += o->logits.numel() + o->hidden.numel() + o->attention.numel() + o->heads.numel();
    return floats * sizeof(float);
}

namespace model {

Transformer::Output run_request(const Transformer::Impl& m, const Transformer::Request& r, TraceSink* sink, bool encoder_trace);

namespace {

// Entry t of an optional per-token list (empty: every entry `fill`).
template <class T>
T entry(const std::vector<T>& v, std::size_t t, T fill)
{
    return v.empty() ? fill : v[t];
}

// A pass's rows stand for those of any input that starts with its tokens (a mean-ablated head's context is a mean
// over the whole input). A pass that kept its heads can be reused: its rows are the same bits.
bool rows_stand_alone(const Transformer::Request& r)
{
    return r.ablate.empty() || r.ablation == Ablation::zero;
}

// The rows of `r` the cache's pass already holds: its longest shared prefix (tokens, types, mask), in whole query
// blocks; 0 when the kept pass cannot stand for this one's rows.
std::size_t reusable_rows(const plan::Plan& p, const ForwardCache::State& st, const Transformer::Request& r)
{
    const std::size_t T = r.tokens.size(), kept = st.tokens.size();
    // A call that keeps its heads needs every row's, which the cache does not hold.
    if (!st.extendable || !rows_stand_alone(r) || r.keep_heads || st.ablate != r.ablate || (r.need_attention && st.out.attention.data.empty())) return 0;
    for (const plan::Layer& kind : p.main().kinds) {  // longrope's factors are chosen by the input's length
        const plan::Rope& rope = kind.self.rotary;
        if (kind.self.rope && rope.scaling == plan::RopeScaling::longrope &&
            (kept > rope.original_max_positions) != (T > rope.original_max_positions))
            return 0;
    }
    std::size_t shared = 0;
    while (shared < std::min(T, kept) && st.tokens[shared] == r.tokens[shared] &&
           entry(st.types, shared, 0) == entry(r.token_type_ids, shared, 0) &&
           entry(st.mask, shared, std::uint8_t(1)) == entry(r.attention_mask, shared, std::uint8_t(1)))
        ++shared;
    return shared / query_block * query_block;
}

// Room for `T` positions and the next few appended (a typist's next keys) without moving the first `keep` of each
// layer again.
void make_room(ForwardCache::State& st, const plan::Stack& s, std::size_t T, std::size_t keep, const char* call)
{
    if (T <= st.capacity) return;
    const std::size_t capacity = std::min(s.max_positions, T + std::max<std::size_t>(T / 4, query_block));
    const std::size_t kv = s.layer(0).self.kv_width(), L = s.layers();
    std::vector<float> keys = floats(std::uint64_t(L) * capacity * kv, call, "key cache");
    std::vector<float> values = floats(std::uint64_t(L) * capacity * kv, call, "value cache");
    for (std::size_t l = 0; l < L && keep; ++l) {
        std::memcpy(keys.data() + l * capacity * kv, st.keys.data() + l * st.capacity * kv, keep * kv * sizeof(float));
        std::memcpy(values.data() + l * capacity * kv, st.values.data() + l * st.capacity * kv, keep * kv * sizeof(float));
    }
    st.keys = std::move(keys);
    st.values = std::move(values);
    st.capacity = capacity;
}

// A patched call of the kept pass's very input and options (its heads patched apart): its lower layers are the
// kept pass's. Kept heads must come from every layer, so they run fresh.
bool resumable(const ForwardCache::State& st, const Transformer::Request& r)
{
    return !st.layer_inputs.data.empty() && !r.keep_heads && st.tokens == r.tokens && st.types == r.token_type_ids &&
           st.mask == r.attention_mask && st.ablate == r.ablate && st.ablation == r.ablation &&
           (!r.need_attention || !st.out.attention.data.empty());
}

// The outputs of `r`'s pass, zeros (without hidden states and logits unless `rows`, without maps unless `maps`).
Transformer::Output outputs(const Transformer::Impl& m, const Transformer::Request& r, bool rows = true, bool maps = true)
{
    const bool head = m.config.has_lm_head;
    const RequestBuffers sizes = request_buffers(m.plan, r.tokens.size(), 0, r.need_attention, r.keep_heads, head);
    Transformer::Output out;
    if (rows) out.hidden = Tensor(sizes.hidden);
    if (rows && head) out.logits = Tensor({logit_rows(r), sizes.logits[1]});
    if (r.keep_heads) out.heads = Tensor(sizes.heads);
    if (r.need_attention && maps) out.attention = Tensor(sizes.attention);
    return out;
}

// Rows from step.first_position of `r` (from step.first_layer) into their rows of out's hidden states; the caller
// set the step's caches, maps, heads, layer inputs and resume.
void run_rows(const Transformer::Impl& m, const Transformer::Request& r, StackStep& step, Transformer::Output& out)
{
    const std::size_t c = step.first_position, d = m.plan.main().width();
    step.tokens = r.tokens.data() + c;
    step.token_types = r.token_type_ids.empty() ? nullptr : r.token_type_ids.data() + c;
    step.key_mask = r.attention_mask.empty() ? nullptr : r.attention_mask.data();
    step.rows = r.tokens.size() - c;
    step.out = out.hidden.data.data() + c * d;
    step.call = r.call;
    run_stack(m, 0, step);
}

// out.logits ([logit_rows(r), vocab], its last positions) where out.hidden holds every position: the positions
// before `c` that `kept` holds (its rows from position kept_from) copied, the others through the head. `ready`: the
// positions before c are in out.logits already (a kept tensor grown in place).
void fill_logits(const Transformer::Impl& m, const Transformer::Request& r, Transformer::Output& out, std::size_t c,
                 const Tensor& kept, std::size_t kept_from, bool ready = false)
{
    if (!m.config.has_lm_head) return;
    const std::size_t T = r.tokens.size(), first = T - logit_rows(r), V = m.plan.head.vocab, d = m.plan.main().width();
    std::size_t from = first;
    if (c > first && (ready || (first >= kept_from && !kept.data.empty()))) {
        if (!ready) std::copy_n(kept.data.begin() + (first - kept_from) * V, (c - first) * V, out.logits.data.begin());
        from = c;
    }
    if (from == T) return;
    std::vector<float> scratch = floats(std::uint64_t(T - from) * d, r.call, "the head's input");
    run_head(m, out.hidden.data.data() + from * d, T - from, scratch.data(), out.logits.data.data() + (from - first) * V);
}

// The first position whose rows a patch of `r` can change, in whole query blocks: its first patched position; 0 when
// every position is patched, or a mean ablation (a mean over every row) runs beside it.
std::size_t first_patched_row(const Transformer::Request& r)
{
    if (r.patch_positions.empty() || (!r.ablate.empty() && r.ablation == Ablation::mean)) return 0;
    const std::int32_t first = *std::min_element(r.patch_positions.begin(), r.patch_positions.end());
    return std::size_t(first) / query_block * query_block;
}

// The patched pass of `r` from its lowest patched layer and first patched row (resumable), or a fresh one; without
// its logits unless `head`.
Transformer::Output patched_pass(const Transformer::Impl& m, ForwardCache::State& st, const Transformer::Request& r, bool head = true)
{
    st.resumed_layer = st.resumed_position = 0;
    const plan::Stack& s = m.plan.main();
    const std::size_t T = r.tokens.size(), L = s.layers(), H = s.layer(0).self.heads, d = s.width();
    const auto flagged = std::find_if(r.patch.begin(), r.patch.end(), [](std::uint8_t f) { return f != 0; });
    const std::size_t first = std::size_t(flagged - r.patch.begin()) / H;
    if (!resumable(st, r) || first >= L) return run_request(m, r, nullptr, false);
    const std::size_t c = first_patched_row(r), n = T - c, kv_cols = s.layer(0).self.kv_width();
    Transformer::Output out = outputs(m, r);
    // The rows before c of every layer, and every row of the layers below `first`, are the kept pass's.
    std::copy_n(st.out.hidden.data.begin(), c * d, out.hidden.data.begin());
    std::vector<float> rows_maps;
    if (r.need_attention) {
        const float* kept = st.out.attention.data.data();
        float* to = out.attention.data.data();
        std::copy_n(kept, first * H * T * T, to);
        for (std::size_t lh = first * H; lh < L * H && c; ++lh) std::copy_n(kept + lh * T * T, c * T, to + lh * T * T);
        if (c) rows_maps = floats(std::uint64_t(L) * H * n * T, r.call, "attention maps");
    }
    const std::uint64_t kv = std::uint64_t(L) * T * kv_cols;
    std::vector<float> keys = floats(kv, r.call, "key cache"), values = floats(kv, r.call, "value cache");
    for (std::size_t l = first; l < L && c; ++l) {
        std::copy_n(st.keys.data() + l * st.capacity * kv_cols, c * kv_cols, keys.data() + l * T * kv_cols);
        std::copy_n(st.values.data() + l * st.capacity * kv_cols, c * kv_cols, values.data() + l * T * kv_cols);
    }
    const std::vector<std::uint8_t> patch_at = patched_positions(r);
    StackStep step;
    step.first_position = c;
    step.capacity = T;
    step.key_cache = keys.data();
    step.value_cache = values.data();
    step.self = {&r.ablate, r.ablation, &r.patch, r.patch_from->data.data(), nullptr, patch_at.empty() ? nullptr : patch_at.data()};
    step.attention = !r.need_attention ? nullptr : c ? rows_maps.data() : out.attention.data.data();
    step.first_layer = first;
    step.resume = st.layer_inputs.data.data() + (first * T + c) * d;
    run_rows(m, r, step, out);
    for (std::size_t lh = first * H; lh < L * H && !rows_maps.empty(); ++lh)
        std::copy_n(rows_maps.data() + lh * n * T, n * T, out.attention.data.data() + lh * T * T + c * T);
    if (head) fill_logits(m, r, out, c, st.out.logits, st.logits_from);
    st.resumed_layer = first;
    st.resumed_position = c;
    return out;
}

// A kept [rows, width] tensor as one of `rows` rows, its first rows kept: a row-major prefix, so it grows in place,
// with room for a few more (the logits of a typist's next keys are not copied again).
Tensor grown(Tensor t, std::size_t rows)
{
    const std::size_t width = t.numel() / t.shape[0];
    if (t.data.capacity() < rows * width) t.data.reserve(rows * width + std::max<std::size_t>(rows / 4, query_block) * width);
    detail::resize_zeroed(t.data, rows * width);
    t.shape[0] = rows;
    return t;
}

}  // namespace

std::vector<float> floats(std::uint64_t n, const char* call, const char* what)
{
    if (n > std::uint64_t(SIZE_MAX / sizeof(float))) throw std::length_error(json::join({call, ": ", what, ": too large to address"}));
    std::vector<float> v;
    resize_floats(v, std::size_t(n), call, what);
    return v;
}

const float* kept_layer_input(const ForwardCache::State& st, const Transformer& model, const Transformer::Request& r, std::size_t layer)
{
    if (st.model && st.model != &model) throw std::invalid_argument(json::join({r.call, ": cache: it holds another model's pass"}));
    if (!r.patch.empty() || !resumable(st, r) || layer >= st.layer_inputs.shape[0]) return nullptr;
    return st.layer_inputs.data.data() + layer * st.layer_inputs.shape[1] * st.layer_inputs.shape[2];
}

const float* kept_output(const ForwardCache::State& st) { return st.out.hidden.data.data(); }

}  // namespace model

const Transformer::Output& Transformer::forward(const Request& request, ForwardCache& cache)
{
    Request r = request;
    if (!r.call) r.call = "forward";
    const char* call = r.call;
    const plan::Plan& p = impl_->plan;
    ForwardCache::State& st = *cache.state;
    if (p.kind != plan::Kind::causal_lm)
        throw std::invalid_argument(json::join({call, ": cache: only a causal language model's pass can be extended"}));
    if (st.model && st.model != this) throw std::invalid_argument(json::join({call, ": cache: it holds another model's pass"}));
    if (r.keep_residual || r.keep_qkv)
        throw std::invalid_argument(json::join({call, ": cache: keepResidual and keepQkv run without a cache"}));
    if (r.value_norms && !r.patch.empty())
        throw std::invalid_argument(json::join({call, ": cache: valueNorms of a patched pass run without a cache"}));
    model::check_request(p, r, call);
    if (!r.patch.empty()) {
        st.patched = model::patched_pass(*impl_, st, r);
        return st.patched;
    }
    st.patched = Output();
    const plan::Stack& s = p.main();
    const std::size_t T = r.tokens.size(), c = model::reusable_rows(p, st, r), n = T - c, L = s.layers();
    const std::size_t H = s.layer(0).self.heads, d = s.width(), old_T = st.tokens.size();
    // Until this call's pass is whole, the cache holds nothing: a throw must not leave it claiming rows it overwrote.
    st.tokens.clear();
    st.extendable = false;
    st.reused = 0;
    model::make_room(st, s, T, c, call);

    const bool maps = r.need_attention;
    // Every position's logits, kept and wanted: they grow in place; otherwise the kept rows wanted are copied.
    const bool grow = c && st.logits_from == 0 && r.logits_to_keep == 0;
    // An input as long as the kept one (a typist's edit at the end) keeps its maps tensor: the kept rows are already
    // in place (their columns past c are zeros in both), and the new rows overwrite the rest. Otherwise the kept rows
    // move into the [layers, heads, T, T] of the new length.
    const bool maps_in_place = maps && c && T == old_T && st.out.attention.numel() == L * H * T * T;
    Output out = model::outputs(*impl_, r, c == 0, !maps_in_place);
    if (maps_in_place) out.attention = std::move(st.out.attention);
    Tensor kept_logits = std::move(st.out.logits);
    if (c) {
        out.hidden = model::grown(std::move(st.out.hidden), T);
        if (impl_->config.has_lm_head) out.logits = grow ? model::grown(std::move(kept_logits), T) : Tensor({model::logit_rows(r), p.head.vocab});
    }
    Tensor layer_inputs({L, T, d});
    for (std::size_t l = 0; l < L && c; ++l)
        std::copy_n(st.layer_inputs.data.data() + l * old_T * d, c * d, layer_inputs.data.data() + l * T * d);
    // New rows' maps: [layers, heads, n, T] as the pass writes them, then row by row into [layers, heads, T, T]
    // beside the kept rows (whose keys past the prefix are later ones, hidden from them: zeros).
    std::vector<float> rows_maps = maps && c ? model::floats(std::uint64_t(L) * H * n * T, call, "attention maps") : std::vector<float>();
    if (n) {
        model::StackStep step;
        step.first_position = c;
        step.capacity = st.capacity;
        step.key_cache = st.keys.data();
        step.value_cache = st.values.data();
        step.self = {&r.ablate, r.ablation, nullptr, nullptr, r.keep_heads ? out.heads.data.data() : nullptr};  // kept heads: c is 0
        step.layer_inputs = layer_inputs.data.data();
        step.layer_input_rows = T;
        step.attention = !maps ? nullptr : c ? rows_maps.data() : out.attention.data.data();
        model::run_rows(*impl_, r, step, out);
    }
    model::fill_logits(*impl_, r, out, c, kept_logits, st.logits_from, grow);
    if (maps && c)
        for (std::size_t lh = 0; lh < L * H; ++lh) {
            float* to = out.attention.data.data() + lh * T * T;
            for (std::size_t q = 0; q < c && !maps_in_place; ++q)
                std::copy_n(st.out.attention.data.data() + (lh * old_T + q) * old_T, c, to + q * T);
            std::copy_n(rows_maps.data() + lh * n * T, n * T, to + c * T);
        }
    st.out = std::move(out);
    st.layer_inputs = std::move(layer_inputs);
    st.model = this;
    st.tokens = r.tokens;
    st.types = r.token_type_ids;
    st.mask = r.attention_mask;
    st.ablate = r.ablate;
    st.ablation = r.ablation;
    st.extendable = model::rows_stand_alone(r);
    st.reused = c;
    st.logits_from = T - model::logit_rows(r);
    // The values' norms from the kept values, every position's as a fresh pass computes them (the same bits).
    if (r.value_norms) st.out.value_norms = model::value_norms(s.layer(0).self, L, T, st.values.data(), st.capacity);
    return st.out;
}

Tensor Transformer::patch_each(const Request& request, const std::vector<PatchRun>& runs, ForwardCache& cache,
                               const std::vector<std::int32_t>& logit_ids)
{
    Request r = request;
    if (!r.call) r.call = "patchEach";
    const char* call = r.call;
    const plan::Plan& p = impl_->plan;
    ForwardCache::State& st = *cache.state;
    const auto fail = [&](std::initializer_list<std::string_view> parts) {
        throw std::invalid_argument(json::join({call, ": ", json::join(parts)}));
    };
    if (p.kind != plan::Kind::causal_lm || !impl_->config.has_lm_head)
        fail({"expected a causal language model with a head (its logits are what patching reads), got ",
              p.kind == plan::Kind::causal_lm ? "one without a head" : "another kind of model"});
    if (!r.patch.empty()) fail({"patch: patchEach takes its heads from patches, got patch too"});
    if (runs.empty()) fail({"patches: expected at least one { layer, head }, got none"});
    if (st.model && st.model != this) fail({"cache: it holds another model's pass"});
    const plan::Stack& s = p.main();
    const std::size_t L = s.layers(), H = s.layer(0).self.heads, T = r.tokens.size(), d = s.width(), V = p.head.vocab;
    r.need_attention = r.keep_heads = r.keep_residual = r.keep_qkv = r.value_norms = false;  // logits only
    r.logits_to_keep = 1;
    r.patch_positions.clear();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const PatchRun& run = runs[i];
        if (run.layer >= L) fail({"options.patches[", json::Num(i), "].layer: expected 0 to ", json::Num(L - 1), ", got ", json::Num(run.layer)});
        if (run.head >= H) fail({"options.patches[", json::Num(i), "].head: expected 0 to ", json::Num(H - 1), ", got ", json::Num(run.head)});
        for (std::size_t j = 0; j < run.positions.size(); ++j)
            if (run.positions[j] < 0 || std::size_t(run.positions[j]) >= T)
                fail({"options.patches[", json::Num(i), "].positions[", json::Num(j), "]: expected a position from 0 to ", json::Num(T - 1), ", got ",
                      run.positions[j] < 0 ? "-" : "", json::Num(std::uint64_t(std::abs(std::int64_t(run.positions[j]))))});
    }
    // Named as the JS API names them (docs/errors.md: the method and the option), as the binding's own checks do.
    model::check_id_range(call, "options.logitIds", logit_ids, V);
    // The request and patchFrom checked as the first run's before any pass: a refused call leaves the cache as it was.
    r.patch.assign(L * H, 0);
    r.patch[runs[0].layer * H + runs[0].head] = 1;
    model::check_request(p, r, call);
    r.patch.clear();
    // The cache holds the unpatched pass every run resumes from.
    if (!model::resumable(st, r) || !st.model) forward(r, cache);
    std::vector<float> last = model::floats(std::uint64_t(runs.size()) * d, call, "the runs' last rows");
    if (model::batchable(*impl_, r)) {
        // The runs of each layer in one batched pass (patch_runs.cpp), their last rows put back in the runs' order.
        const model::KeptPass kept{st.layer_inputs.data.data(), st.keys.data(), st.values.data(), st.capacity, st.out.hidden.data.data()};
        for (std::size_t layer = 0; layer < L; ++layer) {
            std::vector<const PatchRun*> group;
            for (const PatchRun& run : runs)
                if (run.layer == layer) group.push_back(&run);
            if (group.empty()) continue;
            std::vector<float> rows = model::floats(std::uint64_t(group.size()) * d, call, "the runs' last rows");
            model::patch_runs(*impl_, kept, r, layer, group, rows.data());
            for (std::size_t i = 0, g = 0; i < runs.size(); ++i)
                if (runs[i].layer == layer) std::copy_n(rows.data() + g++ * d, d, last.begin() + std::ptrdiff_t(i * d));
        }
        // Where the last run started: its layer and its first patched position.
        const std::vector<std::int32_t>& at = runs.back().positions;
        st.resumed_layer = runs.back().layer;
        st.resumed_position = at.empty() ? 0 : std::size_t(*std::min_element(at.begin(), at.end()));
    } else {  // one patched pass per run
        for (std::size_t i = 0; i < runs.size(); ++i) {
            r.patch.assign(L * H, 0);
            r.patch[runs[i].layer * H + runs[i].head] = 1;
            r.patch_positions = runs[i].positions;
            const Output out = model::patched_pass(*impl_, st, r, false);
            std::copy_n(out.hidden.data.end() - std::ptrdiff_t(d), d, last.begin() + std::ptrdiff_t(i * d));
        }
    }
    std::vector<float> scratch = model::floats(std::uint64_t(runs.size()) * d, call, "the head's input");
    if (logit_ids.empty()) {
        Tensor logits({runs.size(), V});
        model::run_head(*impl_, last.data(), runs.size(), scratch.data(), logits.data.data());
        return logits;
    }
    Tensor logits({runs.size(), logit_ids.size()});
    model::run_head_columns(*impl_, last.data(), runs.size(), scratch.data(), logit_ids, logits.data.data());
    return logits;
}

}  // namespace attnscope
