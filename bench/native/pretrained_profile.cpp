// One checkpoint folder (config.json + model.safetensors, e.g. tools/references/make_bench_models.py's) loaded natively, then
// `runs` forward passes of T tokens with every layer's attention: the program bench/README.md's profile runs under
// `valgrind --tool=callgrind` (instruction counts do not depend on machine load), and times when run alone.
//   pretrained_profile DIR [T=128] [runs=1] [threads=1]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attnscope/model.hpp"
#include "attnscope/threads.hpp"

static std::vector<std::uint8_t> read_file(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        std::exit(1);
    }
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: pretrained_profile DIR [T] [runs] [threads]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const std::size_t T = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 128;
    const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
    attnscope::set_num_threads(argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 1);
    const std::vector<std::uint8_t> config = read_file(dir + "/config.json"), weights = read_file(dir + "/model.safetensors");
    auto model = attnscope::load_checkpoint(std::string(config.begin(), config.end()),
                                            {{"model.safetensors", {weights.data(), weights.size()}}});
    attnscope::Transformer::Request request;
    for (std::size_t t = 0; t < T; ++t) request.tokens.push_back(std::int32_t((t * 7919 + 13) % model->config().vocab));
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const auto out = model->forward(request);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        std::printf("T=%zu run %d: %.1f ms (logit[0] %g)\n", T, r, ms, double(out.logits.data[0]));
    }
}
