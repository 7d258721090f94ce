// The SIMD kernels against the scalar double-precision reference, at sizes around the SIMD width.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "attend.hpp"
#include "attnscope/kernel_settings.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/exp.hpp"
#include "kernels/gemm.hpp"
#include "kernels/softmax.hpp"
#include "kernels/top_k.hpp"
#include "model/steps.hpp"
#include "reference/reference.hpp"
#include "test_utils.hpp"

namespace kernels_test {

using namespace attnscope;
using attnscope_test::max_relative_error;
using attnscope_test::random_floats;

namespace {
using arch = xsimd::default_arch;
constexpr std::size_t W = xsimd::batch<float, arch>::size;
// Every size class the kernels branch on: below, at and above one vector and the 2-vector tile, plus odd ones, and
// past two of row_max's 4-vector steps.
const std::vector<std::size_t> sizes = {1, W - 1 ? W - 1 : 1, W, W + 1, 2 * W, 2 * W + 3, 4 * W + 1, 11, 13, 37, 8 * W + 7};
const float nan_f = std::numeric_limits<float>::quiet_NaN();
const float inf_f = std::numeric_limits<float>::infinity();

// exp_nonpositive over every lane of xs, each lane computed in its own vector position in turn.
std::vector<float> simd_exp(const std::vector<float>& xs)
{
    std::vector<float> out(xs.size());
    alignas(64) float lanes[W];
    for (std::size_t i = 0; i < xs.size(); ++i) {
        for (std::size_t l = 0; l < W; ++l) lanes[l] = xs[(i + l) % xs.size()];  // neighbours differ: lanes are mixed
        kernels::exp_nonpositive(xsimd::batch<float, arch>::load_aligned(lanes)).store_aligned(lanes);
        out[i] = lanes[0];
    }
    return out;
}
}  // namespace

namespace {
// gemm_packed at a register tile of `rows` rows: 4 (the SIMD128 builds' and the native one) or 6 (the relaxed-SIMD
// builds'), whichever this build's gemm_packed uses, so both tiles are checked in every build; and with 4-lane
// vectors 5, A's rows read from slivers (gemm_packed_slivers, the relaxed builds' tile under Node 20).
void gemm_in_tiles(std::size_t rows, std::size_t M, std::size_t N, std::size_t K, const float* A, std::size_t lda,
                   const float* packed, std::size_t panel_stride, float* C, std::size_t ldc, const float* bias,
                   bool accumulate)
{
    if constexpr (W == 4) {
        if (rows == 5) {
            // One float past the slivers, poisoned: a tile must never read it.
            std::vector<float> slivers(kernels::sliver_floats<arch>(M, K) + 1, nan_f);
            kernels::pack_slivers<arch>(M, K, A, lda, slivers.data());
            bool laid_out = std::isnan(slivers.back());
            for (std::size_t s = 0; s < M / 5; ++s)  // sliver s holds rows 5s..5s+5, k after k
                for (std::size_t k = 0; k < K; ++k)
                    for (std::size_t r = 0; r < 5; ++r) laid_out = laid_out && slivers[(s * K + k) * 5 + r] == A[(5 * s + r) * lda + k];
            REQUIRE(laid_out);
            return kernels::gemm_packed_slivers{}(arch{}, M, N, K, slivers.data(), A, lda, packed, panel_stride, C, ldc,
                                                  bias, accumulate);
        }
    }
    if (rows == 6)
        kernels::gemm_packed_tiles<6>{}(arch{}, M, N, K, A, lda, packed, panel_stride, C, ldc, bias, accumulate);
    else
        kernels::gemm_packed_tiles<4>{}(arch{}, M, N, K, A, lda, packed, panel_stride, C, ldc, bias, accumulate);
}
const std::vector<std::size_t> tile_heights = W == 4 ? std::vector<std::size_t>{4, 5, 6} : std::vector<std::size_t>{4, 6};
}  // namespace

TEST_CASE("packed gemm matches the double reference at sizes around the SIMD width", "[kernels][gemm]")
{
    constexpr std::size_t NR = kernels::panel_width<arch>;
    static_assert(kernels::gemm_tile_rows == 4 || kernels::gemm_tile_rows == 6, "the tiles this test covers");
    // float accumulation over K terms of magnitude ≤ 1: error grows like K·2^-24; 37 terms stay below 1e-5.
    // M around both tile heights: whole tiles, every count of rows short of a tile (covered by tiles of 4, 2 and 1
    // rows), several blocks of tiles.
    for (std::size_t tile : tile_heights)
    for (std::size_t M : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(4), std::size_t(5), std::size_t(6),
                          std::size_t(7), std::size_t(8), std::size_t(9), std::size_t(11), std::size_t(12), std::size_t(13)})
        for (std::size_t N : sizes)
            for (std::size_t K : sizes)
                for (int variant = 0; variant < 3; ++variant) {  // plain, with bias, accumulating
                    CAPTURE(tile, M, N, K, variant);
                    // Leading dimensions larger than the logical sizes: the kernels must honour strides.
                    const std::size_t lda = K + 3, ldb = N + 2, ldc = N + 1;
                    const auto A = random_floats(M * lda, 1 + unsigned(M * 100 + K));
                    const auto B = random_floats(K * ldb, 2 + unsigned(N * 100 + K));
                    const auto bias = random_floats(N, 3);
                    const float* b = variant == 1 ? bias.data() : nullptr;

                    // Pack B both ways: directly, and as the transpose of Bᵀ; the panels must be identical.
                    std::vector<float> packed(kernels::packed_floats<arch>(K, N), -1.f), from_t(packed.size(), -2.f);
                    kernels::pack_b{}(arch{}, K, N, B.data(), ldb, packed.data());
                    std::vector<float> Bt(N * K);
                    for (std::size_t k = 0; k < K; ++k)
                        for (std::size_t j = 0; j < N; ++j) Bt[j * K + k] = B[k * ldb + j];
                    kernels::pack_b_transposed{}(arch{}, K, N, Bt.data(), K, from_t.data());
                    REQUIRE(packed == from_t);

                    std::vector<float> C(M * ldc, variant == 2 ? 0.5f : -777.f);
                    gemm_in_tiles(tile, M, N, K, A.data(), lda, packed.data(), K * NR, C.data(), ldc, b, variant == 2);
                    auto expected = reference::gemm(M, N, K, A.data(), lda, B.data(), ldb, b);
                    if (variant == 2)
                        for (double& x : expected) x += 0.5;
                    std::vector<float> result(M * N);
                    for (std::size_t i = 0; i < M; ++i)
                        for (std::size_t j = 0; j < N; ++j) result[i * N + j] = C[i * ldc + j];
                    REQUIRE(max_relative_error(result, expected) < 1e-5);
                    // Padding columns between rows are never written.
                    for (std::size_t i = 0; i + 1 < M; ++i) REQUIRE(C[i * ldc + N] == (variant == 2 ? 0.5f : -777.f));
                }
}

