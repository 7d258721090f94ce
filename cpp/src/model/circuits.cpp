// A head's weight circuits over the residual stream: QK = W_Q·W_Kᵀ (which directions of a query's stream attend to
// which of a key's) and OV = W_V·W_O (what a key's stream writes into the query's), as Elhage et al. define them,
// from the main stack's packed q|k|v and output panels. Under grouped-query attention query head h reads key/value
// head h / (heads / kv_heads): its W_K and W_V are that head's. Norms and singular values go through head_dim ×
// head_dim Gram matrices, never the d × d product.
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "pass.hpp"

namespace attnscope {
namespace {

using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;

// Element (row k, column c) of a packed K × N matrix (column panels of NR).
float at(const model::Matrix& m, std::size_t k, std::size_t c)
{
    return m.packed[(c / NR) * m.in * NR + k * NR + c % NR];
}

// Columns [first, first + n) of a packed matrix, as a row-major in × n block in double.
std::vector<double> columns(const model::Matrix& m, std::size_t first, std::size_t n)
{
    std::vector<double> out(m.in * n);
    for (std::size_t k = 0; k < m.in; ++k)
        for (std::size_t c = 0; c < n; ++c) out[k * n + c] = at(m, k, first + c);
    return out;
}

// Rows [first, first + n) of a packed matrix, transposed: an out × n block in double.
std::vector<double> rows_transposed(const model::Matrix& m, std::size_t first, std::size_t n)
{
    std::vector<double> out(m.out * n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < m.out; ++c) out[c * n + r] = at(m, first + r, c);
    return out;
}

// AᵀA of a rows × n block: n × n.
std::vector<double> gram(const std::vector<double>& a, std::size_t n)
{
    const std::size_t rows = a.size() / n;
    std::vector<double> g(n * n, 0.0);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) g[i * n + j] += a[r * n + i] * a[r * n + j];
    return g;
}

// The eigenvalues of a symmetric n × n matrix (cyclic Jacobi; its eigenvectors into `vectors` when given).
std::vector<double> symmetric_eigen(std::vector<double> a, std::size_t n, std::vector<double>* vectors)
{
    std::vector<double> v(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i) v[i * n + i] = 1;
    for (int sweep = 0; sweep < 60; ++sweep) {
        double off = 0, all = 0;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) (i == j ? all : off) += a[i * n + j] * a[i * n + j];
        if (off <= 1e-30 * (all + off)) break;
        for (std::size_t p = 0; p + 1 < n; ++p)
            for (std::size_t q = p + 1; q < n; ++q) {
                const double apq = a[p * n + q];
                if (apq == 0) continue;
                const double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
                const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
                const double c = 1 / std::sqrt(t * t + 1), s = t * c;
                for (std::size_t k = 0; k < n; ++k) {  // columns p and q, then rows p and q
                    const double kp = a[k * n + p], kq = a[k * n + q];
                    a[k * n + p] = c * kp - s * kq;
                    a[k * n + q] = s * kp + c * kq;
                }
                for (std::size_t k = 0; k < n; ++k) {
                    const double pk = a[p * n + k], qk = a[q * n + k];
                    a[p * n + k] = c * pk - s * qk;
                    a[q * n + k] = s * pk + c * qk;
                    const double vp = v[k * n + p], vq = v[k * n + q];
                    v[k * n + p] = c * vp - s * vq;
                    v[k * n + q] = s * vp + c * vq;
                }
            }
    }
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = a[i * n + i];
    if (vectors) *vectors = std::move(v);
    return values;
}

