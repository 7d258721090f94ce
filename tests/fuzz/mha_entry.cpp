// The fuzzer's MultiHeadAttention entry point: raw pointers (with a dirty workspace and a repeated call), tensor
// views, self-attention views and the key/value cache, each valid (against the double-precision reference),
// invalid (one argument made wrong, in mha_invalid.cpp: must throw, as validate() says) or non-finite (must only
// not crash).
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
#include "mha_case.hpp"
#include "reference/magnitude.hpp"
#include "reference/reference.hpp"

namespace attnscope {
namespace fuzz {
namespace {

const char* const kMhaMutationNames[] = {"embed_zero", "heads_zero", "not_divisible", "huge_config",  "zero_size",
                                         "kpm_shape",  "am_shape",   "huge_dims",     "null_pointer", "tensor_shape"};

// Random parameters everywhere, biases included (zero biases would hide a missing bias add).
void randomise(MultiHeadAttention& mha, Rng& rng, bool nonfinite)
{
    std::map<std::string, Tensor> state;
    for (const std::string& key : mha.state_dict_keys()) {
        Tensor t(mha.state_dict_shape(key));
        for (float& x : t.data) x = nonfinite && rng.bits() % 64 == 0 ? kSpecial[rng.bits() % kSpecialCount] : rng.uniform(-0.5f, 0.5f);
        state.emplace(key, std::move(t));
    }
    mha.load_state_dict(state);
}

}  // namespace

void fuzz_mha(Input& in, MhaEntry entry, Mode mode)
{
    const std::size_t mutation = mode == Mode::invalid ? in.below(mha_mutation_count) : std::size_t(mha_mutation_count);
    if (mode == Mode::invalid) note("mutation", kMhaMutationNames[mutation]);

    // Sizes: E = H·head_dim ≤ 32, kdim/vdim 0 (defaults), E, or their own ≤ 32.
    const std::size_t H = 1 + in.below(8);
    const std::size_t E = H * (1 + in.below(32 / H));
    const std::size_t kv = in.below(3), own_kdim = 1 + in.below(32), own_vdim = 1 + in.below(32);
    const bool bias = in.flag();
    std::size_t B = 1 + in.below(3), Lq = 1 + in.below(17), Lk = 1 + in.below(17);
    if (in.below(16) == 0) {  // long sequences, across the streaming tiles (see the top of the file)
        Lq = 20 + in.below(100);
        Lk = 200 + in.below(256);
    }
    // 0: self-attention (one buffer for query, key and value), 1: key and value share a buffer, 2: three buffers.
    std::size_t sharing = entry == mha_self_view ? 0 : in.below(3);
    const bool causal = in.flag(), need_weights = in.below(4) != 0, average = in.flag();
    const int kpm_kind = int(in.below(3)), am_kind = int(in.below(5));  // am: none, bool 2D, bool 3D, add 2D, add 3D
    const bool unbatched = (entry == mha_views || entry == mha_self_view) && in.flag();
    const bool pointers = entry == mha_raw || entry == mha_cache;
    const bool random_weights = in.below(4) != 0;
    const std::uint64_t weight_seed = in.byte();
    const float input_scale = std::array<float, 3>{1.f, 0.125f, 2.f}[in.below(3)];
    const bool dirty_workspace = pointers && in.flag();
    const bool weights_sentinel = pointers && in.flag();

    std::size_t kdim_cfg = kv == 0 ? 0 : kv == 1 ? E : own_kdim, vdim_cfg = kv == 0 ? 0 : kv == 1 ? E : own_vdim;
    if (sharing == 0) {
        kdim_cfg = vdim_cfg = kv == 1 ? E : 0;
        Lk = Lq;
    }
    if (sharing == 1 && kv == 2) vdim_cfg = kdim_cfg;
    if (unbatched || entry == mha_cache) B = 1;

    MultiHeadAttentionConfig config{E, H, kdim_cfg, vdim_cfg, bias, weight_seed};
    note("E", E), note("H", H), note("kdim", kdim_cfg), note("vdim", vdim_cfg), note("bias", bias), note("B", B),
        note("Lq", Lq), note("Lk", Lk), note("sharing", sharing), note("causal", causal), note("need_weights", need_weights),
        note("average", average), note("kpm", kpm_kind), note("am", am_kind), note("unbatched", unbatched),
        note("random_weights", random_weights), note("seed", weight_seed), note("dirty", dirty_workspace);

    // Invalid configurations: the constructor must throw.
    if (mutation <= mut_huge_config) {
        if (mutation == mut_embed_zero) config.embed_dim = 0;
        if (mutation == mut_heads_zero) config.num_heads = 0;
        if (mutation == mut_not_divisible) {
            config.num_heads = 2 + in.below(7);
            config.embed_dim = config.num_heads * (1 + in.below(4)) + 1 + in.below(config.num_heads - 1);
        }
        if (mutation == mut_huge_config) {
            const std::size_t huge = kHuge[in.below(kHugeCount)];
            switch (in.below(4)) {
            case 0: config.embed_dim = huge; break;
            case 1: config.kdim = huge; break;
            case 2: config.vdim = huge; break;
            default: config.num_heads = huge; break;  // E % huge = E ≠ 0
            }
        }
        note("config", to_string({config.embed_dim, config.num_heads, config.kdim, config.vdim}));
        expect_throw("MultiHeadAttention(config)", [&] { MultiHeadAttention mha(config); });
        return;
    }

    std::optional<MultiHeadAttention> layer;
    if (!expect_no_throw("MultiHeadAttention(config)", [&] { layer.emplace(config); })) return;
    MultiHeadAttention& mha = *layer;
    const std::size_t kdim = mha.kdim(), vdim = mha.vdim();
    if (mha.embed_dim() != E || mha.num_heads() != H || mha.head_dim() != E / H || kdim != (kdim_cfg ? kdim_cfg : E) ||
        vdim != (vdim_cfg ? vdim_cfg : E) || mha.has_bias() != bias)
        finding("config", "the layer does not report the configuration it was given");
    Rng rng(weight_seed);
    if (random_weights || mode == Mode::nonfinite) randomise(mha, rng, mode == Mode::nonfinite);

    // Masks and inputs, shaped for the batched layout first.
    ValueKind values;
    values.scale = input_scale;
    values.nonfinite = mode == Mode::nonfinite;
    const Shape kpm_shape = unbatched ? Shape{Lk} : Shape{B, Lk};
    const Shape am_shape = (am_kind == 2 || am_kind == 4) ? Shape{B * H, Lq, Lk} : Shape{Lq, Lk};
    OwnedMask kpm = draw_mask(in, kpm_kind, kpm_shape, values);
    OwnedMask am = draw_mask(in, am_kind == 0 ? 0 : am_kind <= 2 ? 1 : 2, am_shape, values);
    std::vector<float> query = draw_values(in, B * Lq * E, values);
    std::vector<float> key = sharing == 0 ? std::vector<float>{} : draw_values(in, B * Lk * kdim, values);
    std::vector<float> value = sharing == 2 ? draw_values(in, B * Lk * vdim, values) : std::vector<float>{};
    const float* q_ptr = query.data();
    const float* k_ptr = sharing == 0 ? q_ptr : key.data();
    const float* v_ptr = sharing == 0 ? q_ptr : sharing == 1 ? k_ptr : value.data();

    ForwardOptions options;
    options.causal = causal;
    options.need_weights = need_weights;
    options.average_weights = average;
    options.key_padding_mask = kpm.view();
    options.attn_mask = am.view();
    ForwardDims dims{B, Lq, Lk};

    Shape q_shape = unbatched ? Shape{Lq, E} : Shape{B, Lq, E};
    Shape k_shape = unbatched ? Shape{Lk, kdim} : Shape{B, Lk, kdim};
    Shape v_shape = unbatched ? Shape{Lk, vdim} : Shape{B, Lk, vdim};

    if (mode == Mode::invalid) {
        MhaCase c{entry, pointers, unbatched, E, H, kdim, vdim, sharing, B, Lq, Lk, values, kpm_shape, kpm, am, options, dims,
                  q_shape, k_shape, v_shape};
        call_mha_invalid(in, mha, c, mutation);
        return;
    }

    // ---- valid and non-finite cases ----
    std::vector<float> output, weights;
    std::vector<float> projected_key, projected_value;  // mha_cache only
    Shape out_shape, weights_shape;
    const Shape batched_weights_shape = average ? Shape{B, Lq, Lk} : Shape{B, H, Lq, Lk};
    const std::size_t weights_numel = need_weights ? numel_or_max(batched_weights_shape) : 0;
    if (pointers) {
        if (mha.weights_numel(dims, options) != weights_numel)
            finding("shape", "weights_numel() = " + std::to_string(mha.weights_numel(dims, options)) + ", expected " + std::to_string(weights_numel));
        if (need_weights) expect_shape("weights_shape()", mha.weights_shape(dims, options), batched_weights_shape);
        if (!expect_no_throw("validate", [&] { mha.validate(dims, options); })) return;
        if (dirty_workspace) {
            // A call with other sizes first, so the workspace holds stale values (and may be larger or smaller).
            const ForwardDims other{1 + in.below(3), 1 + in.below(17), 1 + in.below(17)};
            ForwardOptions plain;
            plain.need_weights = in.flag();
            plain.average_weights = in.flag();
            std::vector<float> oq(other.batch * other.query_len * E), ok(other.batch * other.key_len * kdim),
                ov(other.batch * other.key_len * vdim), oo(oq.size()), ow(std::max<std::size_t>(1, mha.weights_numel(other, plain)));
            for (auto* v : {&oq, &ok, &ov})
                for (float& x : *v) x = rng.uniform(-3.f, 3.f);
            const bool fused = kdim == E && vdim == E && other.key_len == other.query_len && in.flag();
            if (!expect_no_throw("forward(raw) to dirty the workspace", [&] {
                    mha.forward(oq.data(), fused ? oq.data() : ok.data(), fused ? oq.data() : ov.data(), other, plain, oo.data(), ow.data());
                }))
                return;
        }
        output.assign(B * Lq * E, 0.f);
        // need_weights = false: null, or a buffer that must stay untouched.
        constexpr float sentinel = -12345.f;
        weights.assign(need_weights ? weights_numel : weights_sentinel ? 16 : 0, sentinel);
        float* wp = weights.empty() ? nullptr : weights.data();
        if (!expect_no_throw("forward(raw)", [&] { mha.forward(q_ptr, k_ptr, v_ptr, dims, options, output.data(), wp); })) return;
        if (!need_weights)
            for (float w : weights)
                if (w != sentinel) finding("sentinel", "forward() wrote to the weights buffer although need_weights is false");
        // The same call again (workspace now warm) must give bit-identical results.
        std::vector<float> output2(output.size()), weights2(weights.size(), sentinel);
        if (!expect_no_throw("forward(raw) repeated", [&] {
                mha.forward(q_ptr, k_ptr, v_ptr, dims, options, output2.data(), weights2.empty() ? nullptr : weights2.data());
            }))
            return;
        if (mode == Mode::valid && (!same_bits(output, output2) || !same_bits(weights, weights2)))
            finding("nondeterministic", "a repeated forward() call gave different bits");
        if (entry == mha_cache) {
            // The key/value-cache path: "forward() is project_key_value() followed by this", so the same bits.
            projected_key.assign(Lk * E, sentinel);
            projected_value.assign(Lk * E, sentinel);
            std::vector<float> output3(output.size(), sentinel), weights3(weights.size(), sentinel);
            if (!expect_no_throw("project_key_value", [&] {
                    mha.project_key_value(k_ptr, v_ptr, Lk, projected_key.data(), projected_value.data());
                }))
                return;
            if (!expect_no_throw("forward_projected", [&] {
                    mha.forward_projected(q_ptr, Lq, projected_key.data(), projected_value.data(), Lk, options, output3.data(),
                                          weights3.empty() ? nullptr : weights3.data());
                }))
                return;
            if (mode == Mode::valid && (!same_bits(output, output3) || !same_bits(weights, weights3)))
                finding("cache", "project_key_value() + forward_projected() do not give forward()'s bits");
        }
        out_shape = {B, Lq, E};
        weights_shape = batched_weights_shape;
    } else {
        const TensorView qv(q_ptr, q_shape), kv_(k_ptr, k_shape), vv(v_ptr, v_shape);
        AttentionResult r;
        if (!expect_no_throw("forward(views)", [&] { r = entry == mha_self_view ? mha.forward(qv, options) : mha.forward(qv, kv_, vv, options); }))
            return;
        Shape expected_weights = batched_weights_shape;
        if (unbatched) expected_weights.erase(expected_weights.begin());
        expect_shape("output", r.output.shape, q_shape);
        if (r.output.data.size() != numel_or_max(q_shape)) die("shape", "output data does not match its shape");
        if (need_weights) {
            expect_shape("weights", r.weights.shape, expected_weights);
            if (r.weights.data.size() != weights_numel) die("shape", "weights data does not match its shape");
        } else if (!r.weights.shape.empty() || !r.weights.data.empty()) {
            finding("shape", "weights returned although need_weights is false");
        }
        output = std::move(r.output.data);
        weights = std::move(r.weights.data);
    }
    if (mode == Mode::nonfinite) return;  // only "no crash, no sanitizer report, no exception"

    // ---- against the reference ----
    const auto params = mha.state_dict();
    // Per-head weights from the reference always (the output magnitude below needs them), averaged here the way
    // the reference averages. It reads the key padding mask as [B, Lk] whatever its declared shape.
    ForwardOptions ref_options = options;
    ref_options.average_weights = false;
    const auto expected = reference::multihead_attention(params, E, H, kdim, vdim, B, Lq, Lk, q_ptr, k_ptr, v_ptr, ref_options);
    std::vector<double> expected_weights = expected.weights;
    if (average) {
        expected_weights.assign(B * Lq * Lk, 0.0);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t x = 0; x < Lq * Lk; ++x) expected_weights[b * Lq * Lk + x] += expected.weights[(b * H + h) * Lq * Lk + x] / double(H);
    }

