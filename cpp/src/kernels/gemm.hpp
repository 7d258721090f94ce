// C = A·B (+ bias) with B packed into column panels: the matrix product behind every projection and both
// attention products.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "../sizes.hpp"
#include "half_panels.hpp"

// The WebAssembly builds compile the sources without the GEMM once for both their SIMD128 and relaxed-SIMD cores
// (CMakeLists.txt, ATTNSCOPE_GEMM_SOURCES), and those sources only with this macro.
#ifdef ATTNSCOPE_NO_GEMM
#error "this source includes the GEMM: add it to ATTNSCOPE_GEMM_SOURCES in CMakeLists.txt"
#endif

namespace attnscope {
namespace kernels {

/// Columns per packed panel: two SIMD vectors, the width of the register tile.
template <class Arch>
constexpr std::size_t panel_width = 2 * xsimd::batch<float, Arch>::size;

// The register tile's rows: 4 unless the build sets ATTNSCOPE_GEMM_TILE_ROWS (CMakeLists.txt does for the
// relaxed-SIMD WebAssembly builds, where a fused multiply-add needs no temporary register and 6 rows fit).
#ifndef ATTNSCOPE_GEMM_TILE_ROWS
#define ATTNSCOPE_GEMM_TILE_ROWS 4
#endif

/// The build's register tile: the rows gemm_packed's tile has unless gemm_rows_setting says otherwise.
constexpr std::size_t gemm_tile_rows = ATTNSCOPE_GEMM_TILE_ROWS;
static_assert(gemm_tile_rows >= 4 && gemm_tile_rows <= 8, "a register tile of 4 to 8 rows");

/// The rows of the register tile products use: the build's gemm_tile_rows, or below it where the engine's code for
/// the taller tile is slow (set once at start-up, before any product; set_gemm_tile_rows() in attend.cpp). Node 20's
/// V8 (11.3) places every broadcast load of a k step before its multiply-adds, so 6 rows need 12 accumulators, 2
/// vectors of B and 6 broadcasts live at once, 20 of its 15 registers, and spill (docs/toolchain.md,
/// "Relaxed SIMD: two builds"). There the setting is sliver_rows (5): matmul_packed multiplies A's rows packed in
/// slivers by F32 weights (gemm_packed_slivers), whose broadcasts are shuffles V8 places next to their multiply-adds;
/// attention's products and fewer rows than a sliver take 4 rows, and products over 16-bit panels the build's own.
/// Or it is 4.
inline std::atomic<std::size_t> gemm_rows_setting{gemm_tile_rows};

/// The tile's multiply-add a·b + c: xsimd's fma (one rounding where the arch has FMA, as with AVX2 + FMA; SIMD128
/// has none, and there it is a multiply and an add), unless the build defines ATTNSCOPE_GEMM_MULTIPLY_ADD(a, b, c)
/// over the batch's register type: the relaxed-SIMD WebAssembly builds do (cmake/wasm_relaxed_madd.h). Only the
/// GEMM uses it, so the norms, the softmax and the other kernels keep their roundings in every build.
template <class Batch>
inline Batch tile_multiply_add(const Batch& a, const Batch& b, const Batch& c)
{
#ifdef ATTNSCOPE_GEMM_MULTIPLY_ADD
    using reg = typename Batch::register_type;
    return Batch((reg)(ATTNSCOPE_GEMM_MULTIPLY_ADD(reg(a), reg(b), reg(c))));
#else
    return xsimd::fma(a, b, c);
#endif
}

/// Floats needed to pack a K×N matrix (N rounded up to whole panels); throws std::length_error on overflow.
template <class Arch>
std::size_t packed_floats(std::size_t K, std::size_t N)
{
    return detail::packed_floats(K, N, panel_width<Arch>, "packed matrix");
}

/// Packs the K×N matrix whose element (k, j) is src[k·k_stride + j·n_stride] into panels of panel_width columns:
/// panel p holds rows 0..K of columns p·NR..p·NR+NR contiguously, zero-padded past N, so the product reads B
/// sequentially.
template <class Arch>
void pack_panels(std::size_t K, std::size_t N, const float* src, std::size_t k_stride, std::size_t n_stride,
                 float* packed)
{
    constexpr std::size_t NR = panel_width<Arch>;
    for (std::size_t j0 = 0; j0 < N; j0 += NR) {
        const std::size_t cols = std::min(NR, N - j0);
        for (std::size_t k = 0; k < K; ++k, packed += NR) {
            std::size_t c = 0;
            for (; c < cols; ++c) packed[c] = src[k * k_stride + (j0 + c) * n_stride];
            for (; c < NR; ++c) packed[c] = 0.f;
        }
    }
}

/// Packs B[K×N] (row-major, leading dimension ldb).
struct pack_b {
    template <class Arch>
    void operator()(Arch, std::size_t K, std::size_t N, const float* B, std::size_t ldb, float* packed) const
    {
        pack_panels<Arch>(K, N, B, ldb, 1, packed);
    }
};

/// Packs B = Btᵀ given Bt[N×K] (row-major, leading dimension ldbt): PyTorch's [out, in] weights, or keys [Lk, D]
/// for q·kᵀ.
struct pack_b_transposed {
    template <class Arch>
    void operator()(Arch, std::size_t K, std::size_t N, const float* Bt, std::size_t ldbt, float* packed) const
    {
        pack_panels<Arch>(K, N, Bt, 1, ldbt, packed);
    }
};

/// Rows of a sliver (pack_slivers): the lanes of one SIMD vector, and one row more.
template <class Arch>
constexpr std::size_t sliver_rows = xsimd::batch<float, Arch>::size + 1;

/// Floats pack_slivers writes for the whole slivers of M rows of K.
template <class Arch>
std::size_t sliver_floats(std::size_t M, std::size_t K)
{
    return detail::checked_mul(M / sliver_rows<Arch> * sliver_rows<Arch>, K, "rows of A in slivers");
}

/// Packs the rows of A[M×K] (leading dimension lda) that fill whole slivers of R = sliver_rows rows: sliver s holds,
/// k after k, the R values A[s·R + r][k]. The rows after the last whole sliver are not packed (a product reads them
/// from A).
template <class Arch>
void pack_slivers(std::size_t M, std::size_t K, const float* A, std::size_t lda, float* slivers)
{
    constexpr std::size_t R = sliver_rows<Arch>;
    for (std::size_t i = 0; i + R <= M; i += R, A += R * lda)
        for (std::size_t k = 0; k < K; ++k, slivers += R)
            for (std::size_t r = 0; r < R; ++r) slivers[r] = A[r * lda + k];
}

// Lane L of v in every lane: a shuffle. V8 11.3 places a shuffle next to the multiply-adds it feeds, where it keeps
// broadcast loads in their load order ahead of them all (the register pressure gemm_rows_setting describes).
template <class Arch, std::uint32_t L>
inline xsimd::batch<float, Arch> lane_broadcast(const xsimd::batch<float, Arch>& v)
{
    static_assert(xsimd::batch<float, Arch>::size == 4, "a 4-lane shuffle");
    return xsimd::swizzle(v, xsimd::batch_constant<xsimd::batch<std::uint32_t, Arch>, L, L, L, L>());
}

// The multiply-adds of a sliver's first W rows at one k step, row r from lane r of `rows`.
template <class Arch, std::size_t MR, std::size_t... R>
inline void sliver_lanes_multiply_add(const xsimd::batch<float, Arch>& rows, const xsimd::batch<float, Arch>& b0,
                                      const xsimd::batch<float, Arch>& b1, xsimd::batch<float, Arch> (&acc0)[MR],
                                      xsimd::batch<float, Arch> (&acc1)[MR], std::index_sequence<R...>)
{
    const auto row = [&](auto lane) {
        constexpr std::size_t r = decltype(lane)::value;
        const xsimd::batch<float, Arch> x = lane_broadcast<Arch, std::uint32_t(r)>(rows);
        acc0[r] = tile_multiply_add(x, b0, acc0[r]);
        acc1[r] = tile_multiply_add(x, b1, acc1[r]);
    };
    (row(std::integral_constant<std::size_t, R>()), ...);
}

// One MR×NR tile of C held in registers for the whole k loop: each packed B vector feeds MR multiply-adds and
// each broadcast A value feeds two. `cols` < NR only in the last panel, whose result goes through a buffer.
// With RowMax, `row_max` holds W floats per row of the tile whose lanes keep the running maximum of what the tile
// stores, so a softmax over the rows needs no pass of its own to find it. (A template flag, not a null test: the
// compiler would otherwise copy every k loop into a with- and a without-maximum version.) P is what the panels hold:
// F32, or a checkpoint's BF16 or F16 widened as each row is loaded (exact, so the same bits as F32 panels).
//
// Every element is bias + Σ_k a·b accumulated in k order by the same operations whatever MR: a row's
// bits do not depend on the tile it lands in, so any split of the rows (threads, blocks) gives the same result.
// The k loop reads A through one pointer per row, each stepped by one float: Emscripten builds with LLVM's loop
// strength reduction off, so A[r·lda + k] cost an add, a shift and an add per row and step, half as many integer
// instructions as the tile's SIMD ones (bench/gemm.mjs measures the tile). Unrolling k does not pay: LLVM then
// hoists every step's B loads to the top of the iteration, V8 keeps its loads in that order, and 8 live B vectors
// beside 8 accumulators spill V8's 15 XMM registers (slower in bench/gemm.mjs).
//
// With Sliver, A is a sliver of sliver_rows<Arch> rows (pack_slivers) and lda is unused: each k step loads the first
// W rows' values as one vector and broadcasts its lanes by shuffles, and broadcasts the last row's from memory.
template <class Arch, std::size_t MR, bool RowMax = false, PanelType P = PanelType::f32, bool Sliver = false>
inline void gemm_tile(std::size_t K, const float* A, std::size_t lda, const panel_element_t<P>* panel, float* C, std::size_t ldc,
                      const float* bias, std::size_t cols, bool accumulate, float* row_max = nullptr)
{
    using batch = xsimd::batch<float, Arch>;
    constexpr std::size_t W = batch::size;
    constexpr std::size_t NR = 2 * W;
    static_assert(!Sliver || (MR == W + 1 && !RowMax && P == PanelType::f32), "a sliver tile: W + 1 rows of F32 panels");

    batch acc0[MR], acc1[MR];
    const float* a[MR];
    {
        batch b0(0.f), b1(0.f);
        if (bias && cols == NR) {
            b0 = batch::load_unaligned(bias);
            b1 = batch::load_unaligned(bias + W);
        } else if (bias) {  // the last panel: the bias ends inside it
            alignas(64) float init[NR] = {};
            std::copy(bias, bias + cols, init);
            b0 = batch::load_aligned(init);
            b1 = batch::load_aligned(init + W);
        }
        for (std::size_t r = 0; r < MR; ++r) {
            acc0[r] = b0;
            acc1[r] = b1;
            a[r] = A + r * lda;
        }
    }
    if constexpr (Sliver) {
        const float* sliver = A;
        for (std::size_t k = 0; k < K; ++k, panel += NR, sliver += MR) {
            batch b0, b1;
            load_panel_row<Arch, P>(panel, b0, b1);
            const batch rows = batch::load_unaligned(sliver);
            sliver_lanes_multiply_add(rows, b0, b1, acc0, acc1, std::make_index_sequence<W>());
            const batch x(sliver[W]);
            acc0[W] = tile_multiply_add(x, b0, acc0[W]);
            acc1[W] = tile_multiply_add(x, b1, acc1[W]);
        }
    } else {
        for (std::size_t k = 0; k < K; ++k, panel += NR) {
            batch b0, b1;
            load_panel_row<Arch, P>(panel, b0, b1);
            for (std::size_t r = 0; r < MR; ++r) {
                const batch x(*a[r]++);
                acc0[r] = tile_multiply_add(x, b0, acc0[r]);
                acc1[r] = tile_multiply_add(x, b1, acc1[r]);
            }
        }
    }
    for (std::size_t r = 0; r < MR; ++r) {
        float* c = C + r * ldc;
        if (cols == NR) {
            if (accumulate) {
                acc0[r] += batch::load_unaligned(c);
                acc1[r] += batch::load_unaligned(c + W);
            }
            acc0[r].store_unaligned(c);
            acc1[r].store_unaligned(c + W);
            if (RowMax) {
                float* m = row_max + r * W;
                xsimd::max(batch::load_unaligned(m), xsimd::max(acc0[r], acc1[r])).store_unaligned(m);
            }
        } else {
            alignas(64) float out[NR];
            acc0[r].store_aligned(out);
            acc1[r].store_aligned(out + W);
            for (std::size_t j = 0; j < cols; ++j) c[j] = accumulate ? c[j] + out[j] : out[j];
            if (RowMax)  // only the real columns: the panel's zero padding must not count
                for (std::size_t j = 0; j < cols; ++j) row_max[r * W] = c[j] > row_max[r * W] ? c[j] : row_max[r * W];
        }
    }
}

// The rows short of a whole tile at the end of a block (fewer than R + 1 ≤ 8): at most one tile each of 4, 2 and
// 1 rows, so the binary holds those three heights beside MR, not every height below it.
template <class Arch, std::size_t R>
inline void gemm_short_tile(std::size_t rows, std::size_t K, const float* A, std::size_t lda, const float* panel,
                            float* C, std::size_t ldc, const float* bias, std::size_t cols, bool accumulate)
{
    static_assert(R < 8, "one tile each of 4, 2 and 1 rows covers at most 7");
    if constexpr (R >= 4) {
        if (rows >= 4) {
            gemm_tile<Arch, 4>(K, A, lda, panel, C, ldc, bias, cols, accumulate);
            rows -= 4, A += 4 * lda, C += 4 * ldc;
        }
    }
    if constexpr (R >= 2) {
        if (rows >= 2) {
            gemm_tile<Arch, 2>(K, A, lda, panel, C, ldc, bias, cols, accumulate);
            rows -= 2, A += 2 * lda, C += 2 * ldc;
        }
    }
    if (rows == 1) gemm_tile<Arch, 1>(K, A, lda, panel, C, ldc, bias, cols, accumulate);
}

/// Rows of A per block of a product, whole tiles of `tile` rows: about 128 KB of A (32768 floats of K) stays in L2
/// while every panel of B (in L1) passes over it.
inline std::size_t gemm_block_rows(std::size_t K, std::size_t tile)
{
    return std::max<std::size_t>(tile, (32768 / std::max<std::size_t>(K, 1)) / tile * tile);
}

/// C[M×N] = A[M×K]·B + bias[N] (bias may be null), or C += A·B with `accumulate` (then bias must be null), in
/// register tiles of MR rows (every MR gives the same bits). B is packed (pack_b / pack_b_transposed); panel p starts
/// at packed + p·panel_stride, normally K·panel_width, larger when A·B multiplies a slice of the rows of a bigger
/// packed matrix.
/// With P 16-bit (panels of pack_half_panels), the rows short of a tile go one by one through a 1-row tile: two
/// tile variants per type in the binary instead of MR (the bits are the same, whatever the tile).
template <std::size_t MR, PanelType P = PanelType::f32>
struct gemm_packed_tiles {
    /// `tile` rows per register tile: MR, or (F32 panels only) 4, below MR: one loop for both heights, each tile
    /// function instantiated once (the taller tile's short tiles include the 4-row one). Out of line: every product
    /// calls one copy (LLVM had inlined a second into the layer's attention).
    template <class Arch>
    [[gnu::noinline]] void operator()(Arch, std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda,
                                      const panel_element_t<P>* packed, std::size_t panel_stride, float* C, std::size_t ldc,
                                      const float* bias, bool accumulate, std::size_t tile = MR) const
    {
        constexpr std::size_t NR = panel_width<Arch>;
        const bool tall = P != PanelType::f32 || MR == 4 || tile != 4;
        const std::size_t rows = tall ? MR : 4;
        const std::size_t block_rows = gemm_block_rows(K, rows);
        for (std::size_t i0 = 0; i0 < M; i0 += block_rows) {
            const std::size_t i_end = std::min(M, i0 + block_rows);
            for (std::size_t j0 = 0, p = 0; j0 < N; j0 += NR, ++p) {
                const panel_element_t<P>* panel = packed + p * panel_stride;
                const std::size_t cols = std::min(NR, N - j0);
                const float* panel_bias = bias ? bias + j0 : nullptr;
                std::size_t i = i0;
                if (tall)
                    for (; i + MR <= i_end; i += MR)
                        gemm_tile<Arch, MR, false, P>(K, A + i * lda, lda, panel, C + i * ldc + j0, ldc, panel_bias, cols, accumulate);
                if constexpr (P == PanelType::f32 && MR > 4) {
                    if (!tall)
                        for (; i + 4 <= i_end; i += 4)
                            gemm_tile<Arch, 4>(K, A + i * lda, lda, panel, C + i * ldc + j0, ldc, panel_bias, cols, accumulate);
                }
                if constexpr (P == PanelType::f32)
                    gemm_short_tile<Arch, MR - 1>(i_end - i, K, A + i * lda, lda, panel, C + i * ldc + j0, ldc, panel_bias,
                                                  cols, accumulate);
                else
                    for (; i < i_end; ++i)
                        gemm_tile<Arch, 1, false, P>(K, A + i * lda, lda, panel, C + i * ldc + j0, ldc, panel_bias, cols, accumulate);
            }
        }
    }
};

/// C[M×N] = A[M×K]·B + bias as gemm_packed_tiles, with the rows in whole slivers read from `slivers` (pack_slivers of
/// the same A, sliver 0 at A's row 0) by tiles of sliver_rows rows, and the rows after them from A (tiles of 4, 2 and
/// 1 rows). The same bits as gemm_packed_tiles: only where the tile finds a row's values changes. For Node 20's V8,
/// which spills the 6-row tile (gemm_rows_setting): 5 rows whose broadcasts are shuffles fit its 15 registers.
struct gemm_packed_slivers {
    template <class Arch>
    [[gnu::noinline]] void operator()(Arch, std::size_t M, std::size_t N, std::size_t K, const float* slivers, const float* A,
                                      std::size_t lda, const float* packed, std::size_t panel_stride, float* C, std::size_t ldc,
                                      const float* bias, bool accumulate) const
    {
        constexpr std::size_t NR = panel_width<Arch>, R = sliver_rows<Arch>;
        const std::size_t whole = M / R * R;
        const std::size_t block_rows = gemm_block_rows(K, R);
        for (std::size_t i0 = 0; i0 < M; i0 += block_rows) {
            const std::size_t i_end = std::min(M, i0 + block_rows), tiled_end = std::min(i_end, whole);
            for (std::size_t j0 = 0, p = 0; j0 < N; j0 += NR, ++p) {
                const float* panel = packed + p * panel_stride;
                const std::size_t cols = std::min(NR, N - j0);
                const float* panel_bias = bias ? bias + j0 : nullptr;
                std::size_t i = i0;
                for (; i < tiled_end; i += R)
                    gemm_tile<Arch, R, false, PanelType::f32, true>(K, slivers + i * K, 0, panel, C + i * ldc + j0, ldc,
                                                                    panel_bias, cols, accumulate);
                gemm_short_tile<Arch, R - 1>(i_end - i, K, A + i * lda, lda, panel, C + i * ldc + j0, ldc, panel_bias, cols,
                                             accumulate);
            }
        }
    }
};

/// gemm_packed_tiles at the build's tile when gemm_rows_setting names it, else at 4 rows. Either gives the same bits.
struct gemm_packed_at_setting {
    template <class Arch>
    void operator()(Arch arch, std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* packed,
                    std::size_t panel_stride, float* C, std::size_t ldc, const float* bias, bool accumulate) const
    {
        const bool own = gemm_rows_setting.load(std::memory_order_relaxed) == gemm_tile_rows;
        gemm_packed_tiles<gemm_tile_rows>{}(arch, M, N, K, A, lda, packed, panel_stride, C, ldc, bias, accumulate,
                                            own ? gemm_tile_rows : 4);
    }
};

/// The product of attention and of every projection, at this build's tile or 4 rows (gemm_rows_setting); at the sliver
/// setting, matmul_packed multiplies F32 weights by gemm_packed_slivers instead.
using gemm_packed = gemm_packed_at_setting;
/// The same over BF16 and over F16 panels (pack_half_panels), at this build's tile whatever the setting: a second
/// height of each would cost the relaxed-SIMD .wasm its size budget (tests/js/size.test.js).
using gemm_packed_bf16 = gemm_packed_tiles<gemm_tile_rows, PanelType::bf16>;
using gemm_packed_f16 = gemm_packed_tiles<gemm_tile_rows, PanelType::f16>;

/// Lanes of gemm_packed_row_max's `row_max` per row of C: one SIMD vector.
template <class Arch>
constexpr std::size_t row_max_lanes = xsimd::batch<float, Arch>::size;

/// C[M×N] = A[M×K]·B, as gemm_packed without bias, for M a multiple of 4 (whole register tiles; one tile variant
/// in the binary), finding each row's maximum on the way: the largest value stored in row i ends up as the largest
/// of row_max[i·row_max_lanes ..] (M·row_max_lanes floats the caller set to -inf). SSE's max, which NaN does not
/// reliably win: a caller that must see NaN looks for it itself (the softmax does, as NaN reaches its sum). For
/// q·kᵀ, whose rows the softmax reads next: one pass over the scores less.
struct gemm_packed_row_max {
    static constexpr std::size_t row_multiple = 4;

    template <class Arch>
    void operator()(Arch, std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda,
                    const float* packed, std::size_t panel_stride, float* C, std::size_t ldc, float* row_max) const
    {
        constexpr std::size_t NR = panel_width<Arch>, L = row_max_lanes<Arch>, MR = row_multiple;
        const std::size_t block_rows = gemm_block_rows(K, MR);
        for (std::size_t i0 = 0; i0 < M; i0 += block_rows) {
            const std::size_t i_end = std::min(M, i0 + block_rows);
            for (std::size_t j0 = 0, p = 0; j0 < N; j0 += NR, ++p)
                for (std::size_t i = i0; i + MR <= i_end; i += MR)
                    gemm_tile<Arch, MR, true>(K, A + i * lda, lda, packed + p * panel_stride, C + i * ldc + j0, ldc,
                                              nullptr, std::min(NR, N - j0), false, row_max + i * L);
        }
    }
};

}  // namespace kernels
}  // namespace attnscope
