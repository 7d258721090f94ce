// libFuzzer harness over the C++ API: decodes sizes, options and values from the input, runs
// MultiHeadAttention (raw pointers and tensor views), scaled_dot_product_attention and state-dict loading,
// checks valid calls against the double-precision reference and invalid ones for exactly
// std::invalid_argument or std::length_error. Built and run by scripts/fuzz.mjs.
//
// Input layout (read front to back; past the end, a stream seeded from the whole input takes over, so any
// input decodes to a complete case and short inputs still give full tensors):
//   byte 0  entry point: % 6 → 0 MHA raw pointers, 1 MHA tensor views (query, key, value),
//           2 MHA tensor view self-attention (query only), 3 scaled_dot_product_attention, 4 state dicts,
//           5 MHA key/value cache (project_key_value + forward_projected, bitwise against forward)
//   byte 1  mode: % 16 → 0..10 valid (compared with the reference), 11..13 invalid (must throw),
//           14..15 non-finite values (NaN, ±inf, FLT_MAX: must only not crash)
//   byte 2  invalid mode only: which argument is made invalid
//   then sizes, options, masks and values, in the order the fuzz_* functions below read them.
// Sizes stay small (embed ≤ 32, heads ≤ 8, seq ≤ 17, batch ≤ 3), except that about one case in 16 takes
// query lengths 20..119 and key lengths 200..455: the streaming attention (need_weights = false) works in
// tiles of 32 queries × 256 keys, and the GEMM in blocks of 32768 / K rows (72 rows for K = 455 keys), and only
// such lengths cross those boundaries.
// tests/fuzz/make_corpus.mjs writes seeds that set bytes 0..2 and leave the rest random.
//
// A finding prints "FINDING [id]: ..." with the decoded case and aborts, so libFuzzer saves the input.
// ATTNSCOPE_FUZZ_IGNORE=id1,id2 skips checks already reported (crashes and sanitizer reports stay fatal).
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "attnscope/attnscope.hpp"
#include "kernels/reference.hpp"

using namespace attnscope;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// The project's tolerance: max |actual − expected| ≤ 1e-4 × max |expected| over each tensor.
constexpr double kTolerance = 1e-4;
// Buffers of wrongly shaped or huge arguments are allocated as declared only up to this many elements;
// beyond it the library must reject the call before reading them.
constexpr std::size_t kMaxBuffer = 1 << 16;

// ---- findings -------------------------------------------------------------------------------------------

std::string g_case;  // what the current input decoded to, printed with every finding

void note(const char* name, std::size_t value)
{
    g_case += name;
    g_case += '=';
    g_case += std::to_string(value);
    g_case += ' ';
}

void note(const char* name, const std::string& value)
{
    g_case += name;
    g_case += '=';
    g_case += value;
    g_case += ' ';
}

bool ignored(const char* id)
{
    static const std::string list = [] {
        const char* env = std::getenv("ATTNSCOPE_FUZZ_IGNORE");
        return "," + std::string(env ? env : "") + ",";
    }();
    return list.find("," + std::string(id) + ",") != std::string::npos;
}

// With ATTNSCOPE_FUZZ_VERBOSE set, each call into the library first prints the case it belongs to.
void announce(const char* call)
{
    static const bool verbose = std::getenv("ATTNSCOPE_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "calling %s\n  case: %s\n", call, g_case.c_str());
}

[[noreturn]] void die(const char* id, const std::string& message)
{
    std::fprintf(stderr, "\nFINDING [%s]: %s\n  case: %s\n", id, message.c_str(), g_case.c_str());
    std::fflush(stderr);
    std::abort();
}

// A property of the library failed (skippable with ATTNSCOPE_FUZZ_IGNORE once reported).
void finding(const char* id, const std::string& message)
{
    if (!ignored(id)) die(id, message);
}

// ---- decoding -------------------------------------------------------------------------------------------

std::uint64_t splitmix(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class Input {
public:
    Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size)
    {
        std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the whole input seeds the stream past its end
        for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
        state_ = h;
    }
    std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : std::uint8_t(splitmix(state_) >> 56); }
    // Always one byte, whatever n, so the layout does not shift with earlier choices. n ≤ 256.
    std::size_t below(std::size_t n) { return byte() % n; }
    bool flag() { return byte() & 1; }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
    std::uint64_t state_;
};