    // Tolerance widening for large additive masks: weights by widening(A), the output by that times the largest
    // |V| (bounded through the value projection) times the largest row sum of |out_proj.weight|.
    const double largest_added = kpm.largest_added() + am.largest_added();
    const bool packed = kdim == E && vdim == E;
    const float* wv = packed ? params.at("in_proj_weight").data.data() + 2 * E * E : params.at("v_proj_weight").data.data();
    const float* bv = bias ? params.at("in_proj_bias").data.data() + 2 * E : nullptr;
    const double largest_v = reference::largest_row_abs_sum(wv, E, vdim, vdim, input_scale, bv);
    const float* wo = params.at("out_proj.weight").data.data();
    const float* bo = bias ? params.at("out_proj.bias").data.data() : nullptr;
    const double out_rows = reference::largest_row_abs_sum(wo, E, E, E, 1.0, nullptr);
    // The output computed on absolute values (see expect_close()).
    const double output_magnitude =
        reference::mha_output_magnitude(B, H, Lq, Lk, E, vdim, v_ptr, wv, bv, wo, bo, expected.weights);
    expect_close("output", output.data(), output.size(), expected.output, widening(largest_added) * largest_v * out_rows, output_magnitude);
    if (entry == mha_cache) {
        // The projections themselves, in double: K = key·Wkᵀ + bk, V = value·Wvᵀ + bv.
        const float* wk = packed ? params.at("in_proj_weight").data.data() + E * E : params.at("k_proj_weight").data.data();
        const float* bk = bias ? params.at("in_proj_bias").data.data() + E : nullptr;
        double magnitude = 0;  // of the terms, as for the output
        const auto expected_key = reference::linear_with_magnitude(k_ptr, Lk, kdim, wk, bk, E, magnitude);
        expect_close("projected key", projected_key.data(), projected_key.size(), expected_key, 0, magnitude);
        const auto expected_value = reference::linear_with_magnitude(v_ptr, Lk, vdim, wv, bv, E, magnitude);
        expect_close("projected value", projected_value.data(), projected_value.size(), expected_value, 0, magnitude);
    }
    if (need_weights) expect_close("weights", weights.data(), weights.size(), expected_weights, widening(largest_added));

