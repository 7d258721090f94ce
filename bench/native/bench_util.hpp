// Shared by the native benchmark programs: the JS benchmark's seeded data, median timing and FLOP counts.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnscope_bench {

/// The configurations: (seq, embed, heads).
struct Config {
    std::size_t L, E, H;
};
inline const std::vector<Config>& configs()
{
    static const std::vector<Config> c = {{16, 64, 4}, {64, 256, 4}, {128, 512, 8}, {512, 768, 12}, {2048, 768, 12}};
    return c;
}

/// Forward FLOPs: four E×E projections (8·L·E²) plus q·kᵀ and weights·v over all heads (4·L²·E).
inline double forward_flops(double L, double E) { return 8 * L * E * E + 4 * L * L * E; }

/// mulberry32, the generator bench/common.mjs uses, so native and WASM runs see the same numbers.
class Mulberry32 {
public:
    explicit Mulberry32(std::uint32_t seed) : a_(seed) {}
    double operator()()
    {
        a_ += 0x6d2b79f5u;
        std::uint32_t t = a_;
        t = (t ^ (t >> 15)) * (t | 1u);
        t ^= t + (t ^ (t >> 7)) * (t | 61u);
        return double(t ^ (t >> 14)) / 4294967296.0;
    }

private:
    std::uint32_t a_;
};

/// makeCase() of bench/common.mjs: the state dict in PyTorch's order, then the input.
struct Case {
    std::vector<float> in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias, x;
};
inline Case make_case(std::size_t L, std::size_t E, std::size_t H, std::uint32_t seed = 1234)
{
    const std::uint32_t s = seed ^ std::uint32_t(L) * 73856093u ^ std::uint32_t(E) * 19349663u ^
                            std::uint32_t(H) * 83492791u;
    Mulberry32 rng(s);
    auto uniform = [&](std::size_t n, double bound) {
        std::vector<float> v(n);
        for (float& x : v) x = float((2 * rng() - 1) * bound);
        return v;
    };
    Case c;
    c.in_proj_weight = uniform(3 * E * E, std::sqrt(6.0 / (4.0 * double(E))));
    c.in_proj_bias = uniform(3 * E, 0.1);
    c.out_proj_weight = uniform(E * E, 1 / std::sqrt(double(E)));
    c.out_proj_bias = uniform(E, 0.1);
    c.x = uniform(L * E, 1);
    return c;
}

inline double now_ms()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

/// Fastest of `reps` runs of fn() in ms, after one warm-up: for kernels compared with a peak, where anything the
/// machine's other work adds is noise, not cost.
template <class Fn>
double best_ms(Fn&& fn, int reps = 15)
{
    fn();
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
        const double s = now_ms();
        fn();
        best = std::min(best, now_ms() - s);
    }
    return best;
}

struct Timing {
    double median_ms, best_ms;
    int reps;
};

/// Times fn(): one warm-up, then runs until at least min_reps and min_ms, at most budget_ms (the JS benchmark's rule).
template <class Fn>
Timing time_runs(Fn&& fn, int min_reps = 7, double min_ms = 400, double budget_ms = 8000, int max_reps = 1000)
{
    const double t0 = now_ms();
    fn();
    const double first = now_ms() - t0;
    std::vector<double> times;
    if (first > budget_ms / 2) times.push_back(first);  // too slow to afford a separate warm-up
    double spent = 0;
    for (double t : times) spent += t;
    while (int(times.size()) < max_reps) {
        if (int(times.size()) >= min_reps && spent >= min_ms) break;
        if (!times.empty() && spent >= budget_ms) break;
        const double s = now_ms();
        fn();
        times.push_back(now_ms() - s);
        spent += times.back();
    }
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    return {n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2, times.front(), int(n)};
}

}  // namespace attnscope_bench