// Seeded values for the parameters, so the input's bytes go to sizes, options, masks and activations.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed * 0x2545F4914F6CDD1Dull + 1) {}
    float uniform(float lo, float hi) { return lo + (hi - lo) * float(splitmix(state_) >> 40) * (1.f / 16777216.f); }
    std::uint32_t bits() { return std::uint32_t(splitmix(state_) >> 32); }

private:
    std::uint64_t state_;
};

const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, FLT_MAX, -FLT_MAX, 1e30f,
                          -1e30f, std::numeric_limits<float>::denorm_min(), -0.f, 3e38f};
constexpr std::size_t kSpecialCount = sizeof(kSpecial) / sizeof(kSpecial[0]);

// Sizes near SIZE_MAX: every one is at least 2^61 floats, more than std::vector<float> can hold, so any
// allocation sized by one of them must fail with std::length_error, and products of two overflow.
const std::size_t kHuge[] = {SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 2 + 1, SIZE_MAX / 3, std::size_t(1) << 61,
                             (std::size_t(1) << 62) + 1, std::size_t(1) << 63, SIZE_MAX - 15};
constexpr std::size_t kHugeCount = sizeof(kHuge) / sizeof(kHuge[0]);

enum class Mode { valid, invalid, nonfinite };

struct ValueKind {
    float scale = 1.f;
    bool integers = false;   // whole numbers in [-100, 100]: q·k is then exact in float
    bool nonfinite = false;  // some NaN, ±inf, FLT_MAX, denormals
};

float draw_value(Input& in, const ValueKind& kind)
{
    const std::uint8_t b = in.byte();
    if (kind.nonfinite && b < 24) return kSpecial[b % kSpecialCount];
    if (kind.integers) return float(int(b % 201) - 100);
    return (float(b) - 127.5f) / 127.5f * kind.scale;
}

std::vector<float> draw_values(Input& in, std::size_t n, const ValueKind& kind)
{
    std::vector<float> v(n);
    for (float& x : v) x = draw_value(in, kind);
    return v;
}

std::size_t saturating_mul(std::size_t a, std::size_t b) { return (a != 0 && b > SIZE_MAX / a) ? SIZE_MAX : a * b; }

std::size_t numel_or_max(const Shape& shape)
{
    std::size_t n = 1;
    for (std::size_t d : shape) n = saturating_mul(n, d);
    return n;
}

// The elements the harness actually allocates for a declared shape: all of them when small, at least one
// (an empty std::vector may have a null data(), which the API reads as "no tensor"/"no mask").
std::size_t buffer_size(const Shape& shape) { return std::max<std::size_t>(1, std::min(numel_or_max(shape), kMaxBuffer)); }

// A mask the harness owns, with the shape it declares to the library.
struct OwnedMask {
    bool present = false;
    MaskKind kind = MaskKind::boolean;
    Shape shape;
    std::vector<std::uint8_t> blocked;
    std::vector<float> added;

    MaskView view() const
    {
        if (!present) return {};
        return kind == MaskKind::boolean ? MaskView::boolean(blocked.data(), shape) : MaskView::additive(added.data(), shape);
    }
    // Whether element `index` blocks its key outright (boolean nonzero or additive -inf).
    bool blocks(std::size_t index) const
    {
        if (!present) return false;
        return kind == MaskKind::boolean ? blocked[index] != 0 : added[index] == -kInf;
    }
    // The largest finite |value| an additive mask adds to a score; it sets how far float rounding may move it.
    double largest_added() const
    {
        double m = 0;
        if (present && kind == MaskKind::additive)
            for (float x : added)
                if (std::isfinite(x)) m = std::max(m, double(std::fabs(x)));
        return m;
    }
};