// The singular values of X·Yᵀ from the Gram matrices A = XᵀX and B = YᵀY (n × n): the square roots of the eigenvalues
// of A·B, which are those of the symmetric Sᵀ·A·S with B = S·Sᵀ (S = U·Λ^½ from B's eigenvectors). Largest first.
std::vector<double> singular_values(const std::vector<double>& a, const std::vector<double>& b, std::size_t n)
{
    std::vector<double> u;
    const std::vector<double> lambda = symmetric_eigen(b, n, &u);
    std::vector<double> s(n * n), as(n * n, 0.0), m(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) s[i * n + j] = u[i * n + j] * std::sqrt(std::max(0.0, lambda[j]));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < n; ++k)
            for (std::size_t j = 0; j < n; ++j) as[i * n + j] += a[i * n + k] * s[k * n + j];
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < n; ++k)
            for (std::size_t j = 0; j < n; ++j) m[i * n + j] += s[k * n + i] * as[k * n + j];
    std::vector<double> sigma = symmetric_eigen(m, n, nullptr);
    for (double& x : sigma) x = std::sqrt(std::max(0.0, x));
    std::sort(sigma.begin(), sigma.end(), std::greater<double>());
    return sigma;
}

// Σ A∘B of two n × n matrices: ‖X·Yᵀ‖²_F = tr(XᵀX·YᵀY) for symmetric Gram matrices.
double frobenius(const std::vector<double>& a, const std::vector<double>& b)
{
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
    return std::sqrt(std::max(0.0, sum));
}

// One head's factors: X, Y of QK = X·Yᵀ (W_Q, W_K) and of OV = X·Yᵀ (W_V, W_Oᵀ), each d × head_dim.
struct Factors {
    std::vector<double> q, k, v, o;
};

Factors factors(const Transformer::Impl& m, std::size_t layer, std::size_t head)
{
    const plan::Attention& a = m.plan.main().layer(layer).self;
    const model::LayerWeights& w = m.weights.stacks.back().layers[layer];
    const std::size_t hd = a.head_dim, g = head / (a.heads / a.kv_heads);
    return {columns(w.qkv, head * hd, hd), columns(w.qkv, a.q_width() + g * hd, hd),
            columns(w.qkv, a.q_width() + a.kv_width() + g * hd, hd), rows_transposed(w.o, head * hd, hd)};
}

Tensor product(const std::vector<double>& x, const std::vector<double>& y, std::size_t n)
{
    const std::size_t d = x.size() / n;
    Tensor out({d, d});
    for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = 0; j < d; ++j) {
            double sum = 0;
            for (std::size_t c = 0; c < n; ++c) sum += x[i * n + c] * y[j * n + c];
            out.data[i * d + j] = float(sum);
        }
    return out;
}

Tensor floats_of(const std::vector<double>& values)
{
    Tensor t({values.size()});
    for (std::size_t i = 0; i < values.size(); ++i) t.data[i] = float(values[i]);
    return t;
}

}  // namespace

Transformer::Circuits Transformer::circuits(std::size_t layer, std::size_t head, const char* call) const
{
    const plan::Stack& main = impl_->plan.main();
    const plan::Attention& a = main.layer(0).self;
    if (layer >= main.layers())
        throw std::invalid_argument(json::join({call, ": layer: expected 0 to ", json::Num(main.layers() - 1), ", got ", json::Num(layer)}));
    if (head >= a.heads) throw std::invalid_argument(json::join({call, ": head: expected 0 to ", json::Num(a.heads - 1), ", got ", json::Num(head)}));
    const std::size_t hd = a.head_dim;
    const Factors f = factors(*impl_, layer, head);
    Circuits c;
    c.kv_head = head / (a.heads / a.kv_heads);
    c.qk = product(f.q, f.k, hd);
    c.ov = product(f.v, f.o, hd);
    c.qk_singular = floats_of(singular_values(gram(f.q, hd), gram(f.k, hd), hd));
    c.ov_singular = floats_of(singular_values(gram(f.v, hd), gram(f.o, hd), hd));
    return c;
}

std::pair<Tensor, Tensor> Transformer::circuit_norms() const
{
    const plan::Stack& main = impl_->plan.main();
    const std::size_t L = main.layers(), H = main.layer(0).self.heads, hd = main.layer(0).self.head_dim;
    Tensor qk({L, H}), ov({L, H});
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h) {
            const Factors f = factors(*impl_, l, h);
            qk.data[l * H + h] = float(frobenius(gram(f.q, hd), gram(f.k, hd)));
            ov.data[l * H + h] = float(frobenius(gram(f.v, hd), gram(f.o, hd)));
        }
    return {std::move(qk), std::move(ov)};
}

}  // namespace attnscope