// The threads and the row blocks cut a product at different rows, so a row lands in a whole tile in one split and
// in a shorter one in another, and the builds differ in their tile height: a row's bits must not depend on which
// (gemm.hpp, gemm_tile).
TEST_CASE("packed gemm gives a row the same bits in every tile height", "[kernels][gemm]")
{
    constexpr std::size_t NR = kernels::panel_width<arch>;
    const std::size_t M = 13, N = 2 * NR + 3;  // tiles of 4 or 6 rows and a short one; a partial last panel
    // K = 4099 and 2999: blocks of about 32768 floats of A, 5 and 10 rows for the sliver tile (4 and 8 for the
    // 4-row tile, 6 for the 6-row one), so a product runs several blocks and ends in a short one.
    for (std::size_t K : {std::size_t(1), std::size_t(2), std::size_t(5), std::size_t(13), std::size_t(37), std::size_t(4099),
                          std::size_t(2999)}) {
        CAPTURE(K);
        const auto A = random_floats(M * K, unsigned(K) + 40), B = random_floats(K * N, unsigned(K) + 41);
        const auto bias = random_floats(N, 42);
        std::vector<float> packed(kernels::packed_floats<arch>(K, N)), all(M * N), tiled(M * N);
        kernels::pack_b{}(arch{}, K, N, B.data(), N, packed.data());
        kernels::gemm_packed{}(arch{}, M, N, K, A.data(), K, packed.data(), K * NR, all.data(), N, bias.data(), false);
        REQUIRE(max_relative_error(all, reference::gemm(M, N, K, A.data(), K, B.data(), N, bias.data())) < 1e-5);
        for (std::size_t tile : tile_heights) {
            gemm_in_tiles(tile, M, N, K, A.data(), K, packed.data(), K * NR, tiled.data(), N, bias.data(), false);
            REQUIRE(std::memcmp(tiled.data(), all.data(), all.size() * sizeof(float)) == 0);
        }
        for (std::size_t i0 = 0; i0 < M; ++i0)
            for (std::size_t rows = 1; i0 + rows <= M && rows <= 6; ++rows) {
                CAPTURE(i0, rows);
                std::vector<float> part(rows * N);
                kernels::gemm_packed{}(arch{}, rows, N, K, A.data() + i0 * K, K, packed.data(), K * NR, part.data(), N,
                                       bias.data(), false);
                REQUIRE(std::memcmp(part.data(), all.data() + i0 * N, part.size() * sizeof(float)) == 0);
            }
    }
}

