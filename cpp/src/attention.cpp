// scaled_dot_product_attention: shape checks, then one attend() per leading index.
#include "attnscope/attention.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "attend.hpp"
#include "number_text.hpp"

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

SdpaPlan plan_scaled_dot_product_attention(const Shape& q, const Shape& k, const Shape& v, const SdpaOptions& options)
{
    require_nonzero("q", q);
    require_nonzero("k", k);
    require_nonzero("v", v);
    const std::size_t rank = q.size();
    const Shape leading = leading_dims(q);
    const std::size_t Lq = q[rank - 2], D = q[rank - 1];
    const std::size_t Lk = k.size() == rank ? k[rank - 2] : 0;
    require(k.size() == rank && leading_dims(k) == leading && k[rank - 1] == D,
            "k: expected shape " + pattern(leading, {"key_len", std::to_string(D)}) + " to match q " + to_string(q) +
                ", got " + to_string(k));
    require(v.size() == rank && leading_dims(v) == leading && v[rank - 2] == Lk,
            "v: expected shape " + pattern(leading, {std::to_string(Lk), "value_dim"}) + " to match k " +
                to_string(k) + ", got " + to_string(v));
    const std::size_t Dv = v[rank - 1];
    const MaskView& mask = options.attn_mask;
    if (!mask.empty()) {
        Shape full = leading;
        full.insert(full.end(), {Lq, Lk});
        const Shape shared{Lq, Lk};
        require(mask.shape == shared || mask.shape == full, "attn_mask: expected shape " + to_string(shared) +
                                                                (full != shared ? " or " + to_string(full) : "") +
                                                                ", got " + to_string(mask.shape));
    }
    if (options.scale)
        require(std::isfinite(*options.scale), "scale: expected a finite number, got " + detail::number_text(*options.scale));

    SdpaPlan plan;
    plan.output_shape = plan.weights_shape = leading;
    plan.output_shape.insert(plan.output_shape.end(), {Lq, Dv});
    plan.weights_shape.insert(plan.weights_shape.end(), {Lq, Lk});
    const char* where = "scaled_dot_product_attention";
    const std::size_t output_floats = checked_numel(plan.output_shape, where);
    const std::size_t weights_floats = checked_numel(plan.weights_shape, where);
    const std::size_t panels = detail::packed_floats(D, Lk) + detail::packed_floats(Lk, Dv);
    // Everything the call touches must be addressable in bytes (compare before adding: a part may be near SIZE_MAX).
    std::size_t total = 0;
    for (std::size_t part : {output_floats, weights_floats, panels}) {
        if (part > SIZE_MAX / sizeof(float) - total)
            throw std::length_error(std::string(where) + ": q " + to_string(q) + ", k " + to_string(k) + ", v " +
                                    to_string(v) + " need more memory than the address space has");
        total += part;
    }
    plan.workspace_bytes = panels * sizeof(float);
    return plan;
}

void scaled_dot_product_attention(const TensorView& q, const TensorView& k, const TensorView& v,
                                  const SdpaOptions& options, float* output, float* weights)
{
    const SdpaPlan plan = plan_scaled_dot_product_attention(q.shape, k.shape, v.shape, options);
    require(q.data && k.data && v.data, "q, k and v must not be null");
    require(output && weights, "output and weights must not be null");
    const std::size_t rank = q.shape.size();
    const std::size_t Lq = q.shape[rank - 2], D = q.shape[rank - 1], Lk = k.shape[rank - 2], Dv = v.shape[rank - 1];
    const std::size_t count = checked_numel(leading_dims(q.shape), "scaled_dot_product_attention");
    const MaskView& mask = options.attn_mask;
    const bool mask_broadcast = mask.empty() || mask.shape.size() == 2;
    const float scale = options.scale ? *options.scale : 1.f / std::sqrt(float(D));

    std::vector<float> key_panels, value_panels;
    resize_floats(key_panels, detail::packed_floats(D, Lk), "scaled_dot_product_attention: packed k");
    resize_floats(value_panels, detail::packed_floats(Lk, Dv), "scaled_dot_product_attention: packed v");
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
                       args, scratch, weights + c * Lq * Lk, output + c * Lq * Dv, Dv);
    }
}

AttentionResult scaled_dot_product_attention(const TensorView& q, const TensorView& k, const TensorView& v,
                                             const SdpaOptions& options)
{
    const SdpaPlan plan = plan_scaled_dot_product_attention(q.shape, k.shape, v.shape, options);
    require(q.data && k.data && v.data, "q, k and v must not be null");
    AttentionResult result;
    result.output.shape = plan.output_shape;
    resize_floats(result.output.data, checked_numel(plan.output_shape, "scaled_dot_product_attention"),
                  "scaled_dot_product_attention: output " + to_string(plan.output_shape));
    result.weights.shape = plan.weights_shape;
    resize_floats(result.weights.data, checked_numel(plan.weights_shape, "scaled_dot_product_attention"),
                  "scaled_dot_product_attention: weights " + to_string(plan.weights_shape));
    scaled_dot_product_attention(q, k, v, options, result.output.data.data(), result.weights.data.data());
    return result;
}

}  // namespace attnscope
