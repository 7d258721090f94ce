// The forward pass's element-wise steps (steps.hpp): each kernel instantiated once, at -O3.
#include "steps.hpp"

#include <algorithm>

#include "../kernels/elementwise.hpp"
#include "../kernels/gemm.hpp"
#include "../kernels/layer_norm.hpp"
#include "../kernels/rms_norm.hpp"
#include "../kernels/rope.hpp"
#include "../kernels/swiglu.hpp"
#include "../kernels/top_k.hpp"
#include "../parallel.hpp"

namespace attnscope {
namespace model {
namespace steps {

using arch = xsimd::default_arch;

namespace {

// Pieces of a flat element-wise step start at multiples of this: a whole number of SIMD vectors, so each element
// goes through the vector or the scalar formula as in one call over the whole array (parallel_ranges).
constexpr std::size_t element_unit = 64;
static_assert(element_unit % xsimd::batch<float, arch>::size == 0, "pieces of whole vectors");

// Out of line: activate() and gate_rows() share one copy of the four kernels.
[[gnu::noinline]] void activate_serially(plan::Activation a, float* x, std::size_t n)
{
    switch (a) {
    case plan::Activation::gelu_erf: return kernels::gelu_inplace{}(arch{}, x, n);
    case plan::Activation::gelu_tanh: return kernels::gelu_tanh_inplace{}(arch{}, x, n);
    case plan::Activation::relu: return kernels::relu_inplace{}(arch{}, x, n);
    case plan::Activation::silu: return kernels::silu_inplace{}(arch{}, x, n);
    }
}

}  // namespace

// The norms and activations are split between the threads by rows or by whole vectors
// (detail::parallel_ranges): each row or element is computed by the same code whatever the split, so the results are
// the same bits for every thread count.

void norm_rows(const plan::Norm& n, const NormWeights& w, const float* x, std::size_t rows, std::size_t d, float* y)
{
    detail::parallel_ranges(rows, 1, double(d), [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
            if (n.kind == plan::NormKind::rms_norm) kernels::rms_norm{}(arch{}, x + r * d, d, w.weight.data.data(), n.eps, y + r * d);
            else kernels::layer_norm{}(arch{}, x + r * d, d, w.weight.data.data(), w.bias.data.data(), n.eps, y + r * d);
        }
    });
}

void activate(plan::Activation a, float* x, std::size_t n)
{
    detail::parallel_ranges(n, element_unit, double(element_unit),
                            [&](std::size_t begin, std::size_t end) { activate_serially(a, x + begin, end - begin); });
}

void gate_rows(plan::Activation a, float* u, std::size_t rows, std::size_t inner)
{
    detail::parallel_ranges(rows, 1, double(inner), [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
            float* gate = u + r * 2 * inner;
            if (a == plan::Activation::silu) {
                kernels::silu_mul{}(arch{}, gate, gate + inner, inner);  // SwiGLU, one pass
            } else {
                activate_serially(a, gate, inner);
                kernels::mul_inplace{}(arch{}, gate, inner, gate + inner);
            }
        }
    });
}

// A sum or a scaling streams memory at a fraction of a norm's cost per element (0.1 % of a pass at 512 tokens), and
// soft-capping is rare (a plan's capped scores or logits): these stay on one thread, for the .wasm's size budget.
void add(float* x, std::size_t n, const float* a) { kernels::add_inplace{}(arch{}, x, n, a); }

void scale(float* x, std::size_t n, float s) { kernels::scale_inplace{}(arch{}, x, n, s); }

// Out of line: softcap_columns() calls it twice, and the kernel's tanh is large.
[[gnu::noinline]] void softcap(float* x, std::size_t n, float cap) { kernels::softcap_inplace{}(arch{}, x, n, cap); }

void softcap_columns(float* x, std::size_t n, std::size_t first, std::size_t row, float cap)
{
    constexpr std::size_t W = xsimd::batch<float, arch>::size;
    const std::size_t vectors_end = row - row % W, vectors = first < vectors_end ? std::min(n, vectors_end - first) : 0;
    softcap(x, vectors, cap);                  // whole vectors, as `first` is
    softcap(x + vectors, n - vectors, cap);    // fewer than a vector: the scalar formula
}

void top_k_softmax(const float* logits, std::size_t n, std::size_t k, std::int32_t* ids, float* probabilities)
{
    kernels::top_k_softmax{}(arch{}, logits, n, k, ids, probabilities);
}

void qk_norm_and_rope(const plan::Attention& a, const LayerWeights& lw, float* row, const float* cos, const float* sin)
{
    const std::size_t H = a.heads, KV = a.kv_heads, hd = a.head_dim, q_cols = a.q_width(), kv_cols = a.kv_width();
    const std::size_t half = a.rotary.dims / 2;
    if (a.qk_norm == plan::QkNorm::whole) {  // over all of q's heads, and all of k's
        kernels::rms_norm{}(arch{}, row, q_cols, lw.q_norm.data.data(), a.qk_norm_eps, row);
        kernels::rms_norm{}(arch{}, row + q_cols, kv_cols, lw.k_norm.data.data(), a.qk_norm_eps, row + q_cols);
    }
    for (std::size_t head = 0; head < H + KV; ++head) {  // the q heads, then the k heads
        float* v = row + head * hd;
        if (a.qk_norm == plan::QkNorm::per_head) {
            const Vector& n = head < H ? lw.q_norm : lw.k_norm;
            kernels::rms_norm{}(arch{}, v, hd, n.data.data(), a.qk_norm_eps, v);
        }
        if (a.rope) kernels::rope_rotate_half{}(arch{}, v, half, cos, sin);
    }
}

void row_product(std::size_t n, std::size_t k, const float* x, const float* panels, std::size_t panel_stride, float* y)
{
    kernels::gemm_packed{}(arch{}, 1, n, k, x, k, panels, panel_stride, y, n, nullptr, false);
}

void row_product(std::size_t k, const float* x, const Matrix& m, std::size_t k0, float* y)
{
    // Rows k0.. of every panel start k0·NR elements into it, in either layout.
    constexpr std::size_t NR = kernels::panel_width<arch>;
    const std::size_t n = m.out, at = k0 * NR, stride = m.in * NR;
    if (m.type == kernels::PanelType::f32) return row_product(n, k, x, m.packed.data() + at, stride, y);
    if (m.type == kernels::PanelType::bf16) return kernels::gemm_packed_bf16{}(arch{}, 1, n, k, x, k, m.half.data() + at, stride, y, n, nullptr, false);
    kernels::gemm_packed_f16{}(arch{}, 1, n, k, x, k, m.half.data() + at, stride, y, n, nullptr, false);
}

}  // namespace steps
}  // namespace model
}  // namespace attnscope
