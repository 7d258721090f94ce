// The ceiling the kernels are measured against: 128-bit SIMD mul+add peak GFLOP/s of one core, and the GFLOP/s the
// library's GEMM reaches on the projection products of each benchmark configuration.
//
// The WASM kernels have no FMA (SIMD128 lowers xsimd::fma to a mul and an add), so the fair ceiling is separate
// 4-wide multiplies and adds, issued as independent chains so their latency is hidden. Built with Emscripten the
// same source measures the SIMD128 peak the engine's code generator gives. Both the peak and the GEMMs are the best
// of many runs, so other work on the machine does not make the kernel look more efficient than it is.
//
//   peak          human-readable
//   peak --json   one JSON object per line (what bench/run.mjs reads)
#include <xmmintrin.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "attend.hpp"  // attnscope::detail::pack_transposed + matmul_packed: the kernel behind every projection
#include "bench_util.hpp"

using namespace attnscope_bench;

namespace {

// `Chains` multiply chains and `Chains` add chains, `iters` steps each. Returns a value that depends on every chain
// so the compiler keeps all of them. How many chains hide the latency without spilling depends on the core and on
// the register file the code generator has: x86-64 has 16 XMM registers (V8 keeps one as scratch), which on some
// cores is too few to cover the latency of two multiplies and two adds per cycle. AVX-512VL gives the same 128-bit
// instructions 32 registers, so natively, where the CPU has it, the chains also run in a variant compiled for it:
// that one shows the hardware's 128-bit ceiling, which well-blocked code can approach with fewer registers.
template <int Chains>
__attribute__((always_inline)) inline float mul_add_chains_body(long iters, float seed)
{
    __m128 m[Chains], a[Chains];
    const __m128 factor = _mm_set1_ps(0.99999994f);  // keeps the products normal for billions of steps
    const __m128 step = _mm_set1_ps(1e-7f);
    for (int c = 0; c < Chains; ++c) {
        m[c] = _mm_set1_ps(seed + float(c));
        a[c] = _mm_set1_ps(seed - float(c));
    }
    for (long i = 0; i < iters; ++i) {
        for (int c = 0; c < Chains; ++c) {
            m[c] = _mm_mul_ps(m[c], factor);
            a[c] = _mm_add_ps(a[c], step);
        }
    }
    __m128 sum = _mm_setzero_ps();
    for (int c = 0; c < Chains; ++c) sum = _mm_add_ps(sum, _mm_add_ps(m[c], a[c]));
    float lanes[4];
    _mm_storeu_ps(lanes, sum);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

template <int Chains>
__attribute__((noinline)) float mul_add_chains(long iters, float seed)
{
    return mul_add_chains_body<Chains>(iters, seed);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__EMSCRIPTEN__)
#define ATTNSCOPE_BENCH_EVEX 1
template <int Chains>
__attribute__((noinline, target("avx512f,avx512vl"))) float mul_add_chains_evex(long iters, float seed)
{
    return mul_add_chains_body<Chains>(iters, seed);
}
#endif

template <class Kernel>
double chains_gflops(Kernel kernel, int chains)
{
    // Short runs (a few ms), many of them: a run that the scheduler leaves alone shows the ceiling; the machine's
    // other work only ever lowers a run's rate.
    const long iters = 1'000'000;
    volatile float sink = 0;
    double best = 0;
    for (int rep = 0; rep < 25; ++rep) {
        const double t0 = now_ms();
        sink = sink + kernel(iters, 1.f + float(rep));
        const double ms = now_ms() - t0;
        const double flops = double(iters) * chains * 2 /* mul + add */ * 4 /* lanes */;
        const double g = flops / (ms * 1e6);
        if (g > best) best = g;
    }
    return best;
}

struct Peak {
    double gflops = 0;   // the best of everything tried
    double gflops16 = 0; // the best with the 16 registers every x86-64 (and V8) has
};

Peak peak_gflops()
{
    Peak p;
    for (double g : {chains_gflops(mul_add_chains<4>, 4), chains_gflops(mul_add_chains<5>, 5),
                     chains_gflops(mul_add_chains<6>, 6), chains_gflops(mul_add_chains<7>, 7),
                     chains_gflops(mul_add_chains<8>, 8)})
        p.gflops16 = g > p.gflops16 ? g : p.gflops16;
    p.gflops = p.gflops16;
#ifdef ATTNSCOPE_BENCH_EVEX
    if (__builtin_cpu_supports("avx512vl"))
        for (double g : {chains_gflops(mul_add_chains_evex<8>, 8), chains_gflops(mul_add_chains_evex<10>, 10),
                         chains_gflops(mul_add_chains_evex<12>, 12), chains_gflops(mul_add_chains_evex<14>, 14)})
            p.gflops = g > p.gflops ? g : p.gflops;
#endif
    return p;
}

// GFLOP/s of C[M×N] = A[M×K]·Wᵀ + bias with W[N×K] in PyTorch's [out, in] layout, packed once (as load_state_dict
// does) and multiplied by the library's kernel as the forward pass calls it; the packing is not timed.
double gemm_gflops(std::size_t M, std::size_t N, std::size_t K)
{
    Mulberry32 rng(7);
    std::vector<float> A(M * K), W(N * K), C(M * N), bias(N);
    for (float& x : A) x = float(rng() - 0.5);
    for (float& x : W) x = float(rng() - 0.5);
    for (float& x : bias) x = float(rng() - 0.5);
    std::vector<float> packed(attnscope::detail::packed_floats(K, N));
    attnscope::detail::pack_transposed(K, N, W.data(), K, packed.data());
    // Best of several runs, like the peak it is compared with.
    const double ms = best_ms([&] {
        attnscope::detail::matmul_packed(M, N, K, A.data(), K, packed.data(), C.data(), N, bias.data());
    });
    return 2.0 * double(M) * double(N) * double(K) / (ms * 1e6);
}

}  // namespace

int main(int argc, char** argv)
{
    const bool json = argc > 1 && !std::strcmp(argv[1], "--json");
    const Peak p = peak_gflops();
    const double peak = p.gflops;
    if (json)
        std::printf("{\"peakGflops\":%.3f,\"peak16RegGflops\":%.3f}\n", p.gflops, p.gflops16);
    else
        std::printf("128-bit SIMD mul+add peak, one core: %.1f GFLOP/s (%.1f with 16 registers)\n\n"
                    "| seq | embed | heads | q/k/v GEMM [L×E]·[E×3E] GFLOP/s | %% of peak | out GEMM [L×E]·[E×E] GFLOP/s | %% of peak |\n"
                    "|----:|------:|------:|------:|-----:|------:|-----:|\n",
                    peak, p.gflops16);
    std::fflush(stdout);
    for (const Config& c : configs()) {
        const double qkv = gemm_gflops(c.L, 3 * c.E, c.E);
        const double out = gemm_gflops(c.L, c.E, c.E);
        if (json)
            std::printf("{\"seq\":%zu,\"embed\":%zu,\"heads\":%zu,\"qkvGflops\":%.3f,\"outGflops\":%.3f}\n", c.L, c.E,
                        c.H, qkv, out);
        else
            std::printf("| %zu | %zu | %zu | %.1f | %.0f%% | %.1f | %.0f%% |\n", c.L, c.E, c.H, qkv, 100 * qkv / peak,
                        out, 100 * out / peak);
        std::fflush(stdout);
    }
    return 0;
}
