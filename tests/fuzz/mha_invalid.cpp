// The fuzzer's invalid MultiHeadAttention calls: one argument of a decoded case (mha_case.hpp) made wrong, sizes,
// shapes, masks or pointers; the call must throw std::invalid_argument or std::length_error, as validate() says.
#include <cstddef>
#include <string>
#include <vector>

#include "checks.hpp"
#include "mha_case.hpp"

namespace attnscope {
namespace fuzz {
namespace {

// validate() promises to throw what forward() throws (for everything but the pointers).
void expect_same_verdict(const MultiHeadAttention& mha, const ForwardDims& dims, const ForwardOptions& options, int forward_threw)
{
    int validate_threw = 0;
    try {
        mha.validate(dims, options);
    } catch (const std::invalid_argument&) {
        validate_threw = 1;
    } catch (const std::length_error&) {
        validate_threw = 2;
    } catch (...) {
        validate_threw = 3;
    }
    if (validate_threw != forward_threw)
        finding("validate", std::string("validate() ") + verdict(validate_threw) + " but the forward call " + verdict(forward_threw));
}
}  // namespace

void call_mha_invalid(Input& in, MultiHeadAttention& mha, MhaCase& c, std::size_t mutation)
{
    const MhaEntry entry = c.entry;
    const bool pointers = c.pointers, unbatched = c.unbatched;
    const std::size_t E = c.E, H = c.H, kdim = c.kdim, vdim = c.vdim, sharing = c.sharing;
    std::size_t &B = c.B, &Lq = c.Lq, &Lk = c.Lk;
    const ValueKind& values = c.values;
    const Shape& kpm_shape = c.kpm_shape;
    OwnedMask &kpm = c.kpm, &am = c.am;
    ForwardOptions& options = c.options;
    ForwardDims& dims = c.dims;
    Shape &q_shape = c.q_shape, &k_shape = c.k_shape, &v_shape = c.v_shape;

    // Make one argument invalid; every buffer stays as large as its declared shape (up to kMaxBuffer).
    int null_which = -1;
    switch (mutation) {
    case mut_zero_size: {
        const std::size_t which = in.below(3);
        if (pointers) {
            (which == 0 && entry == mha_raw ? dims.batch : which == 1 ? dims.query_len : dims.key_len) = 0;
        } else {
            Shape& s = entry == mha_self_view || which == 0 ? q_shape : which == 1 ? k_shape : v_shape;
            s[in.below(s.size())] = 0;
        }
        break;
    }
    case mut_kpm_shape:
        if (!kpm.present) kpm = draw_mask(in, 1 + int(in.below(2)), kpm_shape, values);
        kpm.shape = wrong_shape(in, kpm_shape, {kpm_shape});
        kpm.blocked.resize(kpm.kind == MaskKind::boolean ? buffer_size(kpm.shape) : 0);
        kpm.added.resize(kpm.kind == MaskKind::additive ? buffer_size(kpm.shape) : 0);
        break;
    case mut_am_shape: {
        if (!am.present) am = draw_mask(in, 1 + int(in.below(2)), {Lq, Lk}, values);
        am.shape = wrong_shape(in, in.flag() ? Shape{Lq, Lk} : Shape{B * H, Lq, Lk}, {{Lq, Lk}, {B * H, Lq, Lk}});
        am.blocked.resize(am.kind == MaskKind::boolean ? buffer_size(am.shape) : 0);
        am.added.resize(am.kind == MaskKind::additive ? buffer_size(am.shape) : 0);
        break;
    }
    case mut_huge_dims: {
        // Consistent shapes with one size near SIZE_MAX: the caller's buffers could not exist, so the
        // library must throw before it reads them (they are small here; ASan reports any read).
        const std::size_t huge = kHuge[in.below(kHugeCount)];
        const std::size_t which = unbatched || entry == mha_cache ? 1 + in.below(2) : in.below(3);  // no batch dimension
        std::size_t& d = which == 0 ? B : which == 1 ? Lq : Lk;
        if (sharing == 0 && which != 0) Lq = Lk = huge;
        else d = huge;
        dims = {B, Lq, Lk};
        q_shape = unbatched ? Shape{Lq, E} : Shape{B, Lq, E};
        k_shape = unbatched ? Shape{Lk, kdim} : Shape{B, Lk, kdim};
        v_shape = unbatched ? Shape{Lk, vdim} : Shape{B, Lk, vdim};
        kpm.shape = unbatched ? Shape{Lk} : Shape{B, Lk};
        am.shape = am.shape.size() == 3 ? Shape{B * H, Lq, Lk} : Shape{Lq, Lk};  // B·H may wrap: then it is wrong too
        break;
    }
    case mut_null:
        null_which = entry == mha_self_view ? 0 : int(in.below(entry == mha_raw ? 5 : entry == mha_cache ? 9 : 3));
        break;
    case mut_tensor_shape: {
        if (pointers) {  // no shapes to get wrong: a zero size instead
            dims.key_len = 0;
            break;
        }
        const std::size_t which = entry == mha_self_view ? 0 : in.below(3);
        Shape& s = which == 0 ? q_shape : which == 1 ? k_shape : v_shape;
        if (which != 0) {
            // Key and value must be exactly [batch, key_len, kdim|vdim] of the query's rank, and value's
            // key_len is key's: any change to either is invalid.
            s = wrong_shape(in, s, {s});
            break;
        }
        // The query's length is free, so change what is not: its features, its rank against key's
        // (self-attention takes either rank, so there only ranks 1 and 4), or its batch against key's.
        switch (in.below(entry == mha_self_view ? 2 : 4)) {
        case 0: s.back() = E + 1 + in.below(3); break;
        case 1: s = in.flag() ? Shape{E} : Shape{1, B, Lq, E}; break;
        case 2: s = unbatched ? Shape{1, Lq, E} : Shape{Lq, E}; break;
        default: s = unbatched ? Shape{Lq + 1, E, E} : Shape{B + 1, Lq, E}; break;
        }
        break;
    }
    default: break;
    }
    note("dims", to_string({dims.batch, dims.query_len, dims.key_len}));
    note("shapes", to_string(q_shape) + to_string(k_shape) + to_string(v_shape));
    note("mask_shapes", (kpm.present ? to_string(kpm.shape) : "-") + (am.present ? to_string(am.shape) : "-"));
    options.key_padding_mask = kpm.view();
    options.attn_mask = am.view();
    if (null_which == 4) options.need_weights = true;

    // Buffers sized to what was declared (capped): the library may check them in any order.
    std::vector<float> out(buffer_size(q_shape)), weights(buffer_size({dims.batch, H, dims.query_len, dims.key_len}));
    std::vector<float> q_buf(buffer_size(q_shape)), k_buf(buffer_size(k_shape)), v_buf(buffer_size(v_shape));
    if (entry == mha_cache) {
        // Null pointers 5..8 go to project_key_value; everything else to forward_projected.
        std::vector<float> pk(buffer_size({dims.key_len, E})), pv(pk.size());
        if (null_which >= 5) {
            const float* kp = null_which == 5 ? nullptr : k_buf.data();
            const float* vp = null_which == 6 ? nullptr : v_buf.data();
            float* ko = null_which == 7 ? nullptr : pk.data();
            float* vo = null_which == 8 ? nullptr : pv.data();
            expect_throw("project_key_value", [&] { mha.project_key_value(kp, vp, std::min<std::size_t>(Lk, 17), ko, vo); });
            return;
        }
        const float* qp = null_which == 0 ? nullptr : q_buf.data();
        const float* kp = null_which == 1 ? nullptr : pk.data();
        const float* vp = null_which == 2 ? nullptr : pv.data();
        float* op = null_which == 3 ? nullptr : out.data();
        float* wp = null_which == 4 ? nullptr : weights.data();
        const int forward_threw = expect_throw("forward_projected", [&] {
            mha.forward_projected(qp, dims.query_len, kp, vp, dims.key_len, options, op, wp);
        });
        if (null_which < 0) expect_same_verdict(mha, dims, options, forward_threw);
    } else if (entry == mha_raw) {
        const float* qp = null_which == 0 ? nullptr : q_buf.data();
        const float* kp = null_which == 1 ? nullptr : sharing == 0 ? qp : k_buf.data();
        const float* vp = null_which == 2 ? nullptr : sharing == 0 ? qp : sharing == 1 ? kp : v_buf.data();
        float* op = null_which == 3 ? nullptr : out.data();
        float* wp = null_which == 4 ? nullptr : weights.data();
        const int forward_threw = expect_throw("forward(raw)", [&] { mha.forward(qp, kp, vp, dims, options, op, wp); });
        if (null_which < 0) expect_same_verdict(mha, dims, options, forward_threw);
    } else {
        // One buffer for several arguments only where their declared shapes are equal.
        const TensorView qv(null_which == 0 ? nullptr : q_buf.data(), q_shape);
        const TensorView kv_(null_which == 1 ? nullptr : sharing == 0 && k_shape == q_shape ? qv.data : k_buf.data(), k_shape);
        const TensorView vv(null_which == 2 ? nullptr
                            : sharing == 0 && v_shape == q_shape ? qv.data
                            : sharing == 1 && v_shape == k_shape ? kv_.data
                                                                 : v_buf.data(),
                            v_shape);
        if (entry == mha_self_view)
            expect_throw("forward(query)", [&] { mha.forward(qv, options); });
        else
            expect_throw("forward(query, key, value)", [&] { mha.forward(qv, kv_, vv, options); });
    }
}

}  // namespace fuzz
}  // namespace attnscope