// kind: 0 none, 1 boolean, 2 additive. Boolean: a density byte, then one byte per element (below the density
// blocks; any nonzero value blocks, so several are used). Additive: -inf, ±1e4 (the large logits) or about [-3, 3].
OwnedMask draw_mask(Input& in, int kind, const Shape& shape, const ValueKind& values)
{
    OwnedMask m;
    if (kind == 0) return m;
    m.present = true;
    m.shape = shape;
    const std::size_t n = std::max<std::size_t>(1, numel_or_max(shape));  // shapes drawn here are always small
    if (kind == 1) {
        m.kind = MaskKind::boolean;
        m.blocked.resize(n);
        const std::uint8_t density = in.byte();
        for (std::uint8_t& x : m.blocked) {
            const std::uint8_t b = in.byte();
            x = b < density ? std::uint8_t(1 + b) : 0;
        }
    } else {
        m.kind = MaskKind::additive;
        m.added.resize(n);
        for (float& x : m.added) {
            const std::uint8_t b = in.byte();
            if (values.nonfinite && b < 16) x = kSpecial[b % kSpecialCount];
            else if (b < 48) x = -kInf;
            else if (b < 64) x = -1e4f;
            else if (b < 72) x = 1e4f;
            else x = values.integers ? float(int(b) - 164) / 8.f : (float(b) - 164.f) / 92.f * 3.f;
        }
    }
    return m;
}

// A shape that is none of `allowed`: one dimension changed, one dropped or one added.
Shape wrong_shape(Input& in, const Shape& valid, const std::vector<Shape>& allowed)
{
    Shape s = valid;
    const std::size_t how = in.below(4), where = in.byte();
    if (how == 0 && !s.empty()) s[where % s.size()] += 1 + in.below(3);
    else if (how == 1 && !s.empty()) s.erase(s.begin() + std::ptrdiff_t(where % s.size()));
    else if (how == 2) s.insert(s.begin() + std::ptrdiff_t(where % (s.size() + 1)), 1 + in.below(3));
    else if (!s.empty()) s[where % s.size()] = s[where % s.size()] > 1 ? 1 : 2;
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) s = Shape{2, 3, 5, 7, 11};  // no API takes rank 5
    return s;
}

// ---- checks ---------------------------------------------------------------------------------------------

// Within kTolerance of the largest |expected| (absolute when everything expected is 0), widened by `widen`
// (see widening() below); NaN or ±inf anywhere is a finding of its own.
// `magnitude`, when given, is the largest value the same computation takes on absolute values (Σ w·|v| for an
// attention output): outputs whose terms cancel to almost nothing everywhere (v = +1 and -1 under equal weights)
// keep only float's rounding of the terms, ~1e-8 of them, which can be all of the tiny result. Measuring against
// the terms keeps the check at 1e-4 of what was summed instead of failing on cancellation.
void expect_close(const char* what, const float* actual, std::size_t n, const std::vector<double>& expected, double widen,
                  double magnitude = 0)
{
    if (expected.size() != n) die("harness", std::string(what) + ": reference has " + std::to_string(expected.size()) +
                                                 " values, library " + std::to_string(n));
    double largest = 0;
    for (double e : expected) {
        if (!std::isfinite(e)) die("harness", std::string(what) + ": the reference is not finite on a valid case");
        largest = std::max(largest, std::fabs(e));
    }
    largest = std::max(largest, magnitude);
    const double allowed = kTolerance * (largest > 0 ? largest : 1.0) + widen;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(actual[i])) {
            finding("nonfinite", std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(actual[i]) +
                                     " on finite input (reference " + std::to_string(expected[i]) + ")");
            return;
        }
        const double diff = std::fabs(double(actual[i]) - expected[i]);
        if (diff > allowed) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s[%zu] = %.9g, reference %.9g: |diff| %.3g > allowed %.3g (magnitude %.3g)", what,
                          i, double(actual[i]), expected[i], diff, allowed, largest);
            finding("mismatch", buf);
            return;
        }
    }
}

// Bitwise equality (NaN payloads and signed zeros included); memcmp must not see the null data() of an empty vector.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

void expect_shape(const char* what, const Shape& actual, const Shape& expected)
{
    if (actual != expected) finding("shape", std::string(what) + ": shape " + to_string(actual) + ", expected " + to_string(expected));
}

// Calls `body` expecting std::invalid_argument or std::length_error. Returns which (1 or 2) for comparisons.
template <class F>
int expect_throw(const char* what, F&& body)
{
    announce(what);
    try {
        body();
    } catch (const std::invalid_argument&) {
        return 1;
    } catch (const std::length_error&) {
        return 2;
    } catch (const std::exception& e) {
        finding("wrong-exception", std::string(what) + ": threw " + typeid(e).name() + " (" + e.what() +
                                       "), expected std::invalid_argument or std::length_error");
        return 3;
    } catch (...) {
        finding("wrong-exception", std::string(what) + ": threw a non-std::exception");
        return 3;
    }
    finding("no-throw", std::string(what) + ": an invalid call returned normally");
    return 0;
}

