// The SIMD kernels against the scalar double-precision reference, at sizes around the SIMD width.
#include <catch2/catch.hpp>

#include <limits>

#include "kernels/gemm.hpp"
#include "kernels/reference.hpp"
#include "kernels/softmax.hpp"
#include "test_utils.hpp"

using namespace attnscope;
using attnscope_test::max_relative_error;
using attnscope_test::random_floats;

namespace {
using arch = xsimd::default_arch;
constexpr std::size_t W = xsimd::batch<float, arch>::size;
// Every size class the kernels branch on: below, at and above one vector and the 2-vector tile, plus odd ones.
const std::vector<std::size_t> sizes = {1, W - 1 ? W - 1 : 1, W, W + 1, 2 * W, 2 * W + 3, 4 * W + 1, 11, 13, 37};
}  // namespace

TEST_CASE("gemm matches the double reference at sizes around the SIMD width", "[kernels][gemm]")
{
    // float accumulation over K terms of magnitude ≤ 1: error grows like K·2^-24; 37 terms stay below 1e-5.
    for (std::size_t M : {std::size_t(1), std::size_t(3), std::size_t(4), std::size_t(5), std::size_t(9)})
        for (std::size_t N : sizes)
            for (std::size_t K : sizes)
                for (bool with_bias : {false, true}) {
                    CAPTURE(M, N, K, with_bias);
                    // Leading dimensions larger than the logical sizes: the kernels must honour strides.
                    const std::size_t lda = K + 3, ldb = N + 2, ldc = N + 1;
                    const auto A = random_floats(M * lda, 1 + unsigned(M * 100 + K));
                    const auto B = random_floats(K * ldb, 2 + unsigned(N * 100 + K));
                    const auto bias = random_floats(N, 3);
                    std::vector<float> C(M * ldc, -777.f);
                    kernels::gemm{}(arch{}, M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc,
                                    with_bias ? bias.data() : nullptr);
                    const auto expected = reference::gemm(M, N, K, A.data(), lda, B.data(), ldb,
                                                          with_bias ? bias.data() : nullptr);
                    std::vector<float> packed(M * N);
                    for (std::size_t i = 0; i < M; ++i)
                        for (std::size_t j = 0; j < N; ++j) packed[i * N + j] = C[i * ldc + j];
                    REQUIRE(max_relative_error(packed, expected) < 1e-5);
                    // Padding columns between rows are never written.
                    for (std::size_t i = 0; i < M; ++i)
                        for (std::size_t j = N; j < ldc && i * ldc + j < C.size(); ++j) REQUIRE(C[i * ldc + j] == -777.f);
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