// The relaxed-SIMD builds run their 6-row tile or, where an engine spills it, 5 rows in slivers for the projections
// and 4 rows elsewhere (set_gemm_tile_rows, chosen by the wrapper at start-up): the same loop over the other tile
// height, and the same bits.
TEST_CASE("set_gemm_tile_rows takes 4, 5 where slivers are built, or the build's tile; the products keep their bits",
          "[kernels][gemm]")
{
    constexpr std::size_t NR = kernels::panel_width<arch>;
    const std::size_t M = 29, N = 3 * NR + 5, K = 41;
    const auto A = random_floats(M * K, 50), B = random_floats(K * N, 51), bias = random_floats(N, 52);
    std::vector<float> packed(kernels::packed_floats<arch>(K, N)), own(M * N), four(M * N), tall(M * N);
    kernels::pack_b{}(arch{}, K, N, B.data(), N, packed.data());
    REQUIRE(set_gemm_tile_rows(kernels::gemm_tile_rows) == kernels::gemm_tile_rows);
    kernels::gemm_packed{}(arch{}, M, N, K, A.data(), K, packed.data(), K * NR, own.data(), N, bias.data(), false);
    CHECK(set_gemm_tile_rows(7) == kernels::gemm_tile_rows);  // neither 4, 5 nor the build's: nothing changes
    // 5 (matmul_packed's slivers) only in the builds whose own tile is taller than 4 rows: the relaxed-SIMD
    // WebAssembly ones, which no Catch2 program links (tests/js/simd-builds.test.js runs them at 5, 6 and 4 rows).
    CHECK(set_gemm_tile_rows(5) == (kernels::gemm_tile_rows > 4 && W == 4 ? 5 : kernels::gemm_tile_rows));
    CHECK(set_gemm_tile_rows(4) == 4);
    kernels::gemm_packed{}(arch{}, M, N, K, A.data(), K, packed.data(), K * NR, four.data(), N, bias.data(), false);
    CHECK(set_gemm_tile_rows(0) == 4);
    CHECK(set_gemm_tile_rows(kernels::gemm_tile_rows) == kernels::gemm_tile_rows);
    kernels::gemm_packed_tiles<6>{}(arch{}, M, N, K, A.data(), K, packed.data(), K * NR, tall.data(), N, bias.data(), false, 4);
    REQUIRE(max_relative_error(own, reference::gemm(M, N, K, A.data(), K, B.data(), N, bias.data())) < 1e-5);
    REQUIRE(std::memcmp(four.data(), own.data(), own.size() * sizeof(float)) == 0);
    REQUIRE(std::memcmp(tall.data(), own.data(), own.size() * sizeof(float)) == 0);
}