// Valid and non-finite calls: nothing may throw.
template <class F>
bool expect_no_throw(const char* what, F&& body)
{
    announce(what);
    try {
        body();
        return true;
    } catch (const std::exception& e) {
        finding("unexpected-throw", std::string(what) + ": threw " + typeid(e).name() + ": " + e.what());
    } catch (...) {
        finding("unexpected-throw", std::string(what) + ": threw a non-std::exception");
    }
    return false;
}

// Float rounding of a score s costs up to FLT_EPSILON·|s| (the scale-and-add pass and a second mask pass
// round once each). Scores near 1e4, from ±1e4 additive masks, so move by ~1e-3, and softmax turns an
// absolute score error δ into a weight error of at most 2δ·w: the weights may then differ from the double
// reference by more than 1e-4 without any bug. This widens the tolerance by exactly that bound (×2 margin),
// and is zero when no additive mask is large; the SDPA integer mode keeps its scores exact and uses none.
double widening(double largest_added) { return 4.0 * FLT_EPSILON * largest_added; }

// ---- MultiHeadAttention ----------------------------------------------------------------------------------

enum MhaEntry { mha_raw = 0, mha_views = 1, mha_self_view = 2, mha_cache = 5 };

enum MhaMutation {
    mut_embed_zero,
    mut_heads_zero,
    mut_not_divisible,
    mut_huge_config,
    mut_zero_size,
    mut_kpm_shape,
    mut_am_shape,
    mut_huge_dims,
    mut_null,
    mut_tensor_shape,
    mha_mutation_count
};

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

// max over rows o of Σ_i |W[o, i]|·input_scale + |bias[o]|: a bound on |W·x + b| for inputs within ±input_scale.
double largest_row_abs_sum(const float* w, std::size_t rows, std::size_t cols, std::size_t row_stride, double input_scale,
                           const float* bias)
{
    double m = 0;
    for (std::size_t o = 0; o < rows; ++o) {
        double s = 0;
        for (std::size_t i = 0; i < cols; ++i) s += std::fabs(double(w[o * row_stride + i]));
        s = s * input_scale + (bias ? std::fabs(double(bias[o])) : 0.0);
        m = std::max(m, s);
    }
    return m;
}