    // Blocked keys get exactly zero weight; a query whose keys are all blocked in every head gets exactly
    // out_proj.bias as its output row.
    const bool am_3d = am.shape.size() == 3;
    const float* out_bias = bias ? params.at("out_proj.bias").data.data() : nullptr;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < Lq; ++i) {
            bool all_heads_masked = true;
            for (std::size_t h = 0; h < H; ++h) {
                bool row_masked = true;
                for (std::size_t j = 0; j < Lk; ++j) {
                    const bool blocked = (causal && j > i) || kpm.blocks(b * Lk + j) ||
                                         am.blocks((am_3d ? (b * H + h) * Lq * Lk : 0) + i * Lk + j);
                    row_masked = row_masked && blocked;
                    if (blocked && need_weights && !average && weights[((b * H + h) * Lq + i) * Lk + j] != 0.f)
                        finding("masked-weight", "weights[" + std::to_string(b) + "," + std::to_string(h) + "," + std::to_string(i) + "," +
                                                     std::to_string(j) + "] = " + std::to_string(weights[((b * H + h) * Lq + i) * Lk + j]) +
                                                     " for a blocked key");
                }
                all_heads_masked = all_heads_masked && row_masked;
            }
            if (!all_heads_masked) continue;
            if (need_weights && average)
                for (std::size_t j = 0; j < Lk; ++j)
                    if (weights[(b * Lq + i) * Lk + j] != 0.f)
                        finding("masked-weight", "averaged weights of a query whose keys are all blocked are not zero");
            for (std::size_t o = 0; o < E; ++o)
                if (output[(b * Lq + i) * E + o] != (out_bias ? out_bias[o] : 0.f))
                    finding("masked-output", "output[" + std::to_string(b) + "," + std::to_string(i) + "," + std::to_string(o) + "] = " +
                                                 std::to_string(output[(b * Lq + i) * E + o]) +
                                                 " for a query whose keys are all blocked; expected exactly out_proj.bias");
        }
}

}  // namespace fuzz
}  // namespace attnscope
