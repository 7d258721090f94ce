// patch_each()'s runs of one patched layer in one pass over the kept unpatched pass, doing only the work a patch can
// change, in the bits of each run's own fresh pass:
//   - At the patched layer, only the patched head's context at the patched positions changes (its keys and values,
//     and every other head, are the kept pass's), so only those rows go through the output projection, the residual
//     sums and the MLP; the heads' contexts there are computed once for every run of the batch. A position where
//     the patch holds the very context the kept pass computed (the positions before the first token in which a
//     clean and a corrupted prompt differ) changes nothing, and is dropped: a run of such positions alone is the
//     kept pass.
//   - Above it, a run's rows from its first patched position on change (later rows see the changed keys), the rows
//     before it never do: their keys and values are the kept pass's. At the last layer only the last row's output
//     is read (patch_each returns the last position's logits): the changed rows' keys and values, then the last
//     row's attention, output projection and MLP. A patch of the last layer changes the last row only where it is
//     patched.
//   - At the layer just above, only the patched rows' inputs differ from the kept pass's: every other row's q|k|v is
//     the same in every run, so it is projected once for the batch.
//   - Every run's rows go through each projection, norm and MLP together, so a weight is read once per layer for all
//     of them; attention, RoPE and the keys and values stay per run.
// The products compute every element the same way whatever the number of rows (kernels/gemm.hpp), the norms and
// element-wise steps act on each row alone, and a query row's attention sums the same keys whatever rows its call
// computes (attend_heads' blocks are positions'), so each row has the bits of the fresh pass. (A fresh pass also
// multiplies a key hidden from a row by a zero weight, so a patched context holding NaN or infinity would reach rows
// before it there; the last row sees that key, so its logits are not finite either way.)
#include "patch_runs.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <xsimd/xsimd.hpp>

#include "../json.hpp"
#include "../parallel.hpp"
#include "../sizes.hpp"
#include "heads.hpp"
#include "steps.hpp"
#include "sublayers.hpp"

