// MultiHeadAttention's forward pass: the call's checks, the workspace plan, the projections, every head's
// attention spread over the threads, and the output projection. The parameters are multihead_parameters.cpp.
#include "attnscope/multihead_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "attend.hpp"
#include "multihead_errors.hpp"
#include "parallel.hpp"

namespace attnscope {
namespace {

using multihead::fail;
using multihead::fail_sizes;

// The throw sites below build their messages here, out of line, so each costs a call instead of the unwinding code
// of a chain of std::string temporaries.
[[noreturn]] void fail_shape(const char* name, const Shape& want, const Shape* alternative, const Shape& got)
{
    std::string message = "forward: ";
    message += name;
    message += ": expected shape ";
    message += to_string(want);
    if (alternative) {
        message += " or ";
        message += to_string(*alternative);
    }
    message += ", got ";
    message += to_string(got);
    throw std::invalid_argument(message);
}

}  // namespace

std::size_t MultiHeadAttention::weights_numel(const ForwardDims& dims, const ForwardOptions& options) const
{
    if (!options.need_weights) return 0;
    return checked_numel(weights_shape(dims, options), "forward: weights");
}

Shape MultiHeadAttention::weights_shape(const ForwardDims& dims, const ForwardOptions& options) const
{
    if (!options.need_weights) return {};
    if (options.average_weights) return {dims.batch, dims.query_len, dims.key_len};
    return {dims.batch, num_heads_, dims.query_len, dims.key_len};
}

void MultiHeadAttention::validate(const ForwardDims& dims, const ForwardOptions& options) const
{
    const char* where = "forward";
    if (dims.batch == 0) fail(where, "batch must be at least 1, got 0");
    if (dims.query_len == 0) fail(where, "query length must be at least 1, got 0");
    if (dims.key_len == 0) fail(where, "key length must be at least 1, got 0");
    const MaskView& kpm = options.key_padding_mask;
    const Shape padding{dims.batch, dims.key_len};
    if (!kpm.empty() && kpm.shape != padding) fail_shape("key_padding_mask", padding, nullptr, kpm.shape);
    const MaskView& am = options.attn_mask;
    const Shape shared{dims.query_len, dims.key_len};
    const Shape per_head{detail::checked_mul(dims.batch, num_heads_, where), dims.query_len, dims.key_len};
    if (!am.empty() && am.shape != shared && am.shape != per_head) fail_shape("attn_mask", shared, &per_head, am.shape);
    weights_numel(dims, options);  // overflow checks
    workspace_parts(dims, options, true);
}

std::size_t MultiHeadAttention::workspace_bytes(const ForwardDims& dims, const ForwardOptions& options) const
{
    validate(dims, options);
    std::size_t total = 0;
    for (std::size_t part : workspace_parts(dims, options, true)) total += part;  // sum checked by workspace_parts
    return total * sizeof(float);
}

void MultiHeadAttention::trim() { std::vector<float>().swap(workspace_); }

void MultiHeadAttention::forward(const float* query, const float* key, const float* value, const ForwardDims& dims,
                                 const ForwardOptions& options, float* output, float* weights)
{
    validate(dims, options);
    if (!query || !key || !value || !output) fail("forward", "query, key, value and output must not be null");
    if (options.need_weights && !weights) fail("forward", "weights must not be null when need_weights is true");
    const Buffers buffers = plan(dims, options, true);
    const std::size_t q_rows = dims.batch * dims.query_len, k_rows = dims.batch * dims.key_len;
    project(Projection::query, query, q_rows, buffers.q);
    project(Projection::key, key, k_rows, buffers.k);
    project(Projection::value, value, k_rows, buffers.v);
    attend_heads(buffers.q, buffers.k, buffers.v, dims, options, buffers, output, weights);
}

void MultiHeadAttention::project_key_value(const float* key, const float* value, std::size_t rows, float* key_out,
                                           float* value_out) const
{
    if (!key || !value || !key_out || !value_out) fail("project_key_value", "pointers must not be null");
    project(Projection::key, key, rows, key_out);
    project(Projection::value, value, rows, value_out);
}

void MultiHeadAttention::project_query(const float* query, std::size_t rows, float* out) const
{
    if (!query || !out) fail("project_query", "pointers must not be null");
    project(Projection::query, query, rows, out);
}

void MultiHeadAttention::project_head_output(std::size_t head, const float* context, float* out) const
{
    if (head >= num_heads_) fail_sizes("project_head_output: head % is out of range (num_heads %)", head, num_heads_, 0, false);
    // The forward pass's own product and packed out_proj over a concatenation that holds only this head's context:
    // the other heads' zeros add nothing, so this is the head's head_dim columns of out_proj.weight times it.
    const std::size_t E = embed_dim_, hd = head_dim();
    std::vector<float> concat(E, 0.f);
    std::copy_n(context, hd, concat.begin() + head * hd);
    detail::matmul_packed(1, E, E, concat.data(), E, packed_out_proj_.data(), out, E, nullptr);
}

void MultiHeadAttention::forward_projected(const float* query, std::size_t query_len, const float* projected_key,
                                           const float* projected_value, std::size_t key_len,
                                           const ForwardOptions& options, float* output, float* weights)
{
    const ForwardDims dims{1, query_len, key_len};
    validate(dims, options);
    if (!query || !projected_key || !projected_value || !output)
        fail("forward_projected", "query, keys, values and output must not be null");
    if (options.need_weights && !weights) fail("forward_projected", "weights must not be null when need_weights is true");
    const Buffers buffers = plan(dims, options, false);
    project(Projection::query, query, query_len, buffers.q);
    attend_heads(buffers.q, projected_key, projected_value, dims, options, buffers, output, weights);
}

void MultiHeadAttention::project(Projection which, const float* input, std::size_t rows, float* out) const
{
    const std::size_t in_features[3] = {embed_dim_, kdim_, vdim_};
    const auto index = static_cast<std::size_t>(which);
    const float* bias = bias_ ? in_proj_bias_.data() + index * embed_dim_ : nullptr;
    detail::matmul_packed(rows, embed_dim_, in_features[index], input, in_features[index],
                          packed_in_proj_[index].data(), out, embed_dim_, bias);
}

namespace {

// Query rows per attention task: a multiple of the streaming tile (so a split changes no bits) and small enough
// that one head of 512 tokens still makes 8 tasks to share out.
constexpr std::size_t query_rows_per_task = 2 * detail::streaming_query_block;
// Multiply-adds per attention task below which splitting is not worth waking a thread.
constexpr double attention_task_grain = 1 << 18;

std::size_t query_blocks(std::size_t Lq) { return (Lq + query_rows_per_task - 1) / query_rows_per_task; }

// Runs body(item, worker) for every item in [0, items), `tasks` contiguous runs of items spread over the threads.
template <class Body>
void for_each_item(std::size_t items, std::size_t tasks, Body&& body)
{
    auto run = [&](std::size_t task, std::size_t worker) {
        for (std::size_t item = task * items / tasks; item < (task + 1) * items / tasks; ++item) body(item, worker);
    };
    detail::parallel_for(tasks, run);
}

}  // namespace

MultiHeadAttention::WorkspaceParts MultiHeadAttention::workspace_parts(const ForwardDims& dims,
                                                                       const ForwardOptions& options,
                                                                       bool with_key_value) const
{
    // The projections, concatenated heads, every head's packed k and v, and each thread's scores: one streaming
    // tile without weights, one task's rows of scores for averaged weights, none when the scores go straight into
    // per-head weights.
    const char* where = "forward";
    using detail::checked_mul;
    const std::size_t E = embed_dim_, hd = head_dim(), Lq = dims.query_len, Lk = dims.key_len;
    const std::size_t heads = checked_mul(dims.batch, num_heads_, where);
    const std::size_t q_floats = checked_mul(checked_mul(dims.batch, Lq, where), E, where);
    const std::size_t kv_floats = with_key_value ? checked_mul(checked_mul(dims.batch, Lk, where), E, where) : 0;
    const bool scores_in_weights = options.need_weights && !options.average_weights;
    const std::size_t scores_per_worker =
        !options.need_weights ? detail::streaming_query_block * detail::streaming_key_block
        : scores_in_weights   ? 0
                              : checked_mul(std::min(Lq, query_rows_per_task), Lk, where);
    WorkspaceParts parts = {{
        q_floats,                                                   // q
        kv_floats,                                                  // k
        kv_floats,                                                  // v
        q_floats,                                                   // concatenated heads
        checked_mul(heads, detail::packed_floats(hd, Lk), where),  // kᵀ of every head, packed
        checked_mul(heads, detail::packed_floats(Lk, hd), where),  // v of every head, packed
        checked_mul(detail::worker_count(), scores_per_worker, where),
    }};
    // The whole workspace must be addressable in bytes. (Compare before adding: a part alone may be near SIZE_MAX.)
    std::size_t total = 0;
    for (std::size_t part : parts) {
        if (part > SIZE_MAX / sizeof(float) - total) throw std::length_error("forward: sizes too large for the address space");
        total += part;
    }
    return parts;
}

MultiHeadAttention::Buffers MultiHeadAttention::plan(const ForwardDims& dims, const ForwardOptions& options,
                                                     bool with_key_value)
{
    const WorkspaceParts parts = workspace_parts(dims, options, with_key_value);
    std::size_t total = 0;
    for (std::size_t part : parts) total += part;
    reuse_floats(workspace_, total, "forward: workspace");  // the shrink policy every kept buffer shares
    float* slice[7];
    slice[0] = workspace_.data();
    for (std::size_t p = 1; p < 7; ++p) slice[p] = slice[p - 1] + parts[p - 1];
    return {slice[0], slice[1], slice[2], slice[3], slice[4], slice[5], slice[6], parts[6] / detail::worker_count()};
}

namespace {

// An ablated head contributes nothing to the output projection: its Lq rows of head_dim floats are zeroed.
void zero_context(float* context, std::size_t rows, std::size_t head_dim, std::size_t stride)
{
    for (std::size_t i = 0; i < rows; ++i) std::fill_n(context + i * stride, head_dim, 0.f);
}

}  // namespace

void MultiHeadAttention::attend_heads(const float* q, const float* k, const float* v, const ForwardDims& dims,
                                      const ForwardOptions& options, const Buffers& buffers, float* output,
                                      float* weights) const
{
    const std::size_t E = embed_dim_, H = num_heads_, hd = head_dim();
    const std::size_t B = dims.batch, Lq = dims.query_len, Lk = dims.key_len;
    const bool scores_in_weights = options.need_weights && !options.average_weights;
    const std::size_t key_panel_floats = detail::packed_floats(hd, Lk), value_panel_floats = detail::packed_floats(Lk, hd);
    const MaskView& am = options.attn_mask;
    const MaskView& kpm = options.key_padding_mask;
    const bool am_per_head = am.shape.size() == 3;
    auto mask_at = [](const MaskView& m, std::size_t offset) -> const void* {
        return m.kind == MaskKind::boolean ? static_cast<const void*>(m.blocked + offset)
                                           : static_cast<const void*>(m.added + offset);
    };
    auto panels_of = [&](std::size_t bh) {
        return detail::AttendScratch{buffers.key_panels + bh * key_panel_floats,
                                     buffers.value_panels + bh * value_panel_floats};
    };
    const double head_work = double(Lq) * double(Lk) * double(hd) * 2;

    // Every head's keys and values packed once, so tasks on different query rows of a head share them.
    for_each_item(B * H, detail::task_count(B * H, B * H * double(Lk) * hd * 2, 1 << 17),
                  [&](std::size_t bh, std::size_t) {
                      const std::size_t b = bh / H, h = bh % H;
                      detail::pack_keys_and_values(Lk, hd, hd, {k + b * Lk * E + h * hd, E},
                                                   {v + b * Lk * E + h * hd, E}, panels_of(bh));
                  });

    // One head's query rows [row0, row0 + rows): scores into `scores` (rows × Lk), context into the concatenation.
    auto attend_block = [&](std::size_t b, std::size_t h, std::size_t row0, std::size_t rows, float* scores,
                            float* scratch) {
        detail::MaskRows masks[2];
        detail::AttendArgs args;
        args.scale = 1.f / std::sqrt(float(hd));
        args.causal = options.causal;
        args.masks = masks;
        if (!am.empty()) masks[args.mask_count++] = {am.kind, mask_at(am, am_per_head ? (b * H + h) * Lq * Lk : 0), Lk};
        if (!kpm.empty()) masks[args.mask_count++] = {kpm.kind, mask_at(kpm, b * Lk), 0};
        if (args.mask_count == 2 && masks[1].kind == MaskKind::additive) std::swap(masks[0], masks[1]);
        const detail::Strided qh{q + b * Lq * E + h * hd, E};
        float* context = buffers.concat + b * Lq * E + h * hd;
        const bool ablated = options.ablate_heads && options.ablate_heads[h];
        if (options.need_weights) {
            detail::attend_rows(row0, rows, Lk, hd, hd, qh, args, panels_of(b * H + h), scores, context, E);
            if (ablated) zero_context(context + row0 * E, rows, hd, E);  // after attend: the weights stay for the views
        } else if (ablated) {
            zero_context(context + row0 * E, rows, hd, E);  // nothing to compute: only the weights were wanted
        } else
            detail::attend_streaming_rows(row0, rows, Lk, hd, hd, qh, {v + b * Lk * E + h * hd, E}, args,
                                          panels_of(b * H + h), scratch, context, E);
    };

    const std::size_t blocks = query_blocks(Lq);
    if (!options.need_weights || !options.average_weights) {  // averaging only means something with weights
        // Tasks over (batch, head, query block): the same rows in the same order whatever thread takes them.
        const std::size_t items = B * H * blocks;
        for_each_item(items, detail::task_count(items, B * H * head_work, attention_task_grain),
                      [&](std::size_t item, std::size_t worker) {
                          const std::size_t bh = item / blocks, row0 = item % blocks * query_rows_per_task;
                          const std::size_t rows = std::min(query_rows_per_task, Lq - row0);
                          float* scores = scores_in_weights ? weights + (bh * Lq + row0) * Lk : nullptr;
                          attend_block(bh / H, bh % H, row0, rows, scores,
                                       buffers.scores + worker * buffers.scores_per_worker);
                      });
    } else {
        // Averaged weights: tasks over (batch, query block), heads in order inside, so the sum over heads adds in
        // the same order as with one thread.
        const std::size_t items = B * blocks;
        const float inv_heads = 1.f / float(H);
        for_each_item(items, detail::task_count(items, B * H * head_work, attention_task_grain),
                      [&](std::size_t item, std::size_t worker) {
                          const std::size_t b = item / blocks, row0 = item % blocks * query_rows_per_task;
                          const std::size_t rows = std::min(query_rows_per_task, Lq - row0);
                          float* scores = buffers.scores + worker * buffers.scores_per_worker;
                          float* average = weights + (b * Lq + row0) * Lk;
                          for (std::size_t h = 0; h < H; ++h) {
                              attend_block(b, h, row0, rows, scores, nullptr);
                              if (h == 0)
                                  for (std::size_t x = 0; x < rows * Lk; ++x) average[x] = scores[x] * inv_heads;
                              else
                                  for (std::size_t x = 0; x < rows * Lk; ++x) average[x] += scores[x] * inv_heads;
                          }
                      });
    }
    detail::matmul_packed(B * Lq, E, E, buffers.concat, E, packed_out_proj_.data(), output, E,
                          bias_ ? out_proj_bias_.data() : nullptr);
}

AttentionResult MultiHeadAttention::forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                            const ForwardOptions& options)
{
    const char* where = "forward";
    const bool batched = query.shape.size() == 3;
    if (query.shape.size() != 2 && query.shape.size() != 3)
        fail(where, "query: expected shape [batch, query_len, " + std::to_string(embed_dim_) + "] or [query_len, " +
                        std::to_string(embed_dim_) + "], got " + to_string(query.shape));
    if (query.shape.back() != embed_dim_)
        fail(where, "query: expected last dimension embed_dim = " + std::to_string(embed_dim_) + ", got " +
                        to_string(query.shape));
    ForwardDims dims;
    dims.batch = batched ? query.shape[0] : 1;
    dims.query_len = query.shape[query.shape.size() - 2];
    dims.key_len = key.shape.size() == query.shape.size() ? key.shape[key.shape.size() - 2] : 0;
    auto expect = [&](const char* name, const TensorView& t, std::size_t features) {
        const Shape want = batched ? Shape{dims.batch, dims.key_len, features} : Shape{dims.key_len, features};
        const std::string pattern = batched ? "[" + std::to_string(dims.batch) + ", key_len, " + std::to_string(features) + "]"
                                            : "[key_len, " + std::to_string(features) + "]";
        if (t.shape.size() != query.shape.size() || t.shape != want)
            fail(where, std::string(name) + ": expected shape " + pattern + " to match query " + to_string(query.shape) +
                            ", got " + to_string(t.shape));
    };
    expect("key", key, kdim_);
    expect("value", value, vdim_);

    ForwardOptions batched_options = options;
    if (!batched && !options.key_padding_mask.empty()) {
        if (options.key_padding_mask.shape != Shape{dims.key_len})
            fail(where, "key_padding_mask: expected shape " + to_string({dims.key_len}) +
                            " for unbatched input, got " + to_string(options.key_padding_mask.shape));
        batched_options.key_padding_mask.shape = {1, dims.key_len};
    }
    validate(dims, batched_options);

    Shape out_shape = query.shape;
    AttentionResult result{Tensor(out_shape), Tensor()};
    if (options.need_weights) {
        Shape ws = weights_shape(dims, options);
        if (!batched) ws.erase(ws.begin());
        result.weights = Tensor(ws);
    }
    forward(query.data, key.data, value.data, dims, batched_options, result.output.data.data(),
            options.need_weights ? result.weights.data.data() : nullptr);
    return result;
}

AttentionResult MultiHeadAttention::forward(const TensorView& query, const ForwardOptions& options)
{
    return forward(query, query, query, options);
}

}  // namespace attnscope
