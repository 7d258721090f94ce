// The sizes of every buffer a forward pass allocates, from the plan and the call's sizes alone (pass.hpp): run_stack()
// and forward() allocate from these, and the memory plan adds them up. 64-bit arithmetic that saturates far beyond any
// memory instead of wrapping, so an absurd config gives an absurd number, never a small one.
#include <algorithm>
#include <stdexcept>

#include "../attend.hpp"
#include "../kernels/gemm.hpp"
#include "../parallel.hpp"
#include "../json.hpp"
#include "../sizes.hpp"
#include "heads.hpp"
#include "pass.hpp"

namespace attnscope {
namespace model {
namespace {

using namespace plan;
constexpr std::uint64_t NR = kernels::panel_width<xsimd::default_arch>;
// The memory plan's arithmetic saturates instead of wrapping (a dry declaration of an absurd config).
constexpr auto add = detail::saturating_add;
constexpr auto mul = detail::saturating_mul;
std::uint64_t packed(std::uint64_t k, std::uint64_t n) { return mul((n + NR - 1) / NR * NR, k); }

// Floats of the largest input a product of a run_stack() reads in slivers, held while that product runs (not one of
// run_stack's buffers: matmul_packed allocates it, at the sliver setting only, over F32 weights only; 0 otherwise).
std::uint64_t sliver_floats(const Stack& s, std::uint64_t rows, std::uint64_t memory_rows)
{
    const std::uint64_t R = detail::matmul_sliver_rows();
    if (R == 0) return 0;
    // The products' inputs: the rows for q|k|v, the MLP's up (and gate) and cross-attention's q (the stack's width);
    // the context for an output projection (a query width); the MLP's inner width for its down projection; the
    // encoder's output for cross-attention's keys and values. The head reads the main stack's width, over T rows.
    std::uint64_t in = s.width(), memory_in = 0;
    for (const Layer& l : s.kinds) {
        in = std::max<std::uint64_t>({in, l.self.q_width(), l.mlp.inner});
        if (l.has_cross) {
            in = std::max<std::uint64_t>(in, l.cross.q_width());
            memory_in = std::max<std::uint64_t>(memory_in, l.cross.input_width);
        }
    }
    return std::max(mul(rows / R * R, in), mul(memory_rows / R * R, memory_in));
}

}  // namespace

std::uint64_t StackBuffers::bytes() const
{
    std::uint64_t floats = 0;
    for (std::uint64_t n : {residual, qkv, context, mlp, scores, panels, rope, cross}) floats = add(floats, n);
    return add(mul(floats, sizeof(float)), blocked_bytes);
}

StackBuffers stack_buffers(const Stack& s, std::uint64_t rows, std::uint64_t keys, std::uint64_t memory_rows)
{
    std::uint64_t qkv_cols = 0, q_cols = 0, cross_q = 0, up_cols = 0, panels = 0, rope = 0;
    bool bias = s.relative.buckets != 0;
    for (const Layer& l : s.kinds) {
        const Attention& a = l.self;
        qkv_cols = std::max<std::uint64_t>(qkv_cols, a.q_width() + 2 * a.kv_width());
        q_cols = std::max<std::uint64_t>(q_cols, a.q_width());
        up_cols = std::max<std::uint64_t>(up_cols, (l.mlp.gated ? 2 : 1) * l.mlp.inner);
        panels = std::max(panels, mul(a.kv_heads, add(packed(a.head_dim, keys), packed(keys, a.head_dim))));
        if (a.rope) rope = add(rope, mul(rows, a.rotary.dims));  // cos and sin: dims/2 each
        if (l.has_cross) {
            const Attention& c = l.cross;
            cross_q = std::max<std::uint64_t>(cross_q, c.q_width());
            q_cols = std::max<std::uint64_t>(q_cols, c.q_width());
            panels = std::max(panels, mul(c.kv_heads, add(packed(c.head_dim, memory_rows), packed(memory_rows, c.head_dim))));
        }
    }
    const std::uint64_t block = std::min<std::uint64_t>(rows, query_block), width = std::max(keys, memory_rows);
    StackBuffers b;
    b.residual = mul(4, mul(rows, s.width()));
    b.qkv = mul(rows, qkv_cols);
    b.context = mul(rows, q_cols);
    b.mlp = mul(rows, up_cols);
    b.scores = mul(mul(mul(block, width), detail::worker_count()), bias ? 2 : 1);
    b.panels = panels;
    b.rope = rope;
    b.cross = mul(rows, cross_q);
    b.blocked_bytes = mul(rows, width);
    return b;
}

std::uint64_t RequestBuffers::bytes() const
{
    const auto numel = [](const Shape& shape) {
        if (shape.empty()) return std::uint64_t(0);
        std::uint64_t n = 1;
        for (std::size_t d : shape) n = mul(n, d);
        return n;
    };
    std::uint64_t floats = add(add(caches, memory), scratch);
    for (const Shape* s : {&hidden, &logits, &attention, &encoder_attention, &cross_attention, &heads}) floats = add(floats, numel(*s));
    return mul(floats, sizeof(float));
}

RequestBuffers request_buffers(const Plan& p, std::size_t T, std::size_t S, bool need_attention, bool keep_heads, bool head)
{
    RequestBuffers r;
    const Stack& main = p.main();
    const Attention& self = main.layer(0).self;
    // A stack's self-attention caches: keys and values of every layer at every position (every layer of a stack has
    // the same K/V width: validate_plan).
    const auto caches = [](const Stack& s, std::uint64_t n) { return mul(mul(2, s.layers()), mul(n, s.layer(0).self.kv_width())); };
    r.caches = caches(main, T);
    if (p.seq2seq()) {
        const Stack& encoder = p.stacks.front();
        const Attention& cross = main.layer(0).cross;
        r.caches = add(add(r.caches, caches(encoder, S)), mul(mul(2, main.layers()), mul(S, cross.kv_width())));
        r.memory = mul(S, encoder.width());
        if (need_attention) {
            r.encoder_attention = {encoder.layers(), encoder.layer(0).self.heads, S, S};
            r.cross_attention = {main.layers(), cross.heads, T, S};
        }
    }
    r.hidden = {T, main.width()};
    r.scratch = mul(T, main.width());
    if (head) r.logits = {T, p.head.vocab};
    if (need_attention) r.attention = {main.layers(), self.heads, T, T};
    if (keep_heads) r.heads = {main.layers(), T, self.heads, self.head_dim};
    return r;
}

std::uint64_t forward_workspace_bytes(const Plan& p, std::size_t tokens, bool head, bool f32_matrices)
{
    std::uint64_t stacks = 0;  // the stacks run one after the other: their buffers are never held together
    for (std::size_t i = 0; i < p.stacks.size(); ++i) {
        const bool decoder = p.seq2seq() && i == 1;
        const std::uint64_t memory_rows = decoder ? tokens : 0;
        const std::uint64_t slivers = f32_matrices ? mul(sliver_floats(p.stacks[i], tokens, memory_rows), sizeof(float)) : 0;
        stacks = std::max(stacks, add(stack_buffers(p.stacks[i], tokens, tokens, memory_rows).bytes(), slivers));
    }
    return add(request_buffers(p, tokens, p.seq2seq() ? tokens : 0, true, false, head).bytes(), stacks);
}

ModelConfig summary(const Plan& p, bool head)
{
    ModelConfig c;
    c.family = p.family;
    c.kind = p.kind;
    const Stack& main = p.main();
    const Layer& first = main.layer(0);
    c.layers = main.layers();
    c.heads = first.self.heads;
    c.kv_heads = first.self.kv_heads;
    c.head_dim = first.self.head_dim;
    c.hidden = main.width();
    c.intermediate = first.mlp.inner;
    c.vocab = main.embedding.vocab;
    c.max_positions = main.max_positions;
    c.type_vocab = main.embedding.type_vocab;
    c.causal = first.self.causal;
    c.has_lm_head = head;
    c.tied = p.head.tied;
    if (p.seq2seq()) {
        const Stack& encoder = p.stacks.front();
        c.encoder_layers = encoder.layers();
        c.encoder_heads = encoder.layer(0).self.heads;
        c.source_vocab = encoder.embedding.vocab;
        c.max_source_positions = encoder.max_positions;
    }
    return c;
}

void validate_plan(const Plan& p)
{
    const auto check = [&](bool ok, const char* what) {
        if (!ok) throw std::logic_error(p.family + ": the family made a plan the pass cannot run: " + what);
    };
    check(!p.stacks.empty() && p.stacks.size() == (p.seq2seq() ? 2u : 1u), "one stack, or an encoder and a decoder");
    for (std::size_t si = 0; si < p.stacks.size(); ++si) {
        const Stack& s = p.stacks[si];
        check(s.layers() > 0 && !s.kinds.empty(), "a stack without layers");
        for (std::uint32_t k : s.kind_of) check(k < s.kinds.size(), "a layer of no kind");
        const Attention& first = s.kinds[0].self;
        for (const Layer& l : s.kinds) {
            const Attention& a = l.self;
            check(a.heads == first.heads && a.kv_heads == first.kv_heads && a.head_dim == first.head_dim, "layers of one stack with other heads");
            check(a.heads > 0 && a.kv_heads > 0 && a.heads % a.kv_heads == 0 && a.head_dim > 0, "heads that do not group");
            check(!a.rope || (a.rotary.dims % 2 == 0 && a.rotary.dims > 0 && a.rotary.dims <= a.head_dim), "rotary features");
            check(l.has_cross == (p.seq2seq() && si == 1), "cross-attention outside an encoder-decoder's decoder");
            if (l.has_cross) {
                const Attention& c = l.cross;
                check(c.heads == s.kinds[0].cross.heads && c.kv_width() == s.kinds[0].cross.kv_width(), "cross-attention heads");
                check(c.input_width == p.stacks[0].width(), "cross-attention's input is the encoder's width");
            }
            for (const Norms* n : {&l.attn_norms, &l.cross_norms, &l.mlp_norms})
                for (const Norm* m : {&n->in, &n->out, &n->after})
                    check(m->kind != NormKind::layer_norm || m->bias, "a LayerNorm without a bias");
            check(!(l.parallel && (l.attn_norms.out.present() || l.attn_norms.after.present() || l.has_cross)), "a parallel layer's norms");
        }
        check(s.relative.buckets == 0 || s.relative.max_distance > s.relative.buckets / 2, "relative buckets");
    }
    for (const Stack& a : p.stacks)
        for (const Stack& b : p.stacks)
            if (a.embedding.table == b.embedding.table)
                check(a.embedding.vocab == b.embedding.vocab && a.embedding.width == b.embedding.width, "a shared table");
    check(!p.head.tied || p.head.vocab == p.main().embedding.vocab, "a tied head of another vocabulary");
}

void check_parameter_bytes(std::uint64_t floats, std::uint64_t bytes, const std::string& family, const char* call)
{
    if (bytes > max_parameter_bytes)
        throw std::length_error(json::join({call, ": ", family, " with these sizes has about ", json::Num(floats), " parameters, which need ",
                                            json::Num(bytes), " bytes as F32 with a BF16 or F16 file's matrices in 16 bits, more than the ",
                                            json::Num(max_parameter_bytes),
                                            " bytes a model may take in 4 GiB of WASM memory"}));
}

}  // namespace model
}  // namespace attnscope