const char* verdict(int threw)
{
    return threw == 0 ? "returned" : threw == 1 ? "threw invalid_argument" : threw == 2 ? "threw length_error" : "threw something else";
}

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
    const double largest_v = largest_row_abs_sum(wv, E, vdim, vdim, input_scale, bv);
    const float* wo = params.at("out_proj.weight").data.data();
    const float* bo = bias ? params.at("out_proj.bias").data.data() : nullptr;
    const double out_rows = largest_row_abs_sum(wo, E, E, E, 1.0, nullptr);
    // The output computed on absolute values: |V| = |value|·|Wv|ᵀ + |bv|, heads Σ_j w·|V|, then |·|·|Wo|ᵀ + |bo|.
    double output_magnitude = 0;
    {
        std::vector<double> v_abs(B * Lk * E), concat_abs(E);
        for (std::size_t n = 0; n < B * Lk; ++n)
            for (std::size_t c = 0; c < E; ++c) {
                double sum = bv ? std::fabs(double(bv[c])) : 0.0;
                for (std::size_t i = 0; i < vdim; ++i) sum += std::fabs(double(v_ptr[n * vdim + i])) * std::fabs(double(wv[c * vdim + i]));
                v_abs[n * E + c] = sum;
            }
        const std::size_t hd = E / H;
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t i = 0; i < Lq; ++i) {
                for (std::size_t c = 0; c < E; ++c) {
                    double sum = 0;
                    for (std::size_t j = 0; j < Lk; ++j) sum += expected.weights[((b * H + c / hd) * Lq + i) * Lk + j] * v_abs[(b * Lk + j) * E + c];
                    concat_abs[c] = sum;
                }
                for (std::size_t o = 0; o < E; ++o) {
                    double sum = bo ? std::fabs(double(bo[o])) : 0.0;
                    for (std::size_t c = 0; c < E; ++c) sum += concat_abs[c] * std::fabs(double(wo[o * E + c]));
                    output_magnitude = std::max(output_magnitude, sum);
                }
            }
    }
    expect_close("output", output.data(), output.size(), expected.output, widening(largest_added) * largest_v * out_rows, output_magnitude);
    if (entry == mha_cache) {
        // The projections themselves, in double: K = key·Wkᵀ + bk, V = value·Wvᵀ + bv.
        const float* wk = packed ? params.at("in_proj_weight").data.data() + E * E : params.at("k_proj_weight").data.data();
        const float* bk = bias ? params.at("in_proj_bias").data.data() + E : nullptr;
        double magnitude = 0;  // of the terms, as for the output
        const auto linear = [&](const float* x, std::size_t in_features, const float* w, const float* b) {
            std::vector<double> y(Lk * E);
            for (std::size_t j = 0; j < Lk; ++j)
                for (std::size_t o = 0; o < E; ++o) {
                    double sum = b ? b[o] : 0.0, abs_sum = b ? std::fabs(double(b[o])) : 0.0;
                    for (std::size_t i = 0; i < in_features; ++i) {
                        sum += double(x[j * in_features + i]) * double(w[o * in_features + i]);
                        abs_sum += std::fabs(double(x[j * in_features + i]) * double(w[o * in_features + i]));
                    }
                    y[j * E + o] = sum;
                    magnitude = std::max(magnitude, abs_sum);
                }
            return y;
        };
        const auto expected_key = linear(k_ptr, kdim, wk, bk);
        expect_close("projected key", projected_key.data(), projected_key.size(), expected_key, 0, magnitude);
        magnitude = 0;
        const auto expected_value = linear(v_ptr, vdim, wv, bv);
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

// ---- scaled_dot_product_attention -------------------------------------------------------------------------

enum SdpaMutation { smut_rank, smut_zero, smut_leading, smut_depth, smut_value_len, smut_mask_shape, smut_huge, smut_null, sdpa_mutation_count };
const char* const kSdpaMutationNames[] = {"rank", "zero_size", "leading_dims", "depth", "value_len", "mask_shape", "huge", "null_pointer"};

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
    double output_magnitude = 0;  // Σ_j w·|v|: see expect_close()
    for (std::size_t c = 0; c < count; ++c)
        for (std::size_t i = 0; i < Lq; ++i)
            for (std::size_t d = 0; d < Dv; ++d) {
                double sum = 0;
                for (std::size_t j = 0; j < Lk; ++j) sum += expected.weights[(c * Lq + i) * Lk + j] * std::fabs(double(v[(c * Lk + j) * Dv + d]));
                output_magnitude = std::max(output_magnitude, sum);
            }
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

// ---- state dicts -----------------------------------------------------------------------------------------

enum StateMutation { st_missing, st_extra, st_shape, st_null, st_unknown_shape, state_mutation_count };
const char* const kStateMutationNames[] = {"missing_key", "extra_key", "wrong_shape", "null_data", "unknown_key_shape"};

void fuzz_state_dict(Input& in, Mode mode)
{
    const std::size_t mutation = mode == Mode::invalid ? in.below(state_mutation_count) : std::size_t(state_mutation_count);
    if (mode == Mode::invalid) note("mutation", kStateMutationNames[mutation]);
    const std::size_t H = 1 + in.below(8);
    const std::size_t E = H * (1 + in.below(32 / H));
    const std::size_t kdim = in.flag() ? 0 : 1 + in.below(32), vdim = in.flag() ? 0 : 1 + in.below(32);
    const bool bias = in.flag();
    const std::uint64_t seed = in.byte();
    note("E", E), note("H", H), note("kdim", kdim), note("vdim", vdim), note("bias", bias), note("seed", seed);

    MultiHeadAttention mha({E, H, kdim, vdim, bias, seed});
    const auto before = mha.state_dict();
    const auto keys = mha.state_dict_keys();
    if (keys.size() != before.size()) finding("state-dict", "state_dict() and state_dict_keys() disagree");
    for (const std::string& key : keys) {
        const auto it = before.find(key);
        if (it == before.end() || it->second.shape != mha.state_dict_shape(key))
            finding("state-dict", "state_dict() lacks '" + key + "' or its shape differs from state_dict_shape()");
    }

    Rng rng(seed ^ 0xABCDEF);
    std::map<std::string, Tensor> state;
    for (const std::string& key : keys) {
        Tensor t(mha.state_dict_shape(key));
        for (float& x : t.data) x = mode == Mode::nonfinite && rng.bits() % 8 == 0 ? kSpecial[rng.bits() % kSpecialCount] : rng.uniform(-1.f, 1.f);
        state.emplace(key, std::move(t));
    }

    if (mode != Mode::invalid) {
        if (!expect_no_throw("load_state_dict", [&] { mha.load_state_dict(state); })) return;
        const auto after = mha.state_dict();
        for (const auto& entry : state)
            if (!same_bits(after.at(entry.first).data, entry.second.data))
                finding("state-dict", "'" + entry.first + "' does not round-trip through load_state_dict/state_dict");
        return;
    }

    const std::string victim = keys[in.below(keys.size())];
    note("key", victim);
    const char* const candidates[] = {"in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                      "out_proj.weight", "out_proj.bias", "out_proj", "bias_k", ""};
    std::string stranger;
    for (std::size_t n = 0, start = in.below(10); n < 10 && stranger.empty(); ++n) {
        const std::string candidate = candidates[(start + n) % 10];
        if (std::find(keys.begin(), keys.end(), candidate) == keys.end()) stranger = candidate.empty() ? "weight" : candidate;
    }
    switch (mutation) {
    case st_missing:
        state.erase(victim);
        expect_throw("load_state_dict (missing key)", [&] { mha.load_state_dict(state); });
        break;
    case st_extra:
        state.emplace(stranger, Tensor(Shape{E}));
        expect_throw("load_state_dict (extra key)", [&] { mha.load_state_dict(state); });
        break;
    case st_shape: {
        const Shape good = state.at(victim).shape;
        state.at(victim) = Tensor(wrong_shape(in, good, {good}));
        expect_throw("load_state_dict (wrong shape)", [&] { mha.load_state_dict(state); });
        break;
    }
    case st_null: {
        std::map<std::string, TensorView> views;
        for (const auto& entry : state) views.emplace(entry.first, TensorView(entry.second));
        views.at(victim).data = nullptr;
        expect_throw("load_state_dict (null data)", [&] { mha.load_state_dict(views); });
        break;
    }
    default:
        expect_throw("state_dict_shape (unknown key)", [&] { mha.state_dict_shape(stranger); });
        break;
    }
    // A failed load changes nothing.
    const auto after = mha.state_dict();
    for (const auto& entry : before)
        if (!same_bits(after.at(entry.first).data, entry.second.data)) finding("state-dict", "a failed load changed '" + entry.first + "'");
}

}  // namespace

// ASan reports end the process without passing through die(): print the decoded case after them too.
// (UBSan has no such hook; replaying with ATTNSCOPE_FUZZ_VERBOSE=1, as `fuzz.mjs --run` does, prints it.)
// Weak, so the harness also links without ASan (e.g. for a coverage build).
extern "C" __attribute__((weak)) void __asan_set_error_report_callback(void (*callback)(const char*));

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    if (__asan_set_error_report_callback)
        __asan_set_error_report_callback([](const char*) { std::fprintf(stderr, "\n  case: %s\n", g_case.c_str()); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    Input in(data, size);
    g_case.clear();
    const std::size_t entry = in.below(6);
    const std::size_t mode_byte = in.below(16);
    const Mode mode = mode_byte <= 10 ? Mode::valid : mode_byte <= 13 ? Mode::invalid : Mode::nonfinite;
    const char* const entries[] = {"mha_raw", "mha_views", "mha_self_view", "sdpa", "state_dict", "mha_cache"};
    note("entry", entries[entry]);
    note("mode", mode == Mode::valid ? "valid" : mode == Mode::invalid ? "invalid" : "nonfinite");
    try {
        if (entry <= 2 || entry == 5) fuzz_mha(in, MhaEntry(entry), mode);
        else if (entry == 3) fuzz_sdpa(in, mode);
        else fuzz_state_dict(in, mode);
    } catch (const std::exception& e) {
        // Everything the library is expected to throw is caught where it is called; this is anything else.
        die("unexpected-throw", std::string("escaped the checks: ") + typeid(e).name() + ": " + e.what());
    }
    return 0;
}
