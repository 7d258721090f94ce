// Where one head's attention with weights spends its time, part by part: q·kᵀ (finding each row's maximum as it
// stores, as attend_rows does without masks), the softmax's exp and normalising passes, and weights·v, at head size
// 64 over query blocks of 64 rows, as one task of the forward pass runs them; the separate row-maximum pass that
// masked attention still needs is timed too, on its own (it is not part of the total). Built natively and with Emscripten (a Node program), so a kernel change shows in the part it touches.
//
//   attention_parts [SEQ [HEAD_DIM]]   (default 2048 64); under Node run it as node --no-liftoff attention_parts.cjs:
//   V8 does not replace a running call of baseline code, and a few long calls would otherwise stay in it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.hpp"
#include "kernels/gemm.hpp"
#include "kernels/softmax.hpp"

using namespace attnscope_bench;
using namespace attnscope;
using arch = xsimd::default_arch;

int main(int argc, char** argv)
{
    const std::size_t L = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 2048;
    const std::size_t D = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 64;
    if (L == 0 || D == 0) {
        std::fprintf(stderr, "usage: %s [SEQ [HEAD_DIM]]\n", argv[0]);
        return 2;
    }
    constexpr std::size_t NR = kernels::panel_width<arch>;
    constexpr std::size_t block = 64;  // query rows per task in MultiHeadAttention (query_rows_per_task)
    const std::size_t E = 12 * D;      // q, k, v read in place from [seq, embed] rows, as the forward pass does
    const float scale = 1.f / std::sqrt(float(D));

    Mulberry32 rng(11);
    std::vector<float> q(L * E), k(L * E), v(L * E), out(L * E), weights(L * L);
    for (auto* m : {&q, &k, &v})
        for (float& x : *m) x = float(2 * rng() - 1);
    std::vector<float> key_panels(kernels::packed_floats<arch>(D, L)), value_panels(kernels::packed_floats<arch>(L, D));
    kernels::pack_b_transposed{}(arch{}, D, L, k.data(), E, key_panels.data());
    kernels::pack_b{}(arch{}, L, D, v.data(), E, value_panels.data());

    // Each part over the whole head (every query block), the parts in the order a task runs them; best of 9 heads.
    enum Part { scores, exp_pass, normalise, weighted_values, max_pass, parts };
    const char* names[parts] = {"q·kᵀ and row maxima (gemm_packed)", "softmax: exp(x·scale − max), sum",
                                "softmax: × 1/sum", "weights·v (gemm_packed)", "(masked rows only) row_max pass"};
    double best[parts];
    for (double& b : best) b = 1e300;
    volatile float sink = 0;
    for (int rep = 0; rep < 10; ++rep) {
        double spent[parts] = {};
        for (std::size_t i0 = 0; i0 < L; i0 += block) {
            const std::size_t rows = std::min(block, L - i0);
            float* w = weights.data() + i0 * L;
            double t = now_ms();
            auto lap = [&](Part p) {
                const double now = now_ms();
                spent[p] += now - t;
                t = now;
            };
            constexpr std::size_t lanes_per_row = kernels::row_max_lanes<arch>;
            float lanes[block * lanes_per_row], largest[block], sum[block];
            std::fill(lanes, lanes + rows * lanes_per_row, -INFINITY);
            kernels::gemm_packed_row_max{}(arch{}, rows, L, D, q.data() + i0 * E, E, key_panels.data(), D * NR, w, L,
                                           lanes);
            for (std::size_t r = 0; r < rows; ++r)
                largest[r] = *std::max_element(lanes + r * lanes_per_row, lanes + (r + 1) * lanes_per_row);
            lap(scores);
            for (std::size_t r = 0; r < rows; ++r) sink = sink + kernels::row_max{}(arch{}, w + r * L, L);
            lap(max_pass);
            for (std::size_t r = 0; r < rows; ++r)
                sum[r] = kernels::exp_sum{}(arch{}, w + r * L, L, largest[r] * scale, scale);
            lap(exp_pass);
            for (std::size_t r = 0; r < rows; ++r) kernels::scale_inplace{}(arch{}, w + r * L, L, 1.f / sum[r]);
            lap(normalise);
            kernels::gemm_packed{}(arch{}, rows, D, L, w, L, value_panels.data(), L * NR, out.data() + i0 * E, E,
                                   nullptr, false);
            lap(weighted_values);
        }
        sink = sink + out[0];
        if (rep > 0)  // the first head warms up (and, under WASM, lets V8 tier up)
            for (int p = 0; p < parts; ++p) best[p] = std::min(best[p], spent[p]);
    }

    double total = 0;
    for (int p = 0; p < max_pass; ++p) total += best[p];
    const double elements = double(L) * double(L), macs = elements * double(D);
    std::printf("one head, seq %zu, head size %zu, query blocks of %zu rows (best of 9 heads)\n\n", L, D, block);
    std::printf("| part | ms per head | share | rate |\n|---|---:|---:|---:|\n");
    for (int p = 0; p < parts; ++p) {
        const bool product = p == scores || p == weighted_values;
        std::printf("| %s | %.3f | %.0f%% | %.2f %s |\n", names[p], best[p], 100 * best[p] / total,
                    product ? 2 * macs / (best[p] * 1e6) : best[p] * 1e6 / elements, product ? "GFLOP/s" : "ns/element");
    }
    std::printf("| total | %.3f | | |\n", total);
    return 0;
}
