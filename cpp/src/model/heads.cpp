// Every head's attention over packed keys and values (heads.hpp): causal, windowed, padded, with a relative-position
// bias or soft-capped scores as the plan says, one task per head and block of query rows.
#include "heads.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../kernels/gemm.hpp"
#include "../parallel.hpp"
#include "steps.hpp"

namespace attnscope {
namespace model {
namespace {

using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;
// Multiply-adds of q·kᵀ (over every head) below which the attention runs on the calling thread: a few microseconds
// of work, so the 64-token test models (and a generated token past ~100 positions) already use the helpers.
constexpr double attention_parallel_work = 1 << 16;
// Keys per piece of the packing of keys and values (a multiple of the panel width): 2 × 64 × 64 floats moved at
// GPT-2's head size, a few microseconds.
constexpr std::size_t key_pack_block = 64;
static_assert(key_pack_block % NR == 0, "pieces start on a panel boundary");

// The bucket of a key `distance` = key − query positions away (HF's T5Attention._relative_position_bucket): exact
// up to half the buckets, then logarithmic up to max_distance, computed in float32 as torch computes it.
std::size_t bucket(long distance, const plan::RelativeBias& r)
{
    std::size_t buckets = r.buckets, base = 0;
    unsigned long n;
    if (r.bidirectional) {
        buckets /= 2;
        if (distance > 0) base = buckets;
        n = (unsigned long)(distance < 0 ? -distance : distance);
    } else {
        n = (unsigned long)(distance < 0 ? -distance : 0);
    }
    const std::size_t exact = buckets / 2;
    if (n < exact) return base + n;
    const float scaled = std::log(float(n) / float(exact)) / float(std::log(double(r.max_distance) / double(exact))) *
                         float(buckets - exact);
    return base + std::min(exact + std::size_t(scaled), buckets - 1);
}

}  // namespace

void attend_heads(const HeadAttention& c, const Scratch& b, float* context, std::size_t ctx_ld)
{
    const plan::Attention& a = c.a;
    const std::size_t H = a.heads, hd = a.head_dim, group = a.heads / a.kv_heads, Lk = c.keys, T = c.rows;
    const std::size_t key_panel_floats = detail::packed_floats(hd, Lk), value_panel_floats = detail::packed_floats(Lk, hd);
    float* const key_panels = b.panels;
    float* const value_panels = b.panels + a.kv_heads * key_panel_floats;
    // Short steps (a generated token) are not worth waking the helpers for.
    const bool parallel = double(H) * double(T) * double(Lk) * double(hd) >= attention_parallel_work;
    // Each key/value head packed in pieces of key_pack_block keys, the pieces split between the threads.
    const std::size_t pieces = (Lk + key_pack_block - 1) / key_pack_block;
    auto pack = [&](std::size_t index, std::size_t) {
        const std::size_t g = index / pieces, j0 = index % pieces * key_pack_block, j1 = std::min(Lk, j0 + key_pack_block);
        detail::pack_keys_and_values(j0, j1, Lk, hd, hd, {c.k + g * hd, c.kv_ld}, {c.v + g * hd, c.kv_ld},
                                     {key_panels + g * key_panel_floats, value_panels + g * value_panel_floats});
    };
    if (parallel) detail::parallel_for(a.kv_heads * pieces, pack);
    else
        for (std::size_t i = 0; i < a.kv_heads * pieces; ++i) pack(i, 0);
    auto panels_of = [&](std::size_t head) {
        const std::size_t g = head / group;
        return detail::AttendScratch{key_panels + g * key_panel_floats, value_panels + g * value_panel_floats, Lk};
    };
    if (c.trace) {  // q·k before scaling: the same product attend_rows starts with
        const std::size_t query = c.trace->query - c.first_position;
        c.trace->scores = Tensor({Lk});
        steps::row_product(Lk, hd, c.q + query * c.q_ld + c.trace->head * hd, panels_of(c.trace->head).key_panels, hd * NR,
                           c.trace->scores.data.data());
    }
    // One task per head and block of query rows: when causal, its keys end at its block's end (the later ones are
    // all hidden, their weights zero), so the causal half of the scores is never computed. The blocks are the query
    // positions' blocks of query_block, wherever the call's rows start and end, so a row sums its softmax over the
    // same keys in every call that computes it (a pass over every position, or a patched run's from one position on)
    // and its bits depend only on its position. Each task's result depends only on the task, so every thread count
    // gives the same bits. Causal blocks are longer the later their rows, so the tasks go from the last block of every
    // head to the first: the threads end on short tasks, and neither waits long for the other at the end.
    const std::size_t block = std::min<std::size_t>(T, query_block), first_block = c.first_position / query_block;
    const std::size_t blocks = T ? (c.first_position + T - 1) / query_block - first_block + 1 : 0;
    auto task = [&](std::size_t index, std::size_t worker) {
        const std::size_t head = index % H, start = (first_block + blocks - 1 - index / H) * query_block, end = start + query_block;
        const std::size_t r0 = std::max(start, c.first_position) - c.first_position;
        const std::size_t rows = std::min(end, c.first_position + T) - c.first_position - r0;
        const std::size_t seen = a.causal ? std::min(Lk, end) : Lk;
        float* sc = b.scores + worker * b.worker_scores;
        detail::MaskRows masks[2];
        std::size_t count = 0;
        if (c.mask.base) {
            masks[count] = c.mask;
            masks[count++].base = static_cast<const std::uint8_t*>(c.mask.base) + r0 * c.mask.row_stride;
        }
        if (c.bias) {  // this head's bias for these rows: table[bucket(key − query)][head], row stride `seen`
            float* bias = sc + block * Lk;
            for (std::size_t t = 0; t < rows; ++t)
                for (std::size_t j = 0; j < seen; ++j)
                    bias[t * seen + j] = c.bias[bucket(long(j) - long(c.first_position + r0 + t), *c.relative) * H + head];
            masks[count++] = {MaskKind::additive, bias, seen};
        }
        detail::AttendArgs args;
        args.scale = a.scale;
        args.softcap = a.softcap;
        args.masks = masks;
        args.mask_count = count;
        // Row 0 of this call is row r0 of the input: q and the context start there.
        const detail::Strided q{c.q + r0 * c.q_ld + head * hd, c.q_ld};
        float* out = context + r0 * ctx_ld + head * hd;
        detail::attend_rows(0, rows, seen, hd, hd, q, args, panels_of(head), sc, out, ctx_ld);
        if (c.zeroed && c.zeroed[head])
            for (std::size_t t = 0; t < rows; ++t) std::fill_n(out + t * ctx_ld, hd, 0.f);
        if (c.maps)
            for (std::size_t t = 0; t < rows; ++t) {
                float* dst = c.maps + (head * T + r0 + t) * Lk;
                std::memcpy(dst, sc + t * seen, seen * sizeof(float));
                std::fill(dst + seen, dst + Lk, 0.f);
            }
        const std::size_t query = c.trace ? c.trace->query - c.first_position : 0;
        if (c.trace && head == c.trace->head && query >= r0 && query < r0 + rows) {
            c.trace->scale = a.scale;
            c.trace->softcap = a.softcap;
            c.trace->weights = Tensor({Lk});
            std::copy(sc + (query - r0) * seen, sc + (query - r0 + 1) * seen, c.trace->weights.data.data());
        }
    };
    if (parallel) detail::parallel_for(H * blocks, task);
    else
        for (std::size_t i = 0; i < H * blocks; ++i) task(i, 0);
}


}  // namespace model
}  // namespace attnscope
