// LanguageModel::trace and Seq2SeqModel::trace: their checks, and what they record of one head at one query from
// inside the attention call of the models' own forward pass (residual_attention, run by their run()): its input,
// the layer's own q/k/v projections, the call's weights row and output row. Cold code, built for size: it runs once
// per trace, over one head.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "json.hpp"
#include "model_parts.hpp"

namespace attnscope {
namespace detail {

void check_trace_index(const char* call, const char* what, std::size_t value, std::size_t count, const char* whose)
{
    if (value < count) return;
    // json::join and Num, as the pretrained models' trace writes the same message: no std::string chain here.
    throw std::invalid_argument(json::join({call, ": ", what, ": expected 0 to ", json::Num(count - 1), whose, ", got ",
                                            json::Num(value)}));
}

namespace {

// `out` becomes a [rows, width] tensor (`rows` 0: a [width] one) of columns [col, col + width) of `rows` rows of
// `ld` floats at `from` (null: zeros). One out-of-line helper taking sizes, not Shapes: each Shape or Tensor built
// at a call site would cost the .wasm its own allocation and cleanup code (about 2 KB for this file).
float* put(Tensor& out, std::size_t rows, std::size_t width, const float* from = nullptr, std::size_t ld = 0,
           std::size_t col = 0)
{
    out.shape = rows ? Shape{rows, width} : Shape{width};
    const std::size_t n = (rows ? rows : 1);
    out.data.assign(n * width, 0.f);
    if (from)
        for (std::size_t r = 0; r < n; ++r) std::memcpy(out.data.data() + r * width, from + r * ld + col, width * sizeof(float));
    return out.data.data();
}

}  // namespace

void record_trace(AttentionTrace& trace, const MultiHeadAttention& attention, const float* x, const float* h,
                  std::size_t T, const float* memory, std::size_t S, bool causal, const float* weights,
                  const std::uint8_t* ablate_heads, const float* output)
{
    // The sizes are the caller's buffers', already checked: T·d (x, h), S·d (memory), H·T·S (weights).
    const std::size_t d = attention.embed_dim(), hd = attention.head_dim();
    const std::size_t head = trace.head, i = trace.query, col = head * hd;
    const float* kv = memory ? memory : h;
    trace.kv_head = head;  // one key/value head per query head
    put(trace.layer_input, T, d, x, d);
    put(trace.attention_input, T, d, h, d);
    if (memory) put(trace.key_input, S, d, memory, d);

    // q, k and v by the layer's own packed projections, over every row as forward() projects them (a product's
    // rounding may depend on the rows it is blocked with).
    // One buffer for q [T, d], k and v [S, d] each.
    std::vector<float> qkv = work_floats({checked_add(checked_add(T, S, "trace"), S, "trace"), d}, "trace: q, k, v");
    float *q = qkv.data(), *k = q + T * d, *v = k + S * d;
    attention.project_query(h, T, q);
    attention.project_key_value(kv, kv, S, k, v);
    const float* query = put(trace.query_raw, 0, hd, q + i * d, d, col);
    put(trace.query_final, 0, hd, q + i * d, d, col);  // no QK-norm or RoPE in these models
    const float* keys = put(trace.keys_raw, S, hd, k, d, col);
    put(trace.keys_final, S, hd, k, d, col);
    const float* values = put(trace.values, S, hd, v, d, col);

    float* scores = put(trace.scores, 0, S);
    trace.visible.assign(S, 1);
    for (std::size_t j = 0; j < S; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < hd; ++c) dot += double(query[c]) * keys[j * hd + c];
        scores[j] = float(dot);
        if (causal && j > i) trace.visible[j] = 0;
    }
    trace.scale = 1.f / std::sqrt(float(hd));  // MultiHeadAttention's (attend_heads)
    const float* row = put(trace.weights, 0, S, weights + (head * T + i) * S, S);

    // The context, as forward() zeroes it for an ablated head; then the head's share of the output projection.
    float* context = put(trace.context, 0, hd);
    if (!(ablate_heads && ablate_heads[head]))
        for (std::size_t c = 0; c < hd; ++c) {
            double sum = 0;
            for (std::size_t j = 0; j < S; ++j) sum += double(row[j]) * values[j * hd + c];
            context[c] = float(sum);
        }
    attention.project_head_output(head, context, put(trace.head_output, 0, d));
    put(trace.attention_output, 0, d, output + i * d, d);
}

}  // namespace detail

using detail::check_trace_index;

AttentionTrace LanguageModel::trace(const std::vector<std::int32_t>& tokens, std::size_t layer, std::size_t head,
                                    std::size_t query, const HeadMask& ablate)
{
    const char* call = "LanguageModel.trace";
    detail::check_tokens("LanguageModel.trace: tokens", tokens, config_.vocab_size, config_.max_len);
    detail::check_head_mask("LanguageModel.trace: ablate", ablate, config_.num_layers, config_.num_heads);
    check_trace_index(call, "layer", layer, config_.num_layers);
    check_trace_index(call, "head", head, config_.num_heads);
    check_trace_index(call, "query", query, tokens.size(), " (one per token)");
    AttentionTrace trace;
    trace.layer = layer;
    trace.head = head;
    trace.query = query;
    // With every attention map, as forward(need_attention) computes them (the streaming pass without them rounds
    // otherwise): L·H·T² floats, 786 KB for the demo's model at its 128 tokens, as the page's own forward pass.
    run(tokens, true, ablate, &trace, call);
    return trace;
}

AttentionTrace Seq2SeqModel::trace(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                                   Seq2SeqAttention which, std::size_t layer, std::size_t head, std::size_t query,
                                   const Seq2SeqAblation& ablate)
{
    const char* call = "Seq2SeqModel.trace";
    const bool encoder = which == Seq2SeqAttention::encoder_self;
    detail::check_tokens("Seq2SeqModel.trace: source", source, config_.src_vocab_size, config_.max_src_len);
    if (!encoder || !target.empty())
        detail::check_tokens("Seq2SeqModel.trace: target", target, config_.tgt_vocab_size, config_.max_tgt_len);
    detail::check_seq2seq_ablation("Seq2SeqModel.trace: ablate", ablate, config_);
    check_trace_index(call, "layer", layer, encoder ? config_.num_encoder_layers : config_.num_decoder_layers,
                      encoder ? " (the encoder's layers)" : " (the decoder's layers)");
    check_trace_index(call, "head", head, config_.num_heads);
    check_trace_index(call, "query", query, encoder ? source.size() : target.size(),
                      encoder ? " (one per source token)" : " (one per target token)");
    AttentionTrace trace;
    trace.layer = layer;
    trace.head = head;
    trace.query = query;
    // With every attention map, as forward(need_attention) computes them (the streaming pass without them rounds
    // otherwise); the encoder–decoders' maps are small (the dates model's: 66 KB at its longest input).
    run(source, target, true, ablate, &trace, which, call);
    return trace;
}

}  // namespace attnscope
