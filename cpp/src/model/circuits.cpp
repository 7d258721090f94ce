// A head's weights as its circuits need them (QK = W_Q·W_Kᵀ, OV = W_V·W_O, Elhage et al.; web/src/circuits.js
// multiplies them), read out of the main stack's packed q|k|v and output panels. Under grouped-query attention
// query head h reads key/value head h / (heads / kv_heads): its W_K and W_V are that head's, decided here.
#include <stdexcept>

#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "pass.hpp"

namespace attnscope {
namespace {

using arch = xsimd::default_arch;

// [d, n]: columns [first, first + n) of a packed d × N matrix (column panels of NR); with `rows`, rows [first,
// first + n) of a packed n' × d one, transposed.
Tensor block(const model::Matrix& m, std::size_t first, std::size_t n, bool rows)
{
    const std::size_t d = rows ? m.out : m.in;
    Tensor out({d, n});
    for (std::size_t i = 0; i < d; ++i)
        for (std::size_t c = 0; c < n; ++c) {
            const std::size_t k = rows ? first + c : i, col = rows ? i : first + c;
            out.data[i * n + c] = m.at(k, col);
        }
    return out;
}

}  // namespace

Transformer::HeadWeights Transformer::head_weights(std::size_t layer, std::size_t head, const char* call) const
{
    const plan::Stack& main = impl_->plan.main();
    const plan::Attention& a = main.layer(0).self;
    if (layer >= main.layers())
        throw std::invalid_argument(json::join({call, ": layer: expected 0 to ", json::Num(main.layers() - 1), ", got ", json::Num(layer)}));
    if (head >= a.heads) throw std::invalid_argument(json::join({call, ": head: expected 0 to ", json::Num(a.heads - 1), ", got ", json::Num(head)}));
    const model::LayerWeights& w = impl_->weights.stacks.back().layers[layer];
    const std::size_t hd = a.head_dim, g = head / (a.heads / a.kv_heads);
    HeadWeights out;
    out.kv_head = g;
    out.q = block(w.qkv, head * hd, hd, false);
    out.k = block(w.qkv, a.q_width() + g * hd, hd, false);
    out.v = block(w.qkv, a.q_width() + a.kv_width() + g * hd, hd, false);
    out.o = block(w.o, head * hd, hd, true);
    return out;
}

}  // namespace attnscope
