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
#include <algorithm>
#include <cstring>
#include <string>
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
    // Four steps per loop iteration: the loop's own counter, compare and branch (and, in V8, its interrupt check)
    // then cost a quarter as much, and never stand between the SIMD units and their work.
    for (long i = 0; i < iters; i += 4) {
        for (int u = 0; u < 4; ++u)
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

// The same mul and add throughput in the shape of a GEMM's inner loop: `Accs` add chains, each fed a product of a
// vector loaded from a small (L1) ring and a constant, so only the adds are chained. It needs Accs + 3 registers
// instead of 2·Chains + 2: where the chains above run out of registers before they hide the latency (V8 has 15
// allocatable XMM registers, and 6 mul + 6 add chains leave it no slack), this one still can. The loads are the
// kind of feed any real kernel has (a GEMM loads two vectors and broadcasts for each multiply-add pair).
template <int Accs>
__attribute__((noinline)) float mul_acc_l1(long iters, float seed)
{
    constexpr int ring_vectors = 240;  // 3.75 KiB, a multiple of every Accs tried
    alignas(16) float ring[ring_vectors * 4];
    for (int i = 0; i < ring_vectors * 4; ++i) ring[i] = seed + 1e-3f * float(i % 97);
    const __m128 factor = _mm_set1_ps(0.5f);
    __m128 acc[Accs];
    for (int c = 0; c < Accs; ++c) acc[c] = _mm_set1_ps(float(c));
    for (long i = 0; i < iters; i += ring_vectors / Accs) {
        for (const float* v = ring; v < ring + ring_vectors * 4; v += 4 * Accs)
            for (int c = 0; c < Accs; ++c) acc[c] = _mm_add_ps(acc[c], _mm_mul_ps(_mm_load_ps(v + 4 * c), factor));
    }
    __m128 sum = _mm_setzero_ps();
    for (int c = 0; c < Accs; ++c) sum = _mm_add_ps(sum, acc[c]);
    float lanes[4];
    _mm_storeu_ps(lanes, sum);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
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
    double gflops = 0;     // the best of everything tried
    double gflops16 = 0;   // the best with the 16 registers every x86-64 (and V8) has
    int chains16 = 0;      // the chain count of the best chained loop
    int accs16 = 0;        // the accumulator count of the best multiply-accumulate loop
    double chained16 = 0, accumulated16 = 0;  // the best of each shape
    double by_chains[16] = {};  // GFLOP/s per chain count with 16 registers, to show where latency or spills bite
    double by_accs[16] = {};    // the same per accumulator count
};

Peak peak_gflops()
{
    Peak p;
    // Records one loop's GFLOP/s under its count in `curve` and keeps the best in (best, best_count).
    auto keep = [](double* curve, double& best, int& best_count, int count, double g) {
        curve[count] = g;
        if (g > best) {
            best = g;
            best_count = count;
        }
    };
    // 4 to 8 mul chains and as many add chains: 8 + 2 constants to 16 + 2 registers. Where 6 + 6 chains fit (a core
    // with 3-cycle latency and two mul and two add pipes needs 6 of each), they are the ceiling; beyond, spills.
    auto try_chains = [&](int chains, double g) { keep(p.by_chains, p.gflops16, p.chains16, chains, g); };
    try_chains(4, chains_gflops(mul_add_chains<4>, 4));
    try_chains(5, chains_gflops(mul_add_chains<5>, 5));
    try_chains(6, chains_gflops(mul_add_chains<6>, 6));
    try_chains(7, chains_gflops(mul_add_chains<7>, 7));
    try_chains(8, chains_gflops(mul_add_chains<8>, 8));
    p.chained16 = p.gflops16;
    auto try_accs = [&](int accs, double g) { keep(p.by_accs, p.accumulated16, p.accs16, accs, g); };
    try_accs(6, chains_gflops(mul_acc_l1<6>, 6));
    try_accs(8, chains_gflops(mul_acc_l1<8>, 8));
    try_accs(10, chains_gflops(mul_acc_l1<10>, 10));
    try_accs(12, chains_gflops(mul_acc_l1<12>, 12));
    p.gflops16 = std::max(p.chained16, p.accumulated16);
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
    // Best of several runs, like the peak it is compared with. A run is enough calls for about 20 M multiply-adds
    // (a few ms): one call at (16, 64, 4) is about a µs, where the clock's own cost and resolution would count.
    const int calls = int(std::max(1.0, 2e7 / (double(M) * double(N) * double(K))));
    const double ms = best_ms([&] {
        for (int c = 0; c < calls; ++c)
            attnscope::detail::matmul_packed(M, N, K, A.data(), K, packed.data(), C.data(), N, bias.data());
    });
    return 2.0 * double(M) * double(N) * double(K) * calls / (ms * 1e6);
}

std::string fixed1(double x)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", x);
    return text;
}

}  // namespace

int main(int argc, char** argv)
{
    const bool json = argc > 1 && !std::strcmp(argv[1], "--json");
    const Peak p = peak_gflops();
    const double peak = p.gflops;
    auto curve = [&](const double* by) {
        std::string text;
        for (int c = 0; c < 16; ++c)
            if (by[c] > 0) text += (text.empty() ? "" : json ? "," : ", ") + std::string(json ? "\"" : "") +
                                   std::to_string(c) + (json ? "\":" : ": ") + fixed1(by[c]);
        return text;
    };
    if (json)
        std::printf("{\"peakGflops\":%.3f,\"peak16RegGflops\":%.3f,\"chainedGflops\":%.3f,\"chains\":%d,"
                    "\"byChains\":{%s},\"accumulatedGflops\":%.3f,\"accumulators\":%d,\"byAccumulators\":{%s}}\n",
                    p.gflops, p.gflops16, p.chained16, p.chains16, curve(p.by_chains).c_str(), p.accumulated16,
                    p.accs16, curve(p.by_accs).c_str());
    else
        std::printf("128-bit SIMD mul+add peak, one core: %.1f GFLOP/s (%.1f with 16 registers)\n"
                    "  mul chains + add chains: %.1f (%d + %d; by chain count %s)\n"
                    "  add chains fed by products of L1 loads: %.1f (%d accumulators; by count %s)\n\n"
                    "| seq | embed | heads | q/k/v GEMM [L×E]·[E×3E] GFLOP/s | %% of peak | out GEMM [L×E]·[E×E] GFLOP/s | %% of peak |\n"
                    "|----:|------:|------:|------:|-----:|------:|-----:|\n",
                    peak, p.gflops16, p.chained16, p.chains16, p.chains16, curve(p.by_chains).c_str(), p.accumulated16,
                    p.accs16, curve(p.by_accs).c_str());
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
