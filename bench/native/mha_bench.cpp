// Native (and, built with Emscripten, WASM-from-C++) timing of MultiHeadAttention::forward on the JS benchmark's
// seeded inputs: the same work the Node benchmark times, without the JS wrapper, so its overhead shows.
//
//   mha_bench            human-readable table
//   mha_bench --json     one JSON object per line (what bench/run.mjs reads)
//   mha_bench --long     adds (16384, 768, 12) without weights
//   mha_bench --config 512,768,12 [--no-weights]   one configuration only (for perf record and the like)
//   mha_bench --threads 2  ...                      forward() on two threads (attnscope::set_num_threads)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "bench_util.hpp"

using namespace attnscope_bench;

namespace {

struct Row {
    Config c{};
    bool need_weights = true;
    double ms = 0, best_ms = 0;
    int reps = 0;
    std::string error;
};

Row run(const Config& c, bool need_weights)
{
    Row row;
    row.c = c;
    row.need_weights = need_weights;
    try {
        const Case data = make_case(c.L, c.E, c.H);
        attnscope::MultiHeadAttentionConfig cfg;
        cfg.embed_dim = c.E;
        cfg.num_heads = c.H;
        cfg.bias = true;
        attnscope::MultiHeadAttention mha(cfg);
        std::map<std::string, attnscope::TensorView> state = {
            {"in_proj_weight", {data.in_proj_weight.data(), {3 * c.E, c.E}}},
            {"in_proj_bias", {data.in_proj_bias.data(), {3 * c.E}}},
            {"out_proj.weight", {data.out_proj_weight.data(), {c.E, c.E}}},
            {"out_proj.bias", {data.out_proj_bias.data(), {c.E}}},
        };
        mha.load_state_dict(state);

        attnscope::ForwardDims dims;
        dims.batch = 1;
        dims.query_len = c.L;
        dims.key_len = c.L;
        attnscope::ForwardOptions options;
        options.need_weights = need_weights;
        options.average_weights = false;
        std::vector<float> output(c.L * c.E);
        std::vector<float> weights(mha.weights_numel(dims, options));
        const float* x = data.x.data();
        const Timing t = time_runs([&] {
            mha.forward(x, x, x, dims, options, output.data(), need_weights ? weights.data() : nullptr);
        });
        row.ms = t.median_ms;
        row.best_ms = t.best_ms;
        row.reps = t.reps;
    } catch (const std::exception& e) {
        row.error = e.what();
    }
    return row;
}

}  // namespace

int main(int argc, char** argv)
{
    bool json = false, long_seq = false, need_weights = true;
    std::vector<Config> chosen;
    for (int i = 1; i < argc; ++i) {
        Config c{};
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--long")) long_seq = true;
        else if (!std::strcmp(argv[i], "--no-weights")) need_weights = false;
        else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc && std::atoi(argv[i + 1]) > 0)
            attnscope::set_num_threads(std::size_t(std::atoi(argv[++i])));
        else if (!std::strcmp(argv[i], "--config") && i + 1 < argc &&
                 std::sscanf(argv[i + 1], "%zu,%zu,%zu", &c.L, &c.E, &c.H) == 3 && c.L && c.E && c.H) {
            chosen.push_back(c);
            ++i;
        } else {
            std::fprintf(stderr, "usage: %s [--json] [--long] [--threads N] [--config SEQ,EMBED,HEADS [--no-weights]]\n", argv[0]);
            return 2;
        }
    }

    std::vector<Row> rows;
    auto report = [&](const Row& r) {
        const double gflops = r.error.empty() ? forward_flops(double(r.c.L), double(r.c.E)) / (r.ms * 1e6) : 0;
        if (json) {
            std::string err;
            for (char ch : r.error) err += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
            std::printf("{\"seq\":%zu,\"embed\":%zu,\"heads\":%zu,\"needWeights\":%s,\"ms\":%.6f,\"bestMs\":%.6f,"
                        "\"reps\":%d,\"gflops\":%.3f%s%s%s}\n",
                        r.c.L, r.c.E, r.c.H, r.need_weights ? "true" : "false", r.ms, r.best_ms, r.reps, gflops,
                        err.empty() ? "" : ",\"error\":\"", err.c_str(), err.empty() ? "" : "\"");
        } else if (r.error.empty()) {
            std::printf("| %5zu | %5zu | %5zu | %-7s | %9.3f | %7.3f | %4d | %7.2f |\n", r.c.L, r.c.E, r.c.H,
                        r.need_weights ? "yes" : "no", r.ms, r.best_ms, r.reps, gflops);
        } else {
            std::printf("| %5zu | %5zu | %5zu | %-7s | failed: %s |\n", r.c.L, r.c.E, r.c.H,
                        r.need_weights ? "yes" : "no", r.error.c_str());
        }
        std::fflush(stdout);
    };

    if (!json) {
        std::printf("|   seq | embed | heads | weights | median ms | best ms | runs | GFLOP/s |\n");
        std::printf("|------:|------:|------:|:--------|----------:|--------:|-----:|--------:|\n");
    }
    if (!chosen.empty()) {
        for (const Config& c : chosen) report(run(c, need_weights));
        return 0;
    }
    for (const Config& c : configs()) report(run(c, true));
    if (long_seq) report(run({16384, 768, 12}, false));
    return 0;
}
