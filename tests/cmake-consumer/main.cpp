// Calls the installed library through its umbrella header and checks one attention result by hand: it fails if the
// headers, the library or its link dependencies did not arrive with the install.
#include <attnscope/attnscope.hpp>

#include <cmath>
#include <cstdio>

int main() {
    // Two queries, two keys (one-hot, D = 2): the scores are the scale on the diagonal and 0 elsewhere.
    const attnscope::Tensor q({2, 2}, {1, 0, 0, 1});
    const attnscope::Tensor v({2, 2}, {1, 2, 3, 4});
    const auto result = attnscope::scaled_dot_product_attention(q, q, v);
    const double e = std::exp(1.0 / std::sqrt(2.0));
    const double near = e / (e + 1), far = 1 / (e + 1);
    const double want[4] = {near * 1 + far * 3, near * 2 + far * 4, far * 1 + near * 3, far * 2 + near * 4};
    for (int i = 0; i < 4; ++i) {
        if (std::fabs(result.output.data[i] - want[i]) > 1e-5) {
            std::fprintf(stderr, "output[%d] = %g, expected %g\n", i, result.output.data[i], want[i]);
            return 1;
        }
    }
    std::printf("attnscope consumer: find_package(attnscope) and attnscope::attnscope work\n");
    return 0;
}