TEST_CASE("packed gemm over a slice of rows of a bigger packed matrix (panel stride)", "[kernels][gemm]")
{
    constexpr std::size_t NR = kernels::panel_width<arch>;
    const std::size_t M = 5, N = 2 * NR + 3, K_all = 3 * NR + 1, k0 = NR, K = NR + 1;
    const auto A = random_floats(M * K, 4), B = random_floats(K_all * N, 5);
    std::vector<float> packed(kernels::packed_floats<arch>(K_all, N));
    kernels::pack_b{}(arch{}, K_all, N, B.data(), N, packed.data());
    std::vector<float> C(M * N);
    // Rows k0..k0+K of B: inside each panel they start at k0·NR, and panels stay K_all·NR apart.
    kernels::gemm_packed{}(arch{}, M, N, K, A.data(), K, packed.data() + k0 * NR, K_all * NR, C.data(), N, nullptr, false);
    const auto expected = reference::gemm(M, N, K, A.data(), K, B.data() + k0 * N, N, nullptr);
    REQUIRE(max_relative_error(C, expected) < 1e-5);
}

TEST_CASE("packed gemm's row maxima are the largest value stored in each row, padding aside", "[kernels][gemm]")
{
    constexpr std::size_t NR = kernels::panel_width<arch>, L = kernels::row_max_lanes<arch>;
    for (std::size_t M : {std::size_t(4), std::size_t(8), std::size_t(12)})
        for (std::size_t N : sizes)
            for (std::size_t K : {std::size_t(1), std::size_t(7), std::size_t(37)}) {
                CAPTURE(M, N, K);
                // A < 0 and B > 0: every product is negative, so a zero from a partial panel's padding would win.
                const auto A = random_floats(M * K, unsigned(M * 100 + K), -1.f, -0.1f);
                const auto B = random_floats(K * N, unsigned(N * 100 + K), 0.1f, 1.f);
                std::vector<float> packed(kernels::packed_floats<arch>(K, N)), C(M * N);
                kernels::pack_b{}(arch{}, K, N, B.data(), N, packed.data());
                std::vector<float> lanes(M * L, -inf_f);
                kernels::gemm_packed_row_max{}(arch{}, M, N, K, A.data(), K, packed.data(), K * NR, C.data(), N,
                                               lanes.data());
                for (std::size_t i = 0; i < M; ++i) {
                    const float want = *std::max_element(C.begin() + i * N, C.begin() + (i + 1) * N);
                    REQUIRE(*std::max_element(lanes.begin() + i * L, lanes.begin() + (i + 1) * L) == want);
                }
            }
}

TEST_CASE("softmax matches the double reference and sums to one", "[kernels][softmax]")
{
    for (std::size_t n : sizes)
        for (float spread : {1.f, 30.f, 1e4f}) {
            CAPTURE(n, spread);
            auto x = random_floats(n, unsigned(n * 7 + spread), -spread, spread);
            std::vector<double> expected(x.begin(), x.end());
            reference::softmax(expected);
            kernels::softmax_inplace{}(arch{}, x.data(), n);
            // exp's float error is a few ulp; 1e-6 relative to the row maximum leaves margin.
            REQUIRE(max_relative_error(x, expected) < 1e-6);
            double sum = 0.0;
            for (float w : x) sum += w;
            REQUIRE(sum == Approx(1.0).epsilon(1e-6));
        }
}

TEST_CASE("softmax of blocked entries: -inf gives 0, an all -inf row gives zeros", "[kernels][softmax]")
{
    const float neg_inf = -std::numeric_limits<float>::infinity();
    for (std::size_t n : sizes) {
        CAPTURE(n);
        std::vector<float> all_blocked(n, neg_inf);
        kernels::softmax_inplace{}(arch{}, all_blocked.data(), n);
        for (float w : all_blocked) REQUIRE(w == 0.f);

        auto x = random_floats(n, unsigned(n));
        for (std::size_t j = 0; j < n; j += 2) x[j] = neg_inf;  // every other key blocked, the first always
        std::vector<double> expected(x.begin(), x.end());
        reference::softmax(expected);
        kernels::softmax_inplace{}(arch{}, x.data(), n);
        REQUIRE(max_relative_error(x, expected) < 1e-6);
        for (std::size_t j = 0; j < n; j += 2) REQUIRE(x[j] == 0.f);
    }
}

