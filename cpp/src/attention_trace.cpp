// LanguageModel::trace and Seq2SeqModel::trace: their checks, and what they record of one head at one query from
// inside the attention call of the models' own forward pass (residual_attention, run by their run()): its input,
// the layer's own q/k/v projections, the call's weights row and output row. Cold code, built for size: it runs once
// per trace, over one head.
#include <cmath>
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

// Columns [col, col + width) of rows × ld floats, as a [rows, width] tensor.
Tensor columns(const float* data, std::size_t rows, std::size_t ld, std::size_t col, std::size_t width)
{
    Tensor out({rows, width});
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < width; ++c) out.data[r * width + c] = data[r * ld + col + c];
    return out;
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
    trace.layer_input = columns(x, T, d, 0, d);
    trace.attention_input = columns(h, T, d, 0, d);
    if (memory) trace.key_input = columns(memory, S, d, 0, d);

    // q, k and v by the layer's own packed projections, over every row as forward() projects them (a product's
    // rounding may depend on the rows it is blocked with).
    std::vector<float> q = work_floats({T, d}, "trace: q"), k = work_floats({S, d}, "trace: k"), v = k;
    attention.project_query(h, T, q.data());
    attention.project_key_value(kv, kv, S, k.data(), v.data());
    trace.query_raw = columns(q.data() + i * d, 1, d, col, hd);
    trace.query_raw.shape = {hd};
    trace.query_final = columns(q.data() + i * d, 1, d, col, hd);  // no QK-norm or RoPE in these models
    trace.query_final.shape = {hd};
    trace.keys_raw = columns(k.data(), S, d, col, hd);
    trace.keys_final = columns(k.data(), S, d, col, hd);
    trace.values = columns(v.data(), S, d, col, hd);

    trace.scores = Tensor({S});
    trace.visible.assign(S, 1);
    for (std::size_t j = 0; j < S; ++j) {
        double dot = 0;
        for (std::size_t c = 0; c < hd; ++c) dot += double(trace.query_raw.data[c]) * trace.keys_raw.data[j * hd + c];
        trace.scores.data[j] = float(dot);
        if (causal && j > i) trace.visible[j] = 0;
    }
    trace.scale = 1.f / std::sqrt(float(hd));  // MultiHeadAttention's (attend_heads)
    const float* row = weights + (head * T + i) * S;
    trace.weights = Tensor({S}, std::vector<float>(row, row + S));

    // The context, as forward() zeroes it for an ablated head; then the head's share of the output projection.
    trace.context = Tensor({hd});
    if (!(ablate_heads && ablate_heads[head]))
        for (std::size_t c = 0; c < hd; ++c) {
            double sum = 0;
            for (std::size_t j = 0; j < S; ++j) sum += double(row[j]) * trace.values.data[j * hd + c];
            trace.context.data[c] = float(sum);
        }
    trace.head_output = Tensor({d});
    attention.project_head_output(head, trace.context.data.data(), trace.head_output.data.data());
    trace.attention_output = Tensor({d}, std::vector<float>(output + i * d, output + (i + 1) * d));
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
    run(tokens, false, ablate, &trace, call);
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
    run(source, target, false, ablate, &trace, which, call);
    return trace;
}

}  // namespace attnscope
