// scaled_dot_product_attention: shape checks, then one attend() per leading index.
#include "attnscope/attention.hpp"

#include <cmath>
#include <stdexcept>

#include "attend.hpp"

namespace attnscope {
namespace {

void require(bool ok, const std::string& message)
{
    if (!ok) throw std::invalid_argument("scaled_dot_product_attention: " + message);
}

void require_nonzero(const char* name, const Shape& shape)
{
    require(shape.size() >= 2, std::string(name) + ": expected at least 2 dimensions [..., seq, features], got " +
                                   to_string(shape));
    for (std::size_t d : shape)
        require(d > 0, std::string(name) + ": every dimension must be at least 1, got " + to_string(shape));
}

Shape leading_dims(const Shape& shape) { return Shape(shape.begin(), shape.end() - 2); }

// "[2, 3, key_len, 4]": the shape an argument should have, with named free dimensions.
std::string pattern(const Shape& leading, std::initializer_list<std::string> tail)
{
    std::string s = to_string(leading);
    s.pop_back();
    for (const std::string& t : tail) s += (s.size() > 1 ? ", " : "") + t;
    return s + "]";
}

}  // namespace

AttentionResult scaled_dot_product_attention(const TensorView& q, const TensorView& k, const TensorView& v,
                                             const SdpaOptions& options)
{
    require_nonzero("q", q.shape);
    require_nonzero("k", k.shape);
    require_nonzero("v", v.shape);
    require(q.data && k.data && v.data, "q, k and v must not be null");
    const std::size_t rank = q.shape.size();
    const Shape leading = leading_dims(q.shape);
    const std::size_t Lq = q.shape[rank - 2], D = q.shape[rank - 1];
    const std::size_t Lk = k.shape.size() == rank ? k.shape[rank - 2] : 0;
    require(k.shape.size() == rank && leading_dims(k.shape) == leading && k.shape[rank - 1] == D,
            "k: expected shape " + pattern(leading, {"key_len", std::to_string(D)}) + " to match q " +
                to_string(q.shape) + ", got " + to_string(k.shape));
    require(v.shape.size() == rank && leading_dims(v.shape) == leading && v.shape[rank - 2] == Lk,
            "v: expected shape " + pattern(leading, {std::to_string(Lk), "value_dim"}) + " to match k " +
                to_string(k.shape) + ", got " + to_string(v.shape));
    const std::size_t Dv = v.shape[rank - 1];

    const std::size_t count = checked_numel(leading, "scaled_dot_product_attention");
    bool mask_broadcast = true;
    const MaskView& mask = options.attn_mask;
    if (!mask.empty()) {
        Shape full = leading;
        full.insert(full.end(), {Lq, Lk});
        const Shape shared{Lq, Lk};
        require(mask.shape == shared || mask.shape == full, "attn_mask: expected shape " + to_string(shared) +
                                                                (full != shared ? " or " + to_string(full) : "") +
                                                                ", got " + to_string(mask.shape));
        mask_broadcast = mask.shape == shared;
    }
    const float scale = options.scale ? *options.scale : 1.f / std::sqrt(float(D));

    Shape out_shape = leading, weights_shape = leading;
    out_shape.insert(out_shape.end(), {Lq, Dv});
    weights_shape.insert(weights_shape.end(), {Lq, Lk});
    AttentionResult result{Tensor(out_shape), Tensor(weights_shape)};
    std::vector<float> key_panels(detail::packed_floats(D, Lk)), value_panels(detail::packed_floats(Lk, Dv));
    const detail::AttendScratch scratch{key_panels.data(), value_panels.data()};

    const std::size_t element_size = mask.kind == MaskKind::boolean ? 1 : sizeof(float);
    const char* mask_base = mask.kind == MaskKind::boolean ? static_cast<const char*>(static_cast<const void*>(mask.blocked))
                                                           : static_cast<const char*>(static_cast<const void*>(mask.added));
    for (std::size_t c = 0; c < count; ++c) {
        detail::MaskRows rows;
        if (!mask.empty()) {
            rows.kind = mask.kind;
            rows.base = mask_base + (mask_broadcast ? 0 : c * Lq * Lk) * element_size;
            rows.row_stride = Lk;
        }
        detail::AttendArgs args;
        args.scale = scale;
        args.masks = &rows;
        args.mask_count = mask.empty() ? 0 : 1;
        args.causal = options.causal;
        detail::attend(Lq, Lk, D, Dv, {q.data + c * Lq * D, D}, {k.data + c * Lk * D, D}, {v.data + c * Lk * Dv, Dv},
                       args, scratch, result.weights.data.data() + c * Lq * Lk, result.output.data.data() + c * Lq * Dv,
                       Dv);
    }
    return result;
}

}  // namespace attnscope
