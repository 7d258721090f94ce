// The per-head attention loops and the dispatch of the SIMD kernels.
#include "attend.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "attnscope/kernel_settings.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemm.hpp"
#include "kernels/softmax.hpp"
#include "parallel.hpp"

namespace attnscope {
namespace detail {

using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;
constexpr float neg_inf = -std::numeric_limits<float>::infinity();
// Whether matmul_packed can read A in slivers (kernels::gemm_packed_slivers, at set_gemm_tile_rows(5)): in the builds
// with a taller tile than 4 (the relaxed-SIMD WebAssembly ones, where an engine may spill it) over 4-lane vectors.
constexpr bool slivers_built = kernels::gemm_tile_rows > 4 && xsimd::batch<float, arch>::size == 4;
static_assert(streaming_key_block % NR == 0, "key tiles must start on a panel boundary");

std::size_t packed_floats(std::size_t K, std::size_t N)
{
    return packed_floats(K, N, NR, "attention workspace");
}

// Multiply-adds per task of a threaded product: large enough that waking a thread (tens of µs in a browser)
// costs little, small enough that (64, 256, 4) already spreads over two threads.
constexpr double matmul_task_grain = 1 << 19;

// Packed B above which a product is split by column panels instead of rows. Split by rows, every 4-row task reads
// all of B again: from memory for an LM head (50,257 × 768: 154 MB), from L3 for a 2-9 MB projection, a byte per
// multiply-add either way. Split by columns, each task's panels stay in L2 while all the rows pass over them.
constexpr double matmul_column_split_bytes = 1 << 20;
// Bytes of B's panels one column task holds: they stay in L2 while the task's rows pass over them in blocks.
constexpr std::size_t matmul_column_task_bytes = 384 << 10;

namespace {

// Products that read A in slivers (gemm_sliver_products()).
std::atomic<std::size_t> sliver_products{0};

// matmul_packed over panels of any type (kernels::PanelType), by Gemm (gemm_packed or a 16-bit one).
template <class Gemm, class T>
void matmul_panels(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const T* packed, float* C,
                   std::size_t ldc, const float* bias)
{
    // Whole register tiles per task: only the last task has a short tile.
    const std::size_t MR = matmul_tile_rows(std::is_same_v<T, float>);
    // At the sliver setting (F32 panels), A's whole slivers are packed here once, and every task reads them.
    // Freed when the call returns, so a pass leaves the heap as it found it (the tasks only read it). M × K floats for
    // the length of one product, only under Node 20 (docs/toolchain.md); forward()'s memory plan counts the largest.
    std::unique_ptr<float[]> packed_rows;
    const float* slivers = nullptr;
    if constexpr (slivers_built && std::is_same_v<T, float>) {
        if (matmul_sliver_rows() == MR && M >= MR && N > 0) {
            const std::size_t n = kernels::sliver_floats<arch>(M, K);
            packed_rows.reset(new (std::nothrow) float[n]);  // uninitialised: pack_slivers writes every float
            if (!packed_rows)
                throw std::length_error("matmul: rows of A in slivers: " + std::to_string(n) + " floats do not fit in the memory left");
            // Packed on the calling thread: split over the threads (one more parallel_for a product), passes were no
            // faster in alternating processes (bench/records/2026-12-07-tried-on-zen3.md).
            kernels::pack_slivers<arch>(M, K, A, lda, packed_rows.get());
            slivers = packed_rows.get();
            sliver_products.fetch_add(1, std::memory_order_relaxed);
        }
    }
    // Rows r0..r1 (r0 a multiple of MR) by panels p0.. (columns j0..j1).
    auto product = [&](std::size_t r0, std::size_t r1, std::size_t p0, std::size_t j0, std::size_t j1) {
        if constexpr (slivers_built && std::is_same_v<T, float>) {
            if (slivers)
                return kernels::gemm_packed_slivers{}(arch{}, r1 - r0, j1 - j0, K, slivers + r0 * K, A + r0 * lda, lda,
                                                      packed + p0 * K * NR, K * NR, C + r0 * ldc + j0, ldc,
                                                      bias ? bias + j0 : nullptr, false);
        }
        Gemm{}(arch{}, r1 - r0, j1 - j0, K, A + r0 * lda, lda, packed + p0 * K * NR, K * NR, C + r0 * ldc + j0, ldc,
               bias ? bias + j0 : nullptr, false);
    };
    const std::size_t panels = (N + NR - 1) / NR;
    const double work = double(M) * double(N) * double(K);
    if (double(K) * double(panels * NR) * sizeof(float) >= matmul_column_split_bytes || M <= 4 * MR) {
        // By column panels, each task all the rows over its own panels: B is read from memory once, and a few rows
        // (a generated token's) are shared between threads too. Each element is computed as by the row split.
        const std::size_t per_task = std::max<std::size_t>(1, matmul_column_task_bytes / (std::max<std::size_t>(K, 1) * NR * sizeof(float)));
        const std::size_t groups = task_count((panels + per_task - 1) / per_task, work, matmul_task_grain);
        if (groups == 0) return;  // N = 0: no columns, nothing to compute
        // A projection with 1-3 MiB of B has only 3-8 column groups: at the end one thread would sit idle for a
        // whole group, or wait for a helper on a shared core to finish its last one. So each group's rows are cut
        // too, until there are about 16 tasks (blocks of at least 16 rows, each task keeping its grain of work).
        // Consecutive tasks share a group, so a thread alone still passes every row over a group while it is in L2.
        // No more than that: two threads on one group each bring it in from L3 or memory (an LM head's 154 MB, with
        // its hundreds of groups, stays split by columns only).
        const std::size_t tiles = (M + MR - 1) / MR;
        const std::size_t row_blocks = std::max<std::size_t>(1, std::min({(M + 15) / 16, (16 + groups - 1) / groups,
                                                                          std::size_t(work / matmul_task_grain) / groups}));
        auto row_of = [&](std::size_t block) { return std::min(M, block * tiles / row_blocks * MR); };
        auto body = [&](std::size_t task, std::size_t) {
            const std::size_t group = task / row_blocks, block = task % row_blocks;
            const std::size_t p0 = group * panels / groups, p1 = (group + 1) * panels / groups;
            product(row_of(block), row_of(block + 1), p0, p0 * NR, std::min(N, p1 * NR));
        };
        return parallel_for(groups * row_blocks, body);
    }
    const std::size_t row_blocks = (M + MR - 1) / MR;
    const std::size_t tasks = task_count(row_blocks, work, matmul_task_grain);
    auto rows_of = [&](std::size_t task) { return std::min(M, task * row_blocks / tasks * MR); };
    auto body = [&](std::size_t task, std::size_t) { product(rows_of(task), rows_of(task + 1), 0, 0, N); };
    parallel_for(tasks, body);
}

}  // namespace

void matmul_packed(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* packed,
                   float* C, std::size_t ldc, const float* bias)
{
    matmul_panels<kernels::gemm_packed>(M, N, K, A, lda, packed, C, ldc, bias);
}

void matmul_packed(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const std::uint16_t* packed,
                   bool bf16, float* C, std::size_t ldc, const float* bias)
{
    if (bf16) matmul_panels<kernels::gemm_packed_bf16>(M, N, K, A, lda, packed, C, ldc, bias);
    else matmul_panels<kernels::gemm_packed_f16>(M, N, K, A, lda, packed, C, ldc, bias);
}

std::size_t matmul_tile_rows(bool f32_panels)
{
    return f32_panels ? kernels::gemm_rows_setting.load(std::memory_order_relaxed) : kernels::gemm_tile_rows;
}

std::size_t matmul_sliver_rows()
{
    const bool slivers = slivers_built && kernels::gemm_rows_setting.load(std::memory_order_relaxed) == kernels::sliver_rows<arch>;
    return slivers ? kernels::sliver_rows<arch> : 0;
}

std::size_t matmul_panel_width() { return kernels::panel_width<arch>; }

void pack_transposed(std::size_t K, std::size_t N, const float* Bt, std::size_t ldbt, float* packed)
{
    kernels::pack_b_transposed{}(arch{}, K, N, Bt, ldbt, packed);
}

namespace {

// The softmax's parts, each compiled once in this file (exp_sum is never inlined anyway): attend_rows and
// attend_streaming_rows both use them, and inlined into each call site they cost the .wasm kilobytes for no
// measurable speed (each call is a whole row).
[[gnu::noinline]] float row_max(const float* x, std::size_t n) { return kernels::row_max{}(arch{}, x, n); }
[[gnu::noinline]] void softmax_given_max(float* x, std::size_t n, float scale, float largest)
{
    kernels::softmax_given_max{}(arch{}, x, n, scale, largest);
}

// Scores of query i against keys j0..j0+n: scale, add or apply every mask, block later keys when causal.
void prepare_row(float* row, std::size_t i, std::size_t j0, std::size_t n, const AttendArgs& args)
{
    // The first additive mask rides along with the scaling pass (unless the scores are capped first); the others get
    // a pass each.
    const float* first_added = nullptr;
    std::size_t m = 0;
    if (args.mask_count > 0 && args.masks[0].kind == MaskKind::additive && args.softcap == 0.f) {
        first_added = static_cast<const float*>(args.masks[0].base) + i * args.masks[0].row_stride + j0;
        m = 1;
    }
    kernels::scale_add{}(arch{}, row, n, args.scale, first_added);
    if (args.softcap > 0.f) kernels::softcap_inplace{}(arch{}, row, n, args.softcap);
    for (; m < args.mask_count; ++m) {
        const MaskRows& mask = args.masks[m];
        if (mask.kind == MaskKind::additive) {
            kernels::add_inplace{}(arch{}, row, n, static_cast<const float*>(mask.base) + i * mask.row_stride + j0);
        } else {
            const auto* blocked = static_cast<const std::uint8_t*>(mask.base) + i * mask.row_stride + j0;
            for (std::size_t j = 0; j < n; ++j)
                if (blocked[j]) row[j] = neg_inf;
        }
    }
    if (args.causal)
        for (std::size_t j = i + 1 > j0 ? i + 1 - j0 : 0; j < n; ++j) row[j] = neg_inf;
}

}  // namespace

void pack_keys_and_values(std::size_t Lk, std::size_t D, std::size_t Dv, Strided k, Strided v,
                          const AttendScratch& panels)
{
    pack_keys_and_values(0, Lk, Lk, D, Dv, k, v, panels);
}

// Out of line: the whole packing above is this over every key, not a copy of it.
[[gnu::noinline]] void pack_keys_and_values(std::size_t j0, std::size_t j1, std::size_t Lk, std::size_t D, std::size_t Dv,
                                            Strided k, Strided v, const AttendScratch& panels)
{
    // kᵀ (D×Lk, pack_b_transposed's layout): its panels are keys (columns) j0 / NR onwards, each D rows. v (Lk×Dv,
    // pack_b's): its panels are its columns, each Lk rows, of which rows j0..j1 are this piece's.
    kernels::pack_panels<arch>(D, j1 - j0, k.data + j0 * k.ld, 1, k.ld, panels.key_panels + j0 / NR * D * NR);
    for (std::size_t p = 0; p * NR < Dv; ++p)
        kernels::pack_panels<arch>(j1 - j0, std::min(NR, Dv - p * NR), v.data + j0 * v.ld + p * NR, v.ld, 1,
                                   panels.value_panels + p * Lk * NR + j0 * NR);
}

void attend_rows(std::size_t row0, std::size_t rows, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q,
                 const AttendArgs& args, const AttendScratch& panels, float* scores, float* out, std::size_t ldo)
{
    // Without masks the scale rides along with the exp, and the product finds each row's maximum as it stores the
    // scores: two passes less over every row. With a mask both must wait, as PyTorch adds masks to the scaled
    // scores. (A scale ≤ 0 would turn the row maximum into the minimum.)
    if (args.mask_count == 0 && !args.causal && args.scale > 0.f && args.softcap == 0.f) {
        constexpr std::size_t chunk = 64, L = kernels::row_max_lanes<arch>;  // rows per product: bounded scratch
        static_assert(chunk % kernels::gemm_packed_row_max::row_multiple == 0, "whole tiles per chunk");
        alignas(64) float lanes[chunk * L];
        for (std::size_t c0 = 0; c0 < rows; c0 += chunk) {
            const std::size_t n = std::min(chunk, rows - c0);
            const std::size_t tiled = n / kernels::gemm_packed_row_max::row_multiple * kernels::gemm_packed_row_max::row_multiple;
            const float* qc = q.data + (row0 + c0) * q.ld;
            float* sc = scores + c0 * Lk;
            std::fill(lanes, lanes + n * L, neg_inf);
            kernels::gemm_packed_row_max{}(arch{}, tiled, Lk, D, qc, q.ld, panels.key_panels, D * NR, sc, Lk, lanes);
            // The last rows short of a tile (only when the rows end there): the plain product, then a pass for the max.
            kernels::gemm_packed{}(arch{}, n - tiled, Lk, D, qc + tiled * q.ld, q.ld, panels.key_panels, D * NR,
                                   sc + tiled * Lk, Lk, nullptr, false);
            for (std::size_t r = tiled; r < n; ++r) lanes[r * L] = row_max(sc + r * Lk, Lk);
            for (std::size_t r = 0; r < n; ++r) {
                float largest = neg_inf;
                for (std::size_t l = 0; l < L; ++l) largest = lanes[r * L + l] > largest ? lanes[r * L + l] : largest;
                softmax_given_max(sc + r * Lk, Lk, args.scale, largest);
            }
        }
    } else {
        kernels::gemm_packed{}(arch{}, rows, Lk, D, q.data + row0 * q.ld, q.ld, panels.key_panels, D * NR, scores,
                               Lk, nullptr, false);
        for (std::size_t r = 0; r < rows; ++r) {
            float* row = scores + r * Lk;
            prepare_row(row, row0 + r, 0, Lk, args);
            softmax_given_max(row, Lk, 1.f, row_max(row, Lk));  // softmax_inplace, from the shared parts
        }
    }
    const std::size_t value_rows = panels.value_rows ? panels.value_rows : Lk;
    kernels::gemm_packed{}(arch{}, rows, Dv, Lk, scores, Lk, panels.value_panels, value_rows * NR, out + row0 * ldo,
                           ldo, nullptr, false);
}

void attend(std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q, Strided k, Strided v,
            const AttendArgs& args, const AttendScratch& scratch, float* scores, float* out, std::size_t ldo)
{
    pack_keys_and_values(Lk, D, Dv, k, v, scratch);
    attend_rows(0, Lq, Lk, D, Dv, q, args, scratch, scores, out, ldo);
}

void attend_streaming_rows(std::size_t row0, std::size_t rows_total, std::size_t Lk, std::size_t D, std::size_t Dv,
                           Strided q, Strided v, const AttendArgs& args, const AttendScratch& panels,
                           float* block_scores, float* out, std::size_t ldo)
{
    constexpr std::size_t QB = streaming_query_block, KB = streaming_key_block;
    float running_max[QB], running_sum[QB];
    // attend() multiplies causally blocked keys' values by a zero weight, and 0·NaN = 0·inf = NaN. The tiles below
    // skip those keys, so they bring the same NaN in explicitly: per value column, the last row that is not finite.
    std::vector<std::size_t> last_nonfinite_row;
    if (args.causal && row0 + std::min(QB, rows_total) < Lk)  // some block of these rows skips keys
        for (std::size_t j = 0; j < Lk; ++j)
            for (std::size_t d = 0; d < Dv; ++d)
                if (!std::isfinite(v.data[j * v.ld + d])) {
                    if (last_nonfinite_row.empty()) last_nonfinite_row.assign(Dv, Lk);  // Lk: none in that column
                    last_nonfinite_row[d] = j;
                }

    for (std::size_t i0 = row0; i0 < row0 + rows_total; i0 += QB) {
        const std::size_t rows = std::min(QB, row0 + rows_total - i0);
        float* acc = out + i0 * ldo;
        for (std::size_t r = 0; r < rows; ++r) {
            std::fill(acc + r * ldo, acc + r * ldo + Dv, 0.f);
            running_max[r] = neg_inf;
            running_sum[r] = 0.f;
        }
        // Causal: keys after the block's last query never take part.
        const std::size_t key_end = args.causal ? std::min(Lk, i0 + rows) : Lk;
        for (std::size_t j0 = 0; j0 < key_end; j0 += KB) {
            const std::size_t cols = std::min(KB, key_end - j0);
            kernels::gemm_packed{}(arch{}, rows, cols, D, q.data + i0 * q.ld, q.ld, panels.key_panels + j0 * D, D * NR,
                                   block_scores, KB, nullptr, false);
            for (std::size_t r = 0; r < rows; ++r) {
                float* row = block_scores + r * KB;
                prepare_row(row, i0 + r, j0, cols, args);
                const float tile_max = row_max(row, cols);
                const float new_max = std::max(running_max[r], tile_max);
                if (new_max == neg_inf || std::isnan(tile_max)) {
                    // Every key so far blocked: this tile adds nothing. A NaN score poisons the row's sum instead,
                    // so the row comes out NaN, as the materialising path gives.
                    if (std::isnan(tile_max)) running_sum[r] = tile_max;
                    std::fill(row, row + cols, 0.f);
                    continue;
                }
                // Rescale what was summed against the old maximum to the new one (exp(-inf) = 0 the first time).
                const float correction = std::exp(running_max[r] - new_max);
                running_sum[r] = running_sum[r] * correction + kernels::exp_sum{}(arch{}, row, cols, new_max);
                running_max[r] = new_max;
                if (correction != 1.f) kernels::scale_inplace{}(arch{}, acc + r * ldo, Dv, correction);
            }
            kernels::gemm_packed{}(arch{}, rows, Dv, cols, block_scores, KB, panels.value_panels + j0 * NR, Lk * NR,
                                   acc, ldo, nullptr, true);
        }
        for (std::size_t r = 0; r < rows; ++r)  // a row with every key blocked keeps its zeros
            if (running_sum[r] != 0.f) kernels::scale_inplace{}(arch{}, acc + r * ldo, Dv, 1.f / running_sum[r]);
        if (!last_nonfinite_row.empty())
            for (std::size_t d = 0; d < Dv; ++d)
                if (last_nonfinite_row[d] != Lk && last_nonfinite_row[d] >= key_end)
                    for (std::size_t r = 0; r < rows; ++r) acc[r * ldo + d] = std::numeric_limits<float>::quiet_NaN();
    }
}

void attend_streaming(std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q, Strided k, Strided v,
                      const AttendArgs& args, const AttendScratch& scratch, float* block_scores, float* out,
                      std::size_t ldo)
{
    pack_keys_and_values(Lk, D, Dv, k, v, scratch);
    attend_streaming_rows(0, Lq, Lk, D, Dv, q, v, args, scratch, block_scores, out, ldo);
}

}  // namespace detail

std::size_t gemm_sliver_products() { return detail::sliver_products.load(std::memory_order_relaxed); }

std::size_t set_gemm_tile_rows(std::size_t rows)
{
    if (rows == 4 || rows == kernels::gemm_tile_rows || (detail::slivers_built && rows == kernels::sliver_rows<detail::arch>))
        kernels::gemm_rows_setting.store(rows, std::memory_order_relaxed);
    return kernels::gemm_rows_setting.load(std::memory_order_relaxed);
}

}  // namespace attnscope
