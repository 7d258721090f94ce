// The one declaration of a model's weights (declare_weights), and where each part a tensor table names lives in it
// (destination_of). Cold code: once per load.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../kernels/gemm.hpp"
#include "../sizes.hpp"
#include "tensors.hpp"
#include "../zeroed.hpp"

namespace attnscope {
namespace model {
namespace {

using namespace plan;
constexpr std::size_t NR = kernels::panel_width<xsimd::default_arch>;

// The memory plan's arithmetic saturates instead of wrapping (a dry declaration of an absurd config).
constexpr auto add = detail::saturating_add;
constexpr auto mul = detail::saturating_mul;

class Declare {
public:
    explicit Declare(bool allocate) : allocate_(allocate) {}

    void vector(Vector& v, std::uint64_t n, const char* what) const
    {
        v.size = n;
        if (!allocate_ || !n) return;
        if (n > SIZE_MAX / sizeof(float)) throw std::length_error(std::string(what) + ": too large to address");
        resize_floats(v.data, std::size_t(n), what);
    }
    // Rows and width are each within a family's limits (below 2^23), so their product is exact in 64 bits.
    void table(Vector& v, std::size_t rows, std::size_t width, const char* what) const { vector(v, std::uint64_t(rows) * width, what); }
    void matrix(Matrix& m, std::size_t in, std::size_t out, bool bias, const char* what) const
    {
        m.in = in;
        m.out = out;
        m.has_bias = bias;
        if (allocate_ && bias) resize_floats(m.bias, out, what);  // the panels once their type is known
    }
    void panels(Matrix& m, kernels::PanelType type) const
    {
        m.type = m.exists() ? type : kernels::PanelType::f32;
        if (!allocate_ || !m.exists()) return;
        const std::size_t n = detail::packed_floats(m.in, m.out, NR, "matrix");
        if (m.type == kernels::PanelType::f32) return resize_floats(m.packed, n, "matrix");
        try {
            detail::assign_zeroed(m.half, n);
        } catch (const std::bad_alloc&) {
            throw std::length_error("matrix: out of memory for its 16-bit panels");
        }
    }
    void norm(NormWeights& n, const Norm& spec, std::size_t width) const
    {
        if (!spec.present()) return;
        vector(n.weight, width, "norm");
        if (spec.bias) vector(n.bias, width, "norm");
    }
    void norms(NormWeights& in, NormWeights& out, NormWeights& after, const Norms& spec, std::size_t width) const
    {
        norm(in, spec.in, width);
        norm(out, spec.out, width);
        norm(after, spec.after, width);
    }

private:
    bool allocate_;
};

// Sinusoidal positions (HF's MarianSinusoidalPositionalEmbedding._init_weight): angle pos / 10000^(2·(j/2)/dim) in float64,
// sines of the even j in the first half of the row, cosines of the odd j in the second, rounded to float32. The angle
// is reduced to [-pi, pi] in float64 and only then taken to float32 for sinf/cosf: each entry is within 2e-7 of HF's,
// and the double-precision sin/cos (their argument reduction and tables) stay out of the .wasm.
void sinusoids(Vector& v, std::size_t rows, std::size_t dim)
{
    const double two_pi = 6.28318530717958647692;
    const std::size_t sentinel = (dim + 1) / 2;
    for (std::size_t pos = 0; pos < rows; ++pos) {
        float* row = v.data.data() + pos * dim;
        for (std::size_t j = 0; j < dim; ++j) {
            const double angle = double(pos) / std::pow(10000.0, double(2 * (j / 2)) / double(dim));
            const float reduced = float(angle - two_pi * std::nearbyint(angle / two_pi));
            if (j % 2 == 0) row[j / 2] = std::sin(reduced);
            else row[sentinel + j / 2] = std::cos(reduced);
        }
    }
}

}  // namespace

void declare_weights(const Plan& p, Weights& w, bool allocate) { declare_weights(p, w, allocate, p.head.present); }

void declare_weights(const Plan& p, Weights& w, bool allocate, bool head, const std::vector<kernels::PanelType>& types)
{
    w = Weights{};
    const Declare d(allocate);
    std::size_t tables = 0;
    for (const Stack& s : p.stacks) tables = std::max(tables, s.embedding.table + 1);
    w.tables.resize(tables);
    if (head && p.head.tied) w.tied_table = int(p.main().embedding.table);
    if (head) d.matrix(w.head, p.main().width(), p.head.vocab, p.head.bias, "lm head");
    if (head && p.head.mlm_transform) {
        d.matrix(w.mlm_dense, p.main().width(), p.main().width(), true, "mlm head");
        d.norm(w.mlm_norm, p.head.mlm_norm, p.main().width());
    }
    w.stacks.resize(p.stacks.size());
    for (std::size_t si = 0; si < p.stacks.size(); ++si) {
        const Stack& s = p.stacks[si];
        StackWeights& sw = w.stacks[si];
        const Embedding& e = s.embedding;
        Vector& table = w.tables[e.table];
        // A shared table is declared by the first stack that reads it; the tied one lives in the head's panels.
        if (!table.exists()) Declare(allocate && int(e.table) != w.tied_table).table(table, e.vocab, e.width, "embedding");
        if (e.positions == Positions::learned || e.positions == Positions::sinusoidal)
            d.table(sw.positions, e.position_rows, e.width, "positions");
        if (allocate && e.positions == Positions::sinusoidal) sinusoids(sw.positions, e.position_rows, e.width);
        if (e.type_vocab) d.table(sw.types, e.type_vocab, e.width, "token types");
        if (s.relative.buckets) d.table(sw.relative_bias, s.relative.buckets, s.layer(0).self.heads, "relative bias");
        d.norm(sw.embed_norm, e.norm, e.width);
        d.norm(sw.final_norm, s.final_norm, e.width);
        sw.layers.resize(s.layers());
        for (std::size_t l = 0; l < s.layers(); ++l) {
            const Layer& layer = s.layer(l);
            LayerWeights& lw = sw.layers[l];
            const std::size_t width = e.width;
            const Attention& a = layer.self;
            d.norms(lw.attn_in, lw.attn_out, lw.attn_after, layer.attn_norms, width);
            d.matrix(lw.qkv, width, a.q_width() + 2 * a.kv_width(), a.qkv_bias, "attention");
            d.matrix(lw.o, a.q_width(), width, a.out_bias, "attention");
            if (a.qk_norm == QkNorm::per_head) {
                d.vector(lw.q_norm, a.head_dim, "qk norm");
                d.vector(lw.k_norm, a.head_dim, "qk norm");
            } else if (a.qk_norm == QkNorm::whole) {
                d.vector(lw.q_norm, a.q_width(), "qk norm");
                d.vector(lw.k_norm, a.kv_width(), "qk norm");
            }
            if (layer.has_cross) {
                const Attention& c = layer.cross;
                d.norms(lw.cross_in, lw.cross_out, lw.cross_after, layer.cross_norms, width);
                d.matrix(lw.cross_q, width, c.q_width(), c.qkv_bias, "cross-attention");
                d.matrix(lw.cross_kv, c.input_width, 2 * c.kv_width(), c.qkv_bias, "cross-attention");
                d.matrix(lw.cross_o, c.q_width(), width, c.out_bias, "cross-attention");
            }
            d.norms(lw.mlp_in, lw.mlp_out, lw.mlp_after, layer.mlp_norms, width);
            d.matrix(lw.up, width, (layer.mlp.gated ? 2 : 1) * layer.mlp.inner, layer.mlp.bias, "mlp");
            d.matrix(lw.down, layer.mlp.inner, width, layer.mlp.bias, "mlp");
        }
    }
    const std::vector<Matrix*> all = matrices(w);
    for (std::size_t i = 0; i < all.size(); ++i) d.panels(*all[i], i < types.size() ? types[i] : kernels::PanelType::f32);
}

std::vector<Matrix*> matrices(Weights& w)
{
    std::vector<Matrix*> out = {&w.head, &w.mlm_dense};
    for (StackWeights& s : w.stacks)
        for (LayerWeights& l : s.layers)
            for (Matrix* m : {&l.qkv, &l.o, &l.cross_q, &l.cross_kv, &l.cross_o, &l.up, &l.down}) out.push_back(m);
    return out;
}

float Matrix::at(std::size_t k, std::size_t col) const
{
    if (type == kernels::PanelType::f32) return packed[(col / NR) * in * NR + k * NR + col % NR];
    return kernels::half_to_f32(half[kernels::half_panel_index<xsimd::default_arch>(in, k, col)], type);
}

std::uint64_t weight_bytes(const Weights& w, bool all_half)
{
    std::uint64_t half = 0;  // elements of 16-bit panels, counted once in weight_floats at 4 bytes
    Weights& m = const_cast<Weights&>(w);  // matrices() only lists them
    for (const Matrix* x : matrices(m))
        if (x->exists() && (all_half || x->type != kernels::PanelType::f32)) half = add(half, mul((std::uint64_t(x->out) + NR - 1) / NR * NR, x->in));
    return mul(weight_floats(w), 4) - mul(half, 2);
}

std::uint64_t weight_floats(const Weights& w)
{
    const auto matrix = [](const Matrix& m) {
        return add(mul((std::uint64_t(m.out) + NR - 1) / NR * NR, m.in), m.has_bias ? m.out : 0);
    };
    const auto norm = [](const NormWeights& n) { return std::uint64_t(n.weight.size) + n.bias.size; };
    std::uint64_t total = add(matrix(w.head), add(matrix(w.mlm_dense), norm(w.mlm_norm)));
    for (std::size_t t = 0; t < w.tables.size(); ++t)
        if (int(t) != w.tied_table) total = add(total, w.tables[t].size);
    for (const StackWeights& s : w.stacks) {
        total = add(total, add(add(s.positions.size, s.types.size), add(s.relative_bias.size, norm(s.embed_norm) + norm(s.final_norm))));
        for (const LayerWeights& l : s.layers) {
            for (const NormWeights* n : {&l.attn_in, &l.attn_out, &l.attn_after, &l.cross_in, &l.cross_out, &l.cross_after,
                                         &l.mlp_in, &l.mlp_out, &l.mlp_after})
                total = add(total, norm(*n));
            total = add(total, std::uint64_t(l.q_norm.size) + l.k_norm.size);
            for (const Matrix* m : {&l.qkv, &l.o, &l.cross_q, &l.cross_kv, &l.cross_o, &l.up, &l.down}) total = add(total, matrix(*m));
        }
    }
    return total;
}

namespace {

// A part inside a matrix: file rows (output features) [0, cols) go to columns col0.. of `m`.
Destination in_matrix(Matrix& m, std::size_t col0, std::size_t cols, Layout layout)
{
    Destination d;
    if (!m.exists() || cols == 0) return d;
    d.matrix = true;
    d.layout = layout;
    d.seg[0] = {m.packed.empty() ? nullptr : m.packed.data(), m.in, col0, cols};
    d.seg[0].half = m.half.empty() ? nullptr : m.half.data();
    d.seg[0].owner = &m;
    d.segments = 1;
    d.shape = layout == Layout::conv1d ? Shape{m.in, cols} : Shape{cols, m.in};
    return d;
}

// A part inside a vector: elements [offset, offset + n), shaped `shape` (empty: [n]).
Destination in_vector(Vector& v, std::size_t offset, std::uint64_t n, Shape shape = {}, float add_to_each = 0.f)
{
    Destination d;
    if (!v.exists() || n == 0) return d;
    d.seg[0] = {v.data.empty() ? nullptr : v.data.data(), 0, offset, std::size_t(n)};
    d.segments = 1;
    d.offset = add_to_each;
    d.shape = shape.empty() ? Shape{std::size_t(n)} : std::move(shape);
    return d;
}

Destination in_bias(Matrix& m, std::size_t offset, std::size_t n)
{
    Destination d;
    if (!m.has_bias || n == 0) return d;
    d.seg[0] = {m.bias.empty() ? nullptr : m.bias.data(), 0, offset, n};
    d.segments = 1;
    d.shape = {n};
    return d;
}

// nn.MultiheadAttention's in_proj as cross-attention: its q rows to cross_q, its k and v rows to cross_kv.
Destination split(Destination q, const Destination& kv)
{
    if (!q.exists() || !kv.exists()) return {};
    q.seg[1] = kv.seg[0];
    q.segments = 2;
    q.shape[0] += kv.shape[0];
    return q;
}

}  // namespace

Destination destination_of(const Plan& p, Weights& w, Part part, std::size_t si, std::size_t l, Layout layout)
{
    if (si >= p.stacks.size()) return {};
    const Stack& s = p.stacks[si];
    StackWeights& sw = w.stacks[si];
    const Embedding& e = s.embedding;
    if (!per_layer(part)) {
        auto norm = [&](NormWeights& n, const Norm& spec, bool bias) {
            return bias ? in_vector(n.bias, 0, n.bias.size) : in_vector(n.weight, 0, n.weight.size, {}, spec.weight_offset);
        };
        switch (part) {
        case Part::token_embedding: {
            // Named by the first stack that reads the table (a shared one once); the tied one is the head's panels.
            for (std::size_t first = 0; first < si; ++first)
                if (p.stacks[first].embedding.table == e.table) return {};
            if (int(e.table) == w.tied_table) return in_matrix(w.head, 0, w.head.out, Layout::standard);
            return in_vector(w.tables[e.table], 0, w.tables[e.table].size, {e.vocab, e.width});
        }
        case Part::position_embedding:
            return e.positions == Positions::learned ? in_vector(sw.positions, 0, sw.positions.size, {e.position_rows, e.width}) : Destination{};
        case Part::type_embedding: return in_vector(sw.types, 0, sw.types.size, {e.type_vocab, e.width});
        case Part::embed_norm: return norm(sw.embed_norm, e.norm, false);
        case Part::embed_norm_bias: return norm(sw.embed_norm, e.norm, true);
        case Part::final_norm: return norm(sw.final_norm, s.final_norm, false);
        case Part::final_norm_bias: return norm(sw.final_norm, s.final_norm, true);
        case Part::relative_bias:
            return in_vector(sw.relative_bias, 0, sw.relative_bias.size, {s.relative.buckets, s.relative.buckets ? s.layer(0).self.heads : 0});
        case Part::head:
            return w.tied_table >= 0 ? Destination{} : in_matrix(w.head, 0, w.head.out, layout);
        case Part::head_bias: {
            Destination d = in_bias(w.head, 0, w.head.out);
            if (layout == Layout::row && d.exists()) d.shape = {1, w.head.out};
            return d;
        }
        case Part::mlm_dense: return in_matrix(w.mlm_dense, 0, w.mlm_dense.out, layout);
        case Part::mlm_dense_bias: return in_bias(w.mlm_dense, 0, w.mlm_dense.out);
        case Part::mlm_norm: return norm(w.mlm_norm, p.head.mlm_norm, false);
        case Part::mlm_norm_bias: return norm(w.mlm_norm, p.head.mlm_norm, true);
        default: return {};
        }
    }
    if (l >= s.layers()) return {};
    const Layer& layer = s.layer(l);
    LayerWeights& lw = sw.layers[l];
    const Attention& a = layer.self;
    const Attention& c = layer.cross;
    const std::size_t qw = a.q_width(), kw = a.kv_width(), inner = layer.mlp.inner;
    const std::size_t gate0 = 0, up0 = layer.mlp.gated ? inner : 0;
    auto norm = [](NormWeights& n, const Norm& spec, bool bias) {
        return bias ? in_vector(n.bias, 0, n.bias.size) : in_vector(n.weight, 0, n.weight.size, {}, spec.weight_offset);
    };
    Destination d;
    switch (part) {
    case Part::attn_in: return norm(lw.attn_in, layer.attn_norms.in, false);
    case Part::attn_in_bias: return norm(lw.attn_in, layer.attn_norms.in, true);
    case Part::attn_out: return norm(lw.attn_out, layer.attn_norms.out, false);
    case Part::attn_out_bias: return norm(lw.attn_out, layer.attn_norms.out, true);
    case Part::attn_after: return norm(lw.attn_after, layer.attn_norms.after, false);
    case Part::attn_after_bias: return norm(lw.attn_after, layer.attn_norms.after, true);
    case Part::cross_in: return norm(lw.cross_in, layer.cross_norms.in, false);
    case Part::cross_in_bias: return norm(lw.cross_in, layer.cross_norms.in, true);
    case Part::cross_out: return norm(lw.cross_out, layer.cross_norms.out, false);
    case Part::cross_out_bias: return norm(lw.cross_out, layer.cross_norms.out, true);
    case Part::cross_after: return norm(lw.cross_after, layer.cross_norms.after, false);
    case Part::cross_after_bias: return norm(lw.cross_after, layer.cross_norms.after, true);
    case Part::mlp_in: return norm(lw.mlp_in, layer.mlp_norms.in, false);
    case Part::mlp_in_bias: return norm(lw.mlp_in, layer.mlp_norms.in, true);
    case Part::mlp_out: return norm(lw.mlp_out, layer.mlp_norms.out, false);
    case Part::mlp_out_bias: return norm(lw.mlp_out, layer.mlp_norms.out, true);
    case Part::mlp_after: return norm(lw.mlp_after, layer.mlp_norms.after, false);
    case Part::mlp_after_bias: return norm(lw.mlp_after, layer.mlp_norms.after, true);
    case Part::q: return in_matrix(lw.qkv, 0, qw, layout);
    case Part::k: return in_matrix(lw.qkv, qw, kw, layout);
    case Part::v: return in_matrix(lw.qkv, qw + kw, kw, layout);
    case Part::qkv:
        d = in_matrix(lw.qkv, 0, qw + 2 * kw, layout);
        d.heads = a.heads;
        d.head_dim = a.head_dim;
        return d;
    case Part::o: return in_matrix(lw.o, 0, lw.o.out, layout);
    case Part::q_bias: return in_bias(lw.qkv, 0, qw);
    case Part::k_bias: return in_bias(lw.qkv, qw, kw);
    case Part::v_bias: return in_bias(lw.qkv, qw + kw, kw);
    case Part::qkv_bias:
        d = in_bias(lw.qkv, 0, qw + 2 * kw);
        d.layout = layout;
        d.heads = a.heads;
        d.head_dim = a.head_dim;
        return d;
    case Part::o_bias: return in_bias(lw.o, 0, lw.o.out);
    case Part::q_norm: return in_vector(lw.q_norm, 0, lw.q_norm.size, {}, a.qk_norm_offset);
    case Part::k_norm: return in_vector(lw.k_norm, 0, lw.k_norm.size, {}, a.qk_norm_offset);
    case Part::cross_q: return in_matrix(lw.cross_q, 0, lw.cross_q.out, layout);
    case Part::cross_k: return in_matrix(lw.cross_kv, 0, c.kv_width(), layout);
    case Part::cross_v: return in_matrix(lw.cross_kv, c.kv_width(), c.kv_width(), layout);
    case Part::cross_kv: return in_matrix(lw.cross_kv, 0, lw.cross_kv.out, layout);
    case Part::cross_qkv: return split(in_matrix(lw.cross_q, 0, lw.cross_q.out, layout), in_matrix(lw.cross_kv, 0, lw.cross_kv.out, layout));
    case Part::cross_o: return in_matrix(lw.cross_o, 0, lw.cross_o.out, layout);
    case Part::cross_q_bias: return in_bias(lw.cross_q, 0, lw.cross_q.out);
    case Part::cross_k_bias: return in_bias(lw.cross_kv, 0, c.kv_width());
    case Part::cross_v_bias: return in_bias(lw.cross_kv, c.kv_width(), c.kv_width());
    case Part::cross_kv_bias: return in_bias(lw.cross_kv, 0, lw.cross_kv.out);
    case Part::cross_qkv_bias: return split(in_bias(lw.cross_q, 0, lw.cross_q.out), in_bias(lw.cross_kv, 0, lw.cross_kv.out));
    case Part::cross_o_bias: return in_bias(lw.cross_o, 0, lw.cross_o.out);
    case Part::gate: return layer.mlp.gated ? in_matrix(lw.up, gate0, inner, layout) : Destination{};
    case Part::up: return in_matrix(lw.up, up0, inner, layout);
    case Part::gate_up: return layer.mlp.gated ? in_matrix(lw.up, 0, 2 * inner, layout) : Destination{};
    case Part::down: return in_matrix(lw.down, 0, lw.down.out, layout);
    case Part::gate_bias: return layer.mlp.gated ? in_bias(lw.up, gate0, inner) : Destination{};
    case Part::up_bias: return in_bias(lw.up, up0, inner);
    case Part::gate_up_bias: return layer.mlp.gated ? in_bias(lw.up, 0, 2 * inner) : Destination{};
    case Part::down_bias: return in_bias(lw.down, 0, lw.down.out);
    default: return {};
    }
}

bool per_layer(Part part) { return part >= Part::attn_in && part < Part::head; }

}  // namespace model
}  // namespace attnscope