TEST_CASE("exp_nonpositive is within 3 ulp of the double exp where e^x is a normal float", "[kernels][exp]")
{
    // Every float from 0 down to -87.33 would take long; a dense sweep plus the edges of each reduction interval.
    std::vector<float> xs = {0.f, -0.f, -1e-30f, -1e-7f, -0.5f * 0.69314718f, -0.69314718f, -1.f, -10.f, -87.3f, -87.336f};
    for (int i = 0; i <= 400000; ++i) xs.push_back(-87.33654f * float(i) / 400000.f);
    for (int n = 1; n < 126; ++n)  // around each ties point of the rounding of x·log2 e
        for (float d : {-1e-4f, 0.f, 1e-4f}) xs.push_back(-(float(n) + 0.5f) * 0.69314718f + d);
    for (float x : {1e-6f, 1.f, 50.f, 88.f}) xs.push_back(x);  // past the maximum by a rounding error, and beyond
    const auto got = simd_exp(xs);
    double worst_ulps = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double want = std::exp(double(xs[i]));
        const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
        worst_ulps = std::max(worst_ulps, std::abs(double(got[i]) - want) / ulp);
    }
    CAPTURE(worst_ulps);
    REQUIRE(worst_ulps <= 3.0);  // 2.25 natively without FMA: the polynomial's 0.8 plus the rounding of each step
    REQUIRE(simd_exp({0.f})[0] == 1.f);
}

TEST_CASE("exp_nonpositive: -inf_f and subnormal results give 0, NaN stays NaN", "[kernels][exp]")
{
    const std::vector<float> xs = {-inf_f, -1e30f, -1000.f, -104.f, -103.9f, -100.f, -90.f, -87.34f, nan_f, -nan_f};
    const auto got = simd_exp(xs);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        CAPTURE(xs[i], got[i]);
        if (std::isnan(xs[i])) {
            REQUIRE(std::isnan(got[i]));
        } else {
            // Below -87.34 e^x is subnormal or zero in float: flushed to zero, an absolute error under FLT_MIN.
            REQUIRE(got[i] == 0.f);
            REQUIRE(std::exp(double(xs[i])) < double(std::numeric_limits<float>::min()));
        }
    }
}

TEST_CASE("row_max: the largest entry, NaN wherever a NaN is, infinities as they are", "[kernels][softmax]")
{
    for (std::size_t n : sizes) {
        CAPTURE(n);
        auto x = random_floats(n, unsigned(n) + 5, -3.f, 3.f);
        float want = -inf_f;
        for (float v : x) want = std::max(want, v);
        REQUIRE(kernels::row_max{}(arch{}, x.data(), n) == want);
        for (std::size_t at : {std::size_t(0), n / 2, n - 1}) {  // NaN anywhere, among finite or -inf_f entries
            CAPTURE(at);
            auto y = x;
            y[at] = nan_f;
            REQUIRE(std::isnan(kernels::row_max{}(arch{}, y.data(), n)));
            std::vector<float> blocked(n, -inf_f);
            blocked[at] = nan_f;
            REQUIRE(std::isnan(kernels::row_max{}(arch{}, blocked.data(), n)));
            y[at] = inf_f;
            REQUIRE(kernels::row_max{}(arch{}, y.data(), n) == inf_f);
        }
        std::vector<float> huge(n, 3e38f);  // their sum overflows, which must not be taken for a NaN
        huge[n - 1] = 3.1e38f;
        REQUIRE(kernels::row_max{}(arch{}, huge.data(), n) == 3.1e38f);
        std::vector<float> blocked(n, -inf_f);
        REQUIRE(kernels::row_max{}(arch{}, blocked.data(), n) == -inf_f);
    }
}

