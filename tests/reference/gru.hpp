// Double-precision reference of PyTorch's GRU cell (nn.GRU, gate order r, z, n) for the Catch2 tests: straight from
// the definition, no SIMD. Production code never includes it.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace attnscope {
namespace reference {

/// h' of one GRU step: x [in], h [n], w_ih [3n × in], w_hh [3n × n], b_ih and b_hh [3n] (row-major, PyTorch's
/// weight_ih_l0 / weight_hh_l0 / bias_ih_l0 / bias_hh_l0).
inline std::vector<double> gru_cell(const float* x, std::size_t in, const float* h, std::size_t n, const float* w_ih,
                                    const float* w_hh, const float* b_ih, const float* b_hh)
{
    std::vector<double> gi(3 * n), gh(3 * n), out(n);
    for (std::size_t g = 0; g < 3 * n; ++g) {
        double si = b_ih[g], sh = b_hh[g];
        for (std::size_t k = 0; k < in; ++k) si += double(w_ih[g * in + k]) * double(x[k]);
        for (std::size_t k = 0; k < n; ++k) sh += double(w_hh[g * n + k]) * double(h[k]);
        gi[g] = si;
        gh[g] = sh;
    }
    for (std::size_t j = 0; j < n; ++j) {
        const double r = 1.0 / (1.0 + std::exp(-(gi[j] + gh[j])));
        const double z = 1.0 / (1.0 + std::exp(-(gi[n + j] + gh[n + j])));
        const double c = std::tanh(gi[2 * n + j] + r * gh[2 * n + j]);
        out[j] = (1.0 - z) * c + z * double(h[j]);
    }
    return out;
}

}  // namespace reference
}  // namespace attnscope
