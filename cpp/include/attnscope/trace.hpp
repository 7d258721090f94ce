/// AttentionTrace: what trace() shows of one attention head at one query row of one layer, for every model (the
/// trained LanguageModel and Seq2SeqModel, and Hugging Face checkpoints). The numbers are taken from inside the
/// model's own forward pass, so they are the ones forward() computes, not a second copy of the maths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {

/// One head at one query of one layer. T is the number of query rows, S of keys (S = T for self-attention; for
/// cross-attention S is the source length), d the model width.
struct AttentionTrace {
    std::size_t layer = 0, head = 0, query = 0;
    std::size_t kv_head = 0;     ///< the key/value head `head` reads: head / (heads / kv_heads); `head` without GQA
    Tensor layer_input;          ///< [T, d] the residual stream entering the attention sublayer
    Tensor attention_input;      ///< [T, d] what q is projected from (normed; the layer input when post-norm), and k, v in self-attention
    Tensor key_input;            ///< [S, d] what k and v are projected from when that is not attention_input (cross-attention:
                                 ///< the encoder's output); empty in self-attention
    Tensor query_raw;            ///< [head_dim] q after the projection (and bias)
    Tensor query_final;          ///< [head_dim] q after QK-norm and RoPE: what the scores use (= query_raw without them)
    Tensor keys_raw;             ///< [S, head_dim] this kv head's keys after the projection
    Tensor keys_final;           ///< [S, head_dim] after QK-norm and RoPE
    Tensor values;               ///< [S, head_dim]
    Tensor scores;               ///< [S] q·k, before scaling
    float scale = 1.f;           ///< 1/sqrt(head_dim) (and GPT-2's inverse layer scale)
    float softcap = 0.f;         ///< > 0: each scaled score s became softcap·tanh(s / softcap) (attn_logit_softcapping)
    std::vector<std::uint8_t> visible;  ///< [S] 1 = the key is visible to this query (causal, window, padding)
    Tensor weights;              ///< [S] softmax(scores·scale, capped) over the visible keys (0 elsewhere): forward()'s own row
    Tensor context;              ///< [head_dim] weights · values (zeros when the head is ablated)
    Tensor head_output;          ///< [d] the context through this head's slice of the output projection (no bias)
    /// [d] the attention sublayer's output at the query, as forward() adds it to the residual stream: the sum over
    /// heads of head_output, plus the output projection's bias.
    Tensor attention_output;
};

}  // namespace attnscope