TEST_CASE("softmax with the scale folded in matches softmax of the scaled row; NaN fills its row", "[kernels][softmax]")
{
    for (std::size_t n : sizes)
        for (float scale : {0.125f, 1.f, 3.f}) {
            CAPTURE(n, scale);
            auto x = random_floats(n, unsigned(n) * 3 + 1, -40.f, 40.f);
            std::vector<double> expected(n);
            for (std::size_t j = 0; j < n; ++j) expected[j] = double(x[j]) * scale;
            reference::softmax(expected);
            kernels::softmax_inplace{}(arch{}, x.data(), n, scale);
            REQUIRE(max_relative_error(x, expected) < 1e-6);

            auto y = random_floats(n, unsigned(n) * 3 + 2);
            y[n / 2] = nan_f;
            kernels::softmax_inplace{}(arch{}, y.data(), n, scale);
            for (float w : y) REQUIRE(std::isnan(w));
            // Given a maximum that missed the NaN (as the product's SSE max may): the NaN still fills the row.
            auto z = random_floats(n, unsigned(n) * 3 + 3);
            z[n / 2] = nan_f;
            kernels::softmax_given_max{}(arch{}, z.data(), n, scale, 1.f);
            for (float w : z) REQUIRE(std::isnan(w));
            std::vector<float> blocked(n, -inf_f);  // a "fully blocked" row with a NaN in it is NaN, not zeros
            blocked[n - 1] = nan_f;
            kernels::softmax_given_max{}(arch{}, blocked.data(), n, scale, -inf_f);
            for (float w : blocked) REQUIRE(std::isnan(w));
        }
}

namespace {
// The k largest of x by a full sort in double: larger first, a tie the lower index first; and every softmax
// probability, by a sum in long double.
std::vector<std::int32_t> sorted_top_k(const std::vector<float>& x, std::size_t k)
{
    std::vector<std::int32_t> ids(x.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [&](std::int32_t a, std::int32_t b) { return x[std::size_t(a)] > x[std::size_t(b)]; });
    ids.resize(k);
    return ids;
}

std::vector<double> softmax_of(const std::vector<float>& x)
{
    const double top = *std::max_element(x.begin(), x.end());
    long double sum = 0;
    for (float v : x) sum += std::exp(static_cast<long double>(v) - top);
    std::vector<double> p(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) p[j] = double(std::exp(static_cast<long double>(x[j]) - top) / sum);
    return p;
}

void check_top_k(const std::vector<float>& x, std::size_t k)
{
    std::vector<std::int32_t> ids(k, -1);
    std::vector<float> probabilities(k);
    kernels::top_k_softmax{}(arch{}, x.data(), x.size(), k, ids.data(), probabilities.data());
    REQUIRE(ids == sorted_top_k(x, k));
    const auto p = softmax_of(x);
    // exp's few ulp and the float partial sums of 16 terms a lane: well under 1e-6 of each probability.
    for (std::size_t i = 0; i < k; ++i) REQUIRE(probabilities[i] == Approx(p[std::size_t(ids[i])]).epsilon(1e-6));
}
}  // namespace

TEST_CASE("top_k_softmax: a sort's k largest, ties the lower index first, and the softmax's probabilities", "[kernels][top_k]")
{
    // Rows of every size class: within one block of 64 vectors, at its edges, and the many blocks of a vocabulary.
    const std::size_t block = 64 * W;
    std::vector<std::size_t> lengths = sizes;
    for (std::size_t n : {block - 1, block, block + 1, 4 * block + 4 * W + 3, std::size_t(50257)}) lengths.push_back(n);
    for (std::size_t n : lengths)
        for (std::size_t k : {std::size_t(1), std::size_t(5), std::size_t(100), n}) {
            if (k > n || (k == n && n > 300)) continue;
            CAPTURE(n, k);
            check_top_k(random_floats(n, unsigned(n * 5 + k), -12.f, 12.f), k);
            auto ties = random_floats(n, unsigned(n * 5 + k + 1), 0.f, 8.f);  // few distinct values: ties everywhere
            for (float& v : ties) v = std::floor(v);
            check_top_k(ties, k);
            std::vector<float> rising(n), falling(n);  // the running maximum raised at every block, and never
            for (std::size_t j = 0; j < n; ++j) rising[j] = falling[n - 1 - j] = float(j) * (30.f / float(n));
            check_top_k(rising, k);
            check_top_k(falling, k);
        }
}

