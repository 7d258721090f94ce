// The library's GEMM alone (detail::matmul_packed, weights packed once as at load) on the products of a GPT-2-small
// forward pass: q|k|v, the output projection, the MLP's up and down, and the LM head, at 128 and 512 rows. One
// thread (the single-threaded library), as the 1-thread model pass runs them. bench/gemm.mjs runs it, and runs two
// builds of it in alternating processes to compare kernels.
//
//   gemm [--json] [--rows=128,512] [--runs=N] [--bf16] [--tile=4|5]
//
// --bf16 rounds the weights to BF16 and times every product twice, over F32 panels and over the 16-bit panels a BF16
// checkpoint's matrices are kept in (widened inside the k loop), the two alternating run by run in this process;
// the two rows of a product must have the same checksum (widening is exact).
//
// --tile=4 runs the products at a register tile of 4 rows instead of the build's own (6 in the relaxed-SIMD build:
// set_gemm_tile_rows), --tile=5 (the relaxed build only) at 5 rows of A packed in slivers, as under Node 20: the
// same bits.
//
// Each product is timed `runs` times after a warm-up call; it reports the best and the median, by the wall clock and
// by the process's CPU time (on a shared machine the CPU time leaves out the time other processes had the core, so
// it moves less with their load). A checksum of every output bit lets two builds show that they computed the same.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

#include "attend.hpp"  // attnscope::detail::pack_transposed + matmul_packed: the kernel behind every projection
#include "attnscope/kernel_settings.hpp"
#include "bench_util.hpp"
#include "kernels/half_panels.hpp"
#include "kernels/widen.hpp"

using namespace attnscope_bench;

namespace {

// CPU time of this process in ms. Under Emscripten clock() is the wall clock, so Node's own account is asked.
double cpu_ms()
{
#ifdef __EMSCRIPTEN__
    return EM_ASM_DOUBLE({
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
    });
#else
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
#endif
}

struct Product {
    const char* name;
    std::size_t K, N;
};

// GPT-2 small: d 768, MLP 3072, vocabulary 50,257 (the head's N is not a multiple of the panel width, as in the model).
const Product products[] = {{"qkv", 768, 2304}, {"out", 768, 768}, {"up", 768, 3072}, {"down", 3072, 768}, {"head", 768, 50257}};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// FNV-1a over the output's bits: equal checksums mean the two builds' results agree bit for bit.
std::uint32_t checksum(const std::vector<float>& c)
{
    std::uint32_t h = 2166136261u;
    for (float x : c) {
        std::uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xffu)) * 16777619u;
    }
    return h;
}

// F32 → BF16 bits, round to nearest even (the weights are finite).
std::uint16_t to_bf16(float x)
{
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return std::uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace

int main(int argc, char** argv)
{
    bool json = false, bf16 = false;
    std::vector<std::size_t> rows = {128, 512};
    int runs = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") json = true;
        else if (a == "--bf16") bf16 = true;
        else if (a.rfind("--runs=", 0) == 0) runs = std::max(1, std::atoi(a.c_str() + 7));
        else if (a == "--tile=4" || a == "--tile=5") {
            const std::size_t asked = std::size_t(a.back() - '0');
            if (attnscope::set_gemm_tile_rows(asked) != asked) {
                std::fprintf(stderr, "gemm: --tile=%zu: this build has no such tile (5: the relaxed build's slivers)\n", asked);
                return 2;
            }
        }
        else if (a.rfind("--rows=", 0) == 0) {
            rows.clear();
            for (const char* p = a.c_str() + 7; *p;) {
                rows.push_back(std::strtoul(p, const_cast<char**>(&p), 10));
                if (*p == ',') ++p;
            }
        } else {
            std::fprintf(stderr, "usage: gemm [--json] [--rows=128,512] [--runs=N] [--bf16] [--tile=4|5]\n");
            return 2;
        }
    }
    if (!json) std::printf("| M | product | K | N | GFLOP/s best (CPU) | median (CPU) | best (wall) | median (wall) | checksum |\n|---|---|---|---|---|---|---|---|---|\n");
    for (std::size_t M : rows)
        for (const Product& p : products) {
            Mulberry32 rng(11);
            std::vector<float> A(M * p.K), W(p.N * p.K), C(M * p.N), bias(p.N);
            for (float& x : A) x = float(rng() - 0.5);
            for (float& x : W) x = float((rng() - 0.5) * 0.1);
            for (float& x : bias) x = float(rng() - 0.5);
            std::vector<std::uint16_t> half;
            if (bf16) {
                half.resize(attnscope::detail::packed_floats(p.K, p.N));  // the same padded panels, 2 bytes an element
                std::vector<std::uint16_t> bits(W.size());
                for (std::size_t i = 0; i < W.size(); ++i) {
                    bits[i] = to_bf16(W[i]);
                    W[i] = attnscope::kernels::bf16_to_f32(bits[i]);
                }
                // W is [N][K]: element (k, j) at j·K + k.
                attnscope::kernels::pack_half_panels<xsimd::default_arch>(p.K, p.N, bits.data(), 1, p.K, half.data());
            }
            std::vector<float> packed(attnscope::detail::packed_floats(p.K, p.N));
            attnscope::detail::pack_transposed(p.K, p.N, W.data(), p.K, packed.data());
            W = {};
            struct Variant {
                const char* name;
                std::function<void()> call;
                std::vector<double> cpu, wall;
            };
            std::vector<Variant> variants;
            using attnscope::detail::matmul_packed;
            variants.push_back({"", [&] { matmul_packed(M, p.N, p.K, A.data(), p.K, packed.data(), C.data(), p.N, bias.data()); }, {}, {}});
            if (bf16)
                variants.push_back({" bf16", [&] { matmul_packed(M, p.N, p.K, A.data(), p.K, half.data(), true, C.data(), p.N, bias.data()); }, {}, {}});
            for (Variant& v : variants) v.call();
            for (int r = 0; r < runs; ++r)
                for (Variant& v : variants) {
                    const double w0 = now_ms(), c0 = cpu_ms();
                    v.call();
                    v.cpu.push_back(cpu_ms() - c0);
                    v.wall.push_back(now_ms() - w0);
                }
            const double flop = 2.0 * double(M) * double(p.N) * double(p.K);
            auto rate = [&](double ms) { return flop / (ms * 1e6); };
            for (Variant& v : variants) {
                v.call();  // C from this variant, for its checksum
                const std::vector<double>& cpu = v.cpu;
                const std::vector<double>& wall = v.wall;
                const double cpu_best = rate(*std::min_element(cpu.begin(), cpu.end())), cpu_median = rate(median(cpu));
                const double wall_best = rate(*std::min_element(wall.begin(), wall.end())), wall_median = rate(median(wall));
                const std::uint32_t sum = checksum(C);
                if (json)
                    std::printf("{\"M\":%zu,\"product\":\"%s%s\",\"K\":%zu,\"N\":%zu,\"cpuBest\":%.2f,\"cpuMedian\":%.2f,\"wallBest\":%.2f,"
                                "\"wallMedian\":%.2f,\"checksum\":\"%08x\"}\n",
                                M, p.name, v.name, p.K, p.N, cpu_best, cpu_median, wall_best, wall_median, unsigned(sum));
                else
                    std::printf("| %zu | %s%s | %zu | %zu | %.1f | %.1f | %.1f | %.1f | %08x |\n", M, p.name, v.name, p.K, p.N, cpu_best,
                                cpu_median, wall_best, wall_median, unsigned(sum));
            }
            std::fflush(stdout);
        }
}
