// The fuzzer's scaled_dot_product_attention entry point: any number of leading dimensions, masks broadcast or
// full, default, custom, zero or negative scales, and a large-logit mode whose scores are exact in float.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "checks.hpp"
#include "decode.hpp"
#include "entry_points.hpp"
#include "reference/magnitude.hpp"
#include "reference/reference.hpp"

namespace attnscope {
namespace fuzz {
namespace {

enum SdpaMutation { smut_rank, smut_zero, smut_leading, smut_depth, smut_value_len, smut_mask_shape, smut_huge, smut_null, sdpa_mutation_count };
const char* const kSdpaMutationNames[] = {"rank", "zero_size", "leading_dims", "depth", "value_len", "mask_shape", "huge", "null_pointer"};

}  // namespace

void fuzz_sdpa(Input& in, Mode mode)
{
    const std::size_t mutation = mode == Mode::invalid ? in.below(sdpa_mutation_count) : std::size_t(sdpa_mutation_count);
    if (mode == Mode::invalid) note("mutation", kSdpaMutationNames[mutation]);

    Shape leading(in.below(3));
    for (std::size_t& d : leading) d = 1 + in.below(3);
    std::size_t Lq = 1 + in.below(17), Lk = 1 + in.below(17);
    const std::size_t D = 1 + in.below(32), Dv = 1 + in.below(32);
    if (in.below(16) == 0) {  // long sequences, as for MultiHeadAttention
        Lq = 20 + in.below(100);
        Lk = 200 + in.below(256);
    }
    const int mask_kind = int(in.below(5));  // none, boolean [Lq, Lk], boolean full, additive [Lq, Lk], additive full
    const bool causal = in.flag();
    // Large-logit mode: q, k whole numbers up to ±100, so q·k (≤ 3.2e5 < 2^24) and a power-of-two scale are
    // exact in float and the 1e-4 tolerance holds unchanged for logits of 1e4 and more.
    const bool integers = in.below(4) == 0;
    const std::size_t scale_kind = in.below(8);
    const std::uint8_t scale_byte = in.byte();
    const float qk_scale = std::array<float, 2>{1.f, 0.125f}[in.below(2)];
    const float v_scale = std::array<float, 3>{1.f, 0.125f, 4.f}[in.below(3)];

    std::optional<float> scale;
    if (integers) scale = std::ldexp(1.f, -int(scale_kind % 4));
    else if (scale_kind == 4) scale = 1.f;
    else if (scale_kind == 5) scale = 0.5f;
    else if (scale_kind == 6) scale = 0.f;
    else if (scale_kind == 7) scale = (float(scale_byte) - 127.5f) / 64.f;  // about [-2, 2], negative included
    if (mode == Mode::nonfinite && scale_kind == 7 && scale_byte < 32) scale = kSpecial[scale_byte % kSpecialCount];

    const std::size_t count = numel_or_max(leading);
    note("leading", to_string(leading)), note("Lq", Lq), note("Lk", Lk), note("D", D), note("Dv", Dv), note("mask", mask_kind),
        note("causal", causal), note("integers", integers), note("scale", scale ? std::to_string(*scale) : "default");

    ValueKind qk_values, v_values;
    qk_values.scale = qk_scale;
    qk_values.integers = integers;
    v_values.scale = v_scale;
    qk_values.nonfinite = v_values.nonfinite = mode == Mode::nonfinite;
    const bool full_mask = mask_kind == 2 || mask_kind == 4;
    Shape full = leading;
    full.insert(full.end(), {Lq, Lk});
    const Shape mask_shape = full_mask ? full : Shape{Lq, Lk};
    OwnedMask mask = draw_mask(in, mask_kind == 0 ? 0 : mask_kind <= 2 ? 1 : 2, mask_shape, qk_values);

    Shape q_shape = leading, k_shape = leading, v_shape = leading;
    q_shape.insert(q_shape.end(), {Lq, D});
    k_shape.insert(k_shape.end(), {Lk, D});
    v_shape.insert(v_shape.end(), {Lk, Dv});

    if (mode == Mode::invalid) {
        int null_which = -1;
        auto pick = [&]() -> Shape& {
            const std::size_t which = in.below(3);
            return which == 0 ? q_shape : which == 1 ? k_shape : v_shape;
        };
        switch (mutation) {
        case smut_rank: {
            Shape& s = pick();
            s = in.flag() ? Shape{} : Shape{s.back()};
            break;
        }
        case smut_zero: {
            Shape& s = pick();
            s[in.below(s.size())] = 0;
            break;
        }
        case smut_leading: {
            Shape& s = in.flag() ? k_shape : v_shape;
            if (leading.empty() || in.flag()) s.insert(s.begin(), 1 + in.below(3));  // a rank the others do not have
            else s[in.below(leading.size())] += 1 + in.below(3);
            break;
        }
        case smut_depth: k_shape.back() = D + 1 + in.below(3); break;
        case smut_value_len: v_shape[v_shape.size() - 2] = Lk + 1 + in.below(3); break;
        case smut_mask_shape:
            if (!mask.present) mask = draw_mask(in, 1 + int(in.below(2)), {Lq, Lk}, qk_values);
            mask.shape = wrong_shape(in, mask_shape, {{Lq, Lk}, full});
            mask.blocked.resize(mask.kind == MaskKind::boolean ? buffer_size(mask.shape) : 0);
            mask.added.resize(mask.kind == MaskKind::additive ? buffer_size(mask.shape) : 0);
            break;
        case smut_huge: {
            // One size near SIZE_MAX, consistent everywhere: only the size checks can reject it.
            const std::size_t huge = kHuge[in.below(kHugeCount)];
            const std::size_t which = in.below(5);
            if (which == 0) {
                if (leading.empty()) leading.push_back(huge);
                else leading[in.below(leading.size())] = huge;
            }
            const std::size_t lq = which == 1 ? huge : Lq, lk = which == 2 ? huge : Lk, d = which == 3 ? huge : D,
                              dv = which == 4 ? huge : Dv;
            q_shape = k_shape = v_shape = full = leading;
            q_shape.insert(q_shape.end(), {lq, d});
            k_shape.insert(k_shape.end(), {lk, d});
            v_shape.insert(v_shape.end(), {lk, dv});
            full.insert(full.end(), {lq, lk});
            if (mask.present) mask.shape = full_mask ? full : Shape{lq, lk};
            break;
        }
        case smut_null: null_which = int(in.below(3)); break;
        default: break;
        }
        note("shapes", to_string(q_shape) + to_string(k_shape) + to_string(v_shape));
        note("mask_shape", mask.present ? to_string(mask.shape) : "-");
        std::vector<float> q(buffer_size(q_shape)), k(buffer_size(k_shape)), v(buffer_size(v_shape));
        SdpaOptions options;
        options.attn_mask = mask.view();
        options.causal = causal;
        options.scale = scale;
        const TensorView qv(null_which == 0 ? nullptr : q.data(), q_shape), kv(null_which == 1 ? nullptr : k.data(), k_shape),
            vv(null_which == 2 ? nullptr : v.data(), v_shape);
        expect_throw("scaled_dot_product_attention", [&] { scaled_dot_product_attention(qv, kv, vv, options); });
        return;
    }

    const std::vector<float> q = draw_values(in, count * Lq * D, qk_values), k = draw_values(in, count * Lk * D, qk_values),
                             v = draw_values(in, count * Lk * Dv, v_values);
    SdpaOptions options;
    options.attn_mask = mask.view();
    options.causal = causal;
    options.scale = scale;
    if (scale && !std::isfinite(*scale)) {  // a NaN or infinite scale is misuse, not a number to compute with
        expect_throw("scaled_dot_product_attention", [&] {
            scaled_dot_product_attention(TensorView(q.data(), q_shape), TensorView(k.data(), k_shape), TensorView(v.data(), v_shape), options);
        });
        return;
    }
    AttentionResult r;
    if (!expect_no_throw("scaled_dot_product_attention", [&] {
            r = scaled_dot_product_attention(TensorView(q.data(), q_shape), TensorView(k.data(), k_shape), TensorView(v.data(), v_shape), options);
        }))
        return;
    Shape out_shape = leading, weights_shape = leading;
    out_shape.insert(out_shape.end(), {Lq, Dv});
    weights_shape.insert(weights_shape.end(), {Lq, Lk});
    expect_shape("output", r.output.shape, out_shape);
    expect_shape("weights", r.weights.shape, weights_shape);
    if (r.output.data.size() != count * Lq * Dv || r.weights.data.size() != count * Lq * Lk)
        die("shape", "result data does not match its shape");
    if (mode == Mode::nonfinite) return;

    const double used_scale = scale ? double(*scale) : double(1.f / std::sqrt(float(D)));
    const auto expected = reference::sdpa(count, Lq, Lk, D, Dv, q.data(), k.data(), v.data(), options.attn_mask, !full_mask, causal, used_scale);
    const double widen = integers ? 0.0 : widening(mask.largest_added());
    double largest_v = 0;
    for (float x : v) largest_v = std::max(largest_v, double(std::fabs(x)));
    const double output_magnitude = reference::sdpa_output_magnitude(count, Lq, Lk, Dv, expected.weights, v.data());  // see expect_close()
    expect_close("output", r.output.data.data(), r.output.data.size(), expected.output, widen * largest_v, output_magnitude);
    expect_close("weights", r.weights.data.data(), r.weights.data.size(), expected.weights, widen);

    // Blocked keys get exactly zero weight; a query with every key blocked gets a zero output row.
    for (std::size_t c = 0; c < count; ++c)
        for (std::size_t i = 0; i < Lq; ++i) {
            bool row_masked = true;
            for (std::size_t j = 0; j < Lk; ++j) {
                const bool blocked = (causal && j > i) || mask.blocks((full_mask ? c * Lq * Lk : 0) + i * Lk + j);
                row_masked = row_masked && blocked;
                if (blocked && r.weights.data[(c * Lq + i) * Lk + j] != 0.f)
                    finding("masked-weight", "weights[" + std::to_string(c) + "," + std::to_string(i) + "," + std::to_string(j) +
                                                 "] = " + std::to_string(r.weights.data[(c * Lq + i) * Lk + j]) + " for a blocked key");
            }
            if (row_masked)
                for (std::size_t d = 0; d < Dv; ++d)
                    if (r.output.data[(c * Lq + i) * Dv + d] != 0.f)
                        finding("masked-output", "output row of a query whose keys are all blocked is not zero");
        }
}

}  // namespace fuzz
}  // namespace attnscope