TEST_CASE("top_k_softmax: a NaN makes every probability NaN and keeps a plain scan's ids; -inf counts as nothing", "[kernels][top_k]")
{
    for (std::size_t n : {std::size_t(7), 64 * W + 5, std::size_t(3000)}) {
        CAPTURE(n);
        const std::size_t k = 5;
        auto x = random_floats(n, unsigned(n), -5.f, 5.f);
        auto with_nan = x;
        with_nan[n - 2] = nan_f;
        std::vector<std::int32_t> ids(k);
        std::vector<float> probabilities(k);
        kernels::top_k_softmax{}(arch{}, with_nan.data(), n, k, ids.data(), probabilities.data());
        for (float p : probabilities) REQUIRE(std::isnan(p));
        auto without = with_nan;  // a NaN after the first k entries never enters: the ids of the row without it
        without[n - 2] = -inf_f;
        REQUIRE(ids == sorted_top_k(without, k));

        for (std::size_t j = 0; j < n; j += 3) x[j] = -inf_f;  // e^-inf = 0: the rest's softmax
        check_top_k(x, k);
    }
}

TEST_CASE("scale_add and add_inplace match scalar arithmetic", "[kernels]")
{
    for (std::size_t n : sizes) {
        CAPTURE(n);
        const auto x0 = random_floats(n, 11), added = random_floats(n, 12);
        auto x = x0;
        kernels::scale_add{}(arch{}, x.data(), n, 0.25f, added.data());
        for (std::size_t j = 0; j < n; ++j) REQUIRE(x[j] == Approx(x0[j] * 0.25f + added[j]).margin(1e-6));
        x = x0;
        kernels::scale_add{}(arch{}, x.data(), n, 3.f, nullptr);
        for (std::size_t j = 0; j < n; ++j) REQUIRE(x[j] == x0[j] * 3.f);
        x = x0;
        kernels::add_inplace{}(arch{}, x.data(), n, added.data());
        for (std::size_t j = 0; j < n; ++j) REQUIRE(x[j] == x0[j] + added[j]);
    }
}

TEST_CASE("softcap_columns gives columns of a row the bits softcap gives the whole row", "[kernels]")
{
    // Rows whose last columns go through softcap's scalar formula (a length W does not divide) and rows it does not;
    // every whole-vector start, and runs of columns to the row's end or of whole vectors inside it.
    const float cap = 5.f;
    for (const std::size_t row : {std::size_t(3 * W), 3 * W + 1, 4 * W + W - 1, std::size_t(37)}) {
        const auto x = random_floats(row, 21, -20.f, 20.f);
        auto whole = x;
        model::steps::softcap(whole.data(), row, cap);
        for (std::size_t j = 0; j < row; ++j) REQUIRE(whole[j] == Approx(double(cap) * std::tanh(double(x[j]) / cap)).margin(1e-5));
        for (std::size_t first = 0; first < row; first += W)
            for (const std::size_t n : {row - first, std::min(W, row - first), std::min(2 * W, row - first)}) {
                if (first + n < row && n % W) continue;  // inside the row: whole vectors only
                CAPTURE(row, first, n);
                std::vector<float> part(x.begin() + std::ptrdiff_t(first), x.begin() + std::ptrdiff_t(first + n));
                model::steps::softcap_columns(part.data(), n, first, row, cap);
                for (std::size_t j = 0; j < n; ++j) REQUIRE(part[j] == whole[first + j]);
            }
    }
}

#ifdef ATTNSCOPE_EXPECTED_ARCH
// A variant build (e.g. ATTNSCOPE_AVX2) is only worth running if the kernels really took the wider arch.
TEST_CASE("the kernels are built for the arch the build asked for", "[kernels]")
{
    CHECK(std::string(xsimd::default_arch::name()) == ATTNSCOPE_EXPECTED_ARCH);
    CHECK(xsimd::batch<float>::size == 8);
}
#endif

}  // namespace kernels_test