namespace attnscope {
namespace model {
namespace {

// Floats per SIMD vector of the element-wise kernels (kernels/elementwise.hpp).
constexpr std::size_t lanes = xsimd::batch<float, xsimd::default_arch>::size;
// The rows of a batch's layers above the patched one at most (beyond one run's): its buffers hold about a dozen of
// the layer's widths per row, and past a few hundred rows a product gains nothing from more.
constexpr std::size_t batch_rows = 512;

std::size_t checked(std::uint64_t n, const char* call, const char* what)
{
    if (n > std::uint64_t(SIZE_MAX / sizeof(float)))
        throw std::length_error(json::join({call, ": ", what, ": too large to address"}));
    return std::size_t(n);
}

// A run's patched positions, in order, once each (every position when it names none). Marked, not sorted: patch_each
// checked every position against T, and the .wasm holds no std::sort of sizes for this alone.
std::vector<std::size_t> patched_rows(const Transformer::PatchRun& run, std::size_t T)
{
    std::vector<std::uint8_t> named(T, run.positions.empty() ? 1 : 0);
    for (const std::int32_t p : run.positions) named[std::size_t(p)] = 1;
    std::vector<std::size_t> at;
    for (std::size_t t = 0; t < T; ++t)
        if (named[t]) at.push_back(t);
    return at;
}

// What the steps of one batch share: the model, the request, the kept pass, the rotary angles of every position and
// the scratch of one attention over the T keys.
struct Pass {
    const Transformer::Impl& m;
    const KeptPass& kept;
    const Transformer::Request& r;
    const plan::Stack& s;
    const StackWeights& sw;
    std::size_t T, d, q_cols, kv_cols, qkv_cols;
    const float* rope;
    std::vector<std::size_t> rope_at;
    float* scores;
    std::size_t worker_scores;
    float* panels;
    std::uint8_t* blocked;
};

// q|k|v of layer l's rows at positions first..first + n − 1 (row stride qkv_cols) through QK-norm and RoPE.
void rotate(const Pass& p, std::size_t l, float* qkv, std::size_t first, std::size_t n)
{
    const plan::Attention& a = p.s.layer(l).self;
    const std::size_t half = a.rotary.dims / 2;
    const float* cos = a.rope ? p.rope + p.rope_at[p.s.kind_of[l]] : nullptr;
    const float* sin = a.rope ? cos + p.T * half : nullptr;
    for (std::size_t t = 0; t < n; ++t)
        steps::qk_norm_and_rope(a, p.sw.layers[l], qkv + t * p.qkv_cols, a.rope ? cos + (first + t) * half : nullptr,
                                a.rope ? sin + (first + t) * half : nullptr);
}

// ctx [n, q_cols] = every head's attention of layer l for the queries q at positions first..first + n − 1 (row stride
// qkv_cols) over the keys and values of positions 0..T − 1 ([T, kv_cols] each), as self_attention() computes it:
// causal, windowed, padded, zero-ablated heads zeroed.
void attend(const Pass& p, std::size_t l, const float* q, std::size_t first, std::size_t n, const float* keys, const float* values, float* ctx)
{
    const plan::Attention& a = p.s.layer(l).self;
    const std::size_t T = p.T;
    const std::vector<std::uint8_t>& mask = p.r.attention_mask;
    for (std::size_t t = 0; t < n; ++t)
        for (std::size_t j = 0; j < T; ++j) {
            const std::size_t at = first + t;
            const bool visible = (!a.causal || j <= at) && (a.window == 0 || at < j + a.window) && (mask.empty() || mask[j] != 0);
            p.blocked[t * T + j] = visible ? 0 : 1;
        }
    const bool bias = a.relative_bias && p.s.relative.buckets;
    const std::size_t H = a.heads;
    const std::uint8_t* zeroed = p.r.ablate.empty() || p.r.ablation != Ablation::zero ? nullptr : p.r.ablate.data() + l * H;
    const Scratch b{nullptr, ctx, p.scores, p.worker_scores, nullptr, p.blocked, p.panels, nullptr, nullptr};
    const HeadAttention core{a, n, T, first, q, p.qkv_cols, keys, values, p.kv_cols, {MaskKind::boolean, p.blocked, T}, &p.s.relative,
                             bias ? p.sw.relative_bias.data.data() : nullptr, nullptr, zeroed, nullptr};
    attend_heads(core, b, ctx, p.q_cols);
}

// Rows' scratch for finish_layer.
struct Rows {
    float *h, *a, *f, *u;
};

// x [rows, width]: layer l's input rows become its output rows, from the heads' contexts ctx of those rows: the
// output projection, the residual sums and the MLP, as run_stack() does.
void finish_layer(const Pass& p, std::size_t l, float* x, const float* ctx, std::size_t rows, const Rows& w)
{
    const plan::Layer& kind = p.s.layer(l);
    const LayerWeights& lw = p.sw.layers[l];
    const plan::Norms& an = kind.attn_norms;
    const std::size_t d = p.d;
    apply(lw.o, ctx, rows, w.a);
    if (kind.parallel) {  // the MLP reads the layer's input too, and both outputs join it together
        mlp(kind.mlp, lw, sublayer_input(kind.mlp_norms.in, lw.mlp_in, x, rows, d, w.h), rows, w.u, w.f);
        steps::add(w.a, rows * d, w.f);
        return residual(an, lw.attn_out, lw.attn_after, x, w.a, rows, d);
    }
    residual(an, lw.attn_out, lw.attn_after, x, w.a, rows, d);
    const plan::Norms& mn = kind.mlp_norms;
    mlp(kind.mlp, lw, sublayer_input(mn.in, lw.mlp_in, x, rows, d, w.h), rows, w.u, w.a);
    residual(mn, lw.mlp_out, lw.mlp_after, x, w.a, rows, d);
}

// The stack's output row (after its final norm) from its last layer's output row x.
void final_row(const Pass& p, const float* x, float* out)
{
    if (p.s.final_norm.present()) steps::norm_rows(p.s.final_norm, p.sw.final_norm, x, 1, p.d, out);
    else std::memcpy(out, x, p.d * sizeof(float));
}

// One batch of runs of one layer. `work` is the workspace, kept from batch to batch; `sifted_work` the workspace of
// the batch's runs again without their positions that change nothing (run_batch sifts them first), likewise kept,
// so that neither shrinks and grows from batch to batch; null: every patched position changes its head's context.
void run_batch(const Transformer::Impl& m, const KeptPass& kept, const Transformer::Request& r, std::size_t layer,
               const Transformer::PatchRun* const* runs, std::size_t R, float* last, std::vector<float>& work,
               std::vector<float>* sifted_work)
{
    const plan::Stack& s = m.plan.main();
    const plan::Attention& a0 = s.layer(0).self;
    const std::size_t T = r.tokens.size(), d = s.width(), L = s.layers(), hd = a0.head_dim;
    const std::size_t q_cols = a0.q_width(), kv_cols = a0.kv_width(), qkv_cols = q_cols + 2 * kv_cols;
    // At `layer`, run i's rows are its patched positions at[i]; above it, positions first[i]..T − 1, rows offset[i]..
    std::vector<std::vector<std::size_t>> at(R);
    std::vector<std::size_t> offset(R + 1, 0);
    std::size_t u0 = T, u1 = 0, M = 0;
    for (std::size_t i = 0; i < R; ++i) {
        at[i] = patched_rows(*runs[i], T);
        u0 = std::min(u0, at[i].front());
        u1 = std::max(u1, at[i].back() + 1);
        M += at[i].size();
        offset[i + 1] = offset[i] + (layer + 1 < L ? T - at[i].front() : 0);
    }
    const std::size_t N = offset[R], U = u1 - u0, most = std::max({N, M, U});
    // The workspace: the rows' buffers for the most rows any step has, one attention's scratch over T keys (as
    // run_stack's for T rows), the heads' contexts at `layer`, and one run's keys and values.
    const StackBuffers one = stack_buffers(s, T, T, 0), rows = stack_buffers(s, most, T, 0);
    const char* call = r.call;
    const std::size_t n_rows = checked(rows.residual + std::uint64_t(most) * d, call, "the runs' residual stream");
    const std::size_t n_qkv = checked(rows.qkv, call, "q|k|v"), n_ctx = checked(rows.context, call, "the heads' contexts");
    const std::size_t n_mlp = checked(rows.mlp, call, "the MLP's workspace"), n_scores = checked(one.scores, call, "the attention scores");
    const std::size_t n_panels = checked(one.panels, call, "the packed keys"), n_rope = checked(one.rope, call, "the rotary angles");
    const std::size_t n_kv = checked(std::uint64_t(T) * kv_cols, call, "the keys");
    const std::size_t n_kept_qkv = checked((std::uint64_t(T) + M) * qkv_cols, call, "the kept rows' q|k|v");
    const std::uint64_t total = std::uint64_t(n_rows) + n_qkv + 2 * std::uint64_t(n_ctx) + n_mlp + n_scores + n_panels + n_rope + 2 * std::uint64_t(n_kv) +
                                n_kept_qkv;
    // Every float a result reads is written first, so a batch takes the last one's workspace as it is (grown, never
    // cleared): a fresh one a batch cost a clearing of about 20 MB each (GPT-2 small, 512 rows). (The last layer's
    // queries of rows other than a run's last are never computed: RoPE turns what is there, and nothing reads it.)
    reuse_floats(work, checked(total + 1, call, "the runs' workspace"), json::join({call, ": the runs' workspace"}).c_str());
    std::vector<std::uint8_t> blocked(std::size_t(one.blocked_bytes));
    float* next = work.data();
    const auto take = [&](std::size_t n) {
        float* at = next;
        next += n;
        return at;
    };
    float *x = take(most * d), *y = take(most * d), *qkv = take(n_qkv), *ctx = take(n_ctx), *shared = take(n_ctx);
    const Rows w{take(most * d), take(most * d), take(most * d), take(n_mlp)};
    float *scores = take(n_scores), *panels = take(n_panels), *rope = take(n_rope), *keys = take(n_kv), *values = take(n_kv);
    float* kept_qkv = take(n_kept_qkv);
    StackStep positions;  // every position's angles, position t at row t
    positions.rows = T;
    Pass p{m, kept, r, s, m.weights.stacks[0], T, d, q_cols, kv_cols, qkv_cols, rope, rope_tables(s, positions, rope),
           scores, n_scores / std::max<std::size_t>(1, detail::worker_count()), panels, blocked.data()};
    const auto layer_input = [&](std::size_t l, std::size_t t) { return kept.layer_inputs + (l * T + t) * d; };

    // The patched layer: every head's context at positions u0..u1 − 1 once (the kept pass's), then each run's rows
    // with its head's context patched.
    {
        const LayerWeights& lw = p.sw.layers[layer];
        apply(lw.qkv, sublayer_input(s.layer(layer).attn_norms.in, lw.attn_in, layer_input(layer, u0), U, d, w.h), U, qkv);
        rotate(p, layer, qkv, u0, U);
        attend(p, layer, qkv, u0, U, kept.keys + layer * kept.capacity * kv_cols, kept.values + layer * kept.capacity * kv_cols, shared);
        // A patch that gives its head the context it has changes nothing: two prompts that agree up to a position
        // agree on every context before it (a causal row sees no later token), bit for bit. Such positions are
        // dropped; a run left with none is the kept pass; the others run again without them (computing these
        // contexts again: one layer's q|k|v and attention over the batch's patched span, little beside what is dropped).
        if (sifted_work) {
            std::vector<Transformer::PatchRun> changed;
            std::vector<std::size_t> active;
            bool dropped = false;
            for (std::size_t i = 0; i < R; ++i) {
                const std::size_t head = runs[i]->head;
                Transformer::PatchRun run{layer, head, {}};
                for (const std::size_t t : at[i])
                    if (std::memcmp(r.patch_from->data.data() + (layer * T + t) * q_cols + head * hd, shared + (t - u0) * q_cols + head * hd,
                                    hd * sizeof(float)) != 0)
                        run.positions.push_back(std::int32_t(t));
                dropped = dropped || run.positions.size() < at[i].size();
                if (run.positions.empty()) {
                    std::memcpy(last + i * d, kept.hidden + (T - 1) * d, d * sizeof(float));
                    continue;
                }
                changed.push_back(std::move(run));
                active.push_back(i);
            }
            if (dropped) {  // nothing in `work` is read after this
                if (changed.empty()) return;
                std::vector<const Transformer::PatchRun*> left;
                for (const Transformer::PatchRun& run : changed) left.push_back(&run);
                std::vector<float> changed_last(changed.size() * d);
                run_batch(m, kept, r, layer, left.data(), left.size(), changed_last.data(), *sifted_work, nullptr);
                for (std::size_t k = 0; k < active.size(); ++k) std::memcpy(last + active[k] * d, changed_last.data() + k * d, d * sizeof(float));
                return;
            }
        }
        std::size_t k = 0;
        for (std::size_t i = 0; i < R; ++i) {
            const std::size_t head = runs[i]->head;
            for (const std::size_t t : at[i]) {
                std::memcpy(ctx + k * q_cols, shared + (t - u0) * q_cols, q_cols * sizeof(float));
                std::memcpy(ctx + k * q_cols + head * hd, r.patch_from->data.data() + (layer * T + t) * q_cols + head * hd, hd * sizeof(float));
                std::memcpy(x + k++ * d, layer_input(layer, t), d * sizeof(float));
            }
        }
        finish_layer(p, layer, x, ctx, M, w);
    }
    if (layer + 1 == L) {  // a run's last row is its patched row, or the kept one
        for (std::size_t i = 0, k = 0; i < R; k += at[i++].size()) {
            if (at[i].back() == T - 1) final_row(p, x + (k + at[i].size() - 1) * d, last + i * d);
            else std::memcpy(last + i * d, kept.hidden + (T - 1) * d, d * sizeof(float));
        }
        return;
    }
    // The layers above: run i's rows from at[i].front() on, the kept pass's input to the next layer but its patched rows.
    for (std::size_t i = 0, k = 0; i < R; ++i) {
        const std::size_t first = at[i].front();
        std::memcpy(y + offset[i] * d, layer_input(layer + 1, first), (T - first) * d * sizeof(float));
        for (const std::size_t t : at[i]) std::memcpy(y + (offset[i] + t - first) * d, x + k++ * d, d * sizeof(float));
    }
    for (std::size_t l = layer + 1; l < L; ++l) {
        const LayerWeights& lw = p.sw.layers[l];
        const plan::Norm& norm = s.layer(l).attn_norms.in;
        // The layer above the patched one: a row whose input is the kept pass's (all but each run's patched rows) has
        // its q|k|v, the same in every run: projected once for the batch (from u0 on), and the patched rows on their own.
        const bool once = l == layer + 1 && T - u0 + M < N;
        if (once) {
            float* patched = kept_qkv + (T - u0) * qkv_cols;
            apply(lw.qkv, sublayer_input(norm, lw.attn_in, layer_input(l, u0), T - u0, d, w.h), T - u0, kept_qkv);
            rotate(p, l, kept_qkv, u0, T - u0);
            apply(lw.qkv, sublayer_input(norm, lw.attn_in, x, M, d, w.h), M, patched);
            for (std::size_t i = 0, k = 0; i < R; ++i) {
                const std::size_t first = at[i].front();
                std::memcpy(qkv + offset[i] * qkv_cols, kept_qkv + (first - u0) * qkv_cols, (T - first) * qkv_cols * sizeof(float));
                for (const std::size_t t : at[i]) {
                    float* row = qkv + (offset[i] + t - first) * qkv_cols;
                    std::memcpy(row, patched + k++ * qkv_cols, qkv_cols * sizeof(float));
                    rotate(p, l, row, t, 1);
                }
            }
        } else {
            const float* h = sublayer_input(norm, lw.attn_in, y, N, d, w.h);
            // The last layer reads one query a run, its last row's: the rows' keys and values alone (a third less of
            // the product where q, k and v are as wide), then the last rows' queries in one product (through w.a and
            // ctx, which attend() fills after). Each column has the bits of the whole product's.
            if (l + 1 == L && apply_columns(lw.qkv, q_cols, 2 * kv_cols, h, N, qkv + q_cols, qkv_cols)) {
                for (std::size_t i = 0; i < R; ++i) std::memcpy(w.a + i * d, h + (offset[i + 1] - 1) * d, d * sizeof(float));
                apply_columns(lw.qkv, 0, q_cols, w.a, R, ctx, q_cols);
                for (std::size_t i = 0; i < R; ++i)
                    std::memcpy(qkv + (offset[i + 1] - 1) * qkv_cols, ctx + i * q_cols, q_cols * sizeof(float));
            } else {
                apply(lw.qkv, h, N, qkv);
            }
        }
        for (std::size_t i = 0; i < R; ++i) {
            const std::size_t first = at[i].front(), n = T - first;
            float* q = qkv + offset[i] * qkv_cols;
            if (!once) rotate(p, l, q, first, n);
            // The kept keys and values before `first`, then this run's.
            std::memcpy(keys, kept.keys + l * kept.capacity * kv_cols, first * kv_cols * sizeof(float));
            std::memcpy(values, kept.values + l * kept.capacity * kv_cols, first * kv_cols * sizeof(float));
            for (std::size_t t = 0; t < n; ++t) {
                std::memcpy(keys + (first + t) * kv_cols, q + t * qkv_cols + q_cols, kv_cols * sizeof(float));
                std::memcpy(values + (first + t) * kv_cols, q + t * qkv_cols + q_cols + kv_cols, kv_cols * sizeof(float));
            }
            if (l + 1 < L) {
                attend(p, l, q, first, n, keys, values, ctx + offset[i] * q_cols);
                continue;
            }
            // The last layer: only the last row reaches the logits (every changed row's keys and values still count).
            attend(p, l, q + (n - 1) * qkv_cols, T - 1, 1, keys, values, ctx + i * q_cols);
            std::memcpy(x + i * d, y + (offset[i + 1] - 1) * d, d * sizeof(float));
        }
        if (l + 1 < L) finish_layer(p, l, y, ctx, N, w);
    }
    finish_layer(p, L - 1, x, ctx, R, w);
    for (std::size_t i = 0; i < R; ++i) final_row(p, x + i * d, last + i * d);
}

}  // namespace

bool batchable(const Transformer::Impl& m, const Transformer::Request& r)
{
    if (!r.ablate.empty() && r.ablation == Ablation::mean) return false;
    const plan::Stack& s = m.plan.main();
    if (s.width() % lanes) return false;
    for (const plan::Layer& kind : s.kinds)
        if (kind.mlp.inner % lanes || kind.has_cross) return false;
    return true;
}

void patch_runs(const Transformer::Impl& m, const KeptPass& kept, const Transformer::Request& r, std::size_t layer,
                const std::vector<const Transformer::PatchRun*>& runs, float* last)
{
    const std::size_t T = r.tokens.size(), d = m.plan.main().width();
    std::vector<float> work, sifted_work;
    // Batches of whole runs, up to batch_rows rows above the patched layer (or one run).
    for (std::size_t i = 0; i < runs.size();) {
        std::size_t rows = 0, j = i;
        for (; j < runs.size(); ++j) {
            const std::vector<std::int32_t>& at = runs[j]->positions;
            const std::size_t n = T - (at.empty() ? 0 : std::size_t(*std::min_element(at.begin(), at.end())));
            if (j > i && rows + n > std::max(batch_rows, T)) break;
            rows += n;
        }
        run_batch(m, kept, r, layer, runs.data() + i, j - i, last + i * d, work, &sifted_work);
        i = j;
    }
}

}  // namespace model
}  // namespace attnscope
