// One attention problem (one head of one batch element) on strided buffers: the loop both
// scaled_dot_product_attention and MultiHeadAttention run, in a materialising and a streaming form.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attnscope/tensor.hpp"
#include "sizes.hpp"  // checked_mul, for the callers that size their buffers from an attention problem

namespace attnscope {
namespace detail {

/// One mask source as seen by one attention problem: row i of the scores reads
/// `base + i * row_stride` (row_stride 0: the same row for every query, as a key padding mask).
struct MaskRows {
    MaskKind kind = MaskKind::boolean;
    const void* base = nullptr;
    std::size_t row_stride = 0;
};

/// Row-major matrix views with leading dimensions, so heads can be read in place from [seq, embed] buffers.
struct Strided {
    const float* data;
    std::size_t ld;
};

/// Everything one attention problem reads besides q, k and v.
struct AttendArgs {
    float scale = 1.f;
    const MaskRows* masks = nullptr;
    std::size_t mask_count = 0;
    bool causal = false;
    /// > 0: each scaled score s becomes softcap·tanh(s / softcap) before the masks are applied (config.json's
    /// attn_logit_softcapping, HF's order: scale, cap, then the mask).
    float softcap = 0.f;
};

/// Scratch an attention problem needs: k and v packed for the products (packed_floats of D×Lk and Lk×Dv).
struct AttendScratch {
    float* key_panels;
    float* value_panels;
    /// Rows the values were packed with when more than the call's Lk (attend_rows over the first Lk keys of a
    /// longer packed set, as a causal block of queries sees); 0: Lk.
    std::size_t value_rows = 0;
};

/// Floats of a K×N matrix packed into this build's panels (sizes.hpp's packed_floats at the kernels' panel width).
std::size_t packed_floats(std::size_t K, std::size_t N);

/// Query rows and keys per tile of attend_streaming(); its score scratch is their product.
constexpr std::size_t streaming_query_block = 32;
constexpr std::size_t streaming_key_block = 256;

/// Packs one head's keys (kᵀ, D×Lk) and values (Lk×Dv) into `panels` for attend_rows() and
/// attend_streaming_rows().
void pack_keys_and_values(std::size_t Lk, std::size_t D, std::size_t Dv, Strided k, Strided v,
                          const AttendScratch& panels);
/// The part of pack_keys_and_values() that keys and values [j0, j1) fill (j0 a multiple of the panel width, j1 ≤ Lk),
/// so that pieces of the keys can be packed at the same time: pieces that cover [0, Lk) write what one call writes.
void pack_keys_and_values(std::size_t j0, std::size_t j1, std::size_t Lk, std::size_t D, std::size_t Dv, Strided k,
                          Strided v, const AttendScratch& panels);

/// Rows [row0, row0 + rows) of attend() over keys and values already packed into `panels`: `q` and `out` are the
/// whole head's (row i at data + i·ld), `scores` holds just these rows (rows×Lk). Each row's result is the same
/// whatever the split, so rows can be shared out between threads.
void attend_rows(std::size_t row0, std::size_t rows, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q,
                 const AttendArgs& args, const AttendScratch& panels, float* scores, float* out, std::size_t ldo);

/// Rows [row0, row0 + rows) of attend_streaming() over packed keys and values, like attend_rows(); `v` is the
/// unpacked values too, read only for the NaN and inf that causally skipped keys must still bring. A split at
/// multiples of streaming_query_block gives the same bits as one call over every row.
void attend_streaming_rows(std::size_t row0, std::size_t rows, std::size_t Lk, std::size_t D, std::size_t Dv,
                           Strided q, Strided v, const AttendArgs& args, const AttendScratch& panels,
                           float* block_scores, float* out, std::size_t ldo);

/// scores[Lq×Lk] = softmax(q·kᵀ·scale + masks) (rows with every key blocked → 0), out[Lq×Dv] = scores·v.
void attend(std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q, Strided k, Strided v,
            const AttendArgs& args, const AttendScratch& scratch, float* scores, float* out, std::size_t ldo);

/// The same output without the Lq×Lk matrix: keys in tiles with a running maximum and sum (online softmax),
/// so memory is O(block) instead of O(Lq·Lk). `block_scores` holds streaming_query_block·streaming_key_block floats.
void attend_streaming(std::size_t Lq, std::size_t Lk, std::size_t D, std::size_t Dv, Strided q, Strided k, Strided v,
                      const AttendArgs& args, const AttendScratch& scratch, float* block_scores, float* out,
                      std::size_t ldo);

/// C[M×N] = A·B + bias with B packed by pack_transposed(). Large products are split by row blocks over the
/// threads of parallel_for(); every element is computed the same way whatever the split.
void matmul_packed(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const float* packed,
                   float* C, std::size_t ldc, const float* bias);

/// The same with B in 16-bit panels (kernels::half_panel_index layout) of BF16 (`bf16`) or F16 bit patterns,
/// widened inside the product: the bits of the F32 product over the same values.
void matmul_packed(std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda, const std::uint16_t* packed,
                   bool bf16, float* C, std::size_t ldc, const float* bias);

/// Rows per sliver in which matmul_packed reads the input of a product by F32 weights at the current setting
/// (set_gemm_tile_rows(5)), or 0 where it reads the input as it is. With slivers a product holds its input's whole
/// slivers, M / R · R · K floats, while it runs: forward()'s memory plan counts the largest
/// (model::forward_workspace_bytes).
std::size_t matmul_sliver_rows();

/// Rows of the register tile products use now: over F32 panels the setting (set_gemm_tile_rows: the build's own, 4;
/// 6 in the relaxed-SIMD builds, 5 there under Node 20), over 16-bit ones the build's own. Threads split a product's
/// rows at multiples of it, and a product of a multiple of it has no short tile at its end.
std::size_t matmul_tile_rows(bool f32_panels = true);

/// Columns per packed panel in this build: panel p of a packed matrix starts at p · K · matmul_panel_width()
/// elements, F32 or 16-bit, so a product over columns from a multiple of it on reads a suffix of the panels.
std::size_t matmul_panel_width();

/// Packs B = Btᵀ from Bt[N×K] for matmul_packed (e.g. a PyTorch weight [out, in]).
void pack_transposed(std::size_t K, std::size_t N, const float* Bt, std::size_t ldbt, float* packed);

}  // namespace detail
}  // namespace attnscope
