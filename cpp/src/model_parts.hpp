// The transformer models' internals shared by their source files: parameters, the layers they form, the
// state-dict registry (ModelParts) and the residual steps every model runs. Not public API.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/multihead_attention.hpp"
#include "attnscope/tensor.hpp"
#include "attnscope/trace.hpp"
#include "attnscope/transformer.hpp"
#include "sizes.hpp"

namespace attnscope {
namespace detail {

[[noreturn]] void model_error(const std::string& message);

struct Parameter {
    Shape shape;
    std::vector<float> data;
};

// The layers' bodies live in transformer_layers.cpp, which is built for speed; the models' files are built for
// size, so nothing hot is defined here (an inline body would be compiled -Oz into every caller).
struct Linear {
    std::size_t in = 0, out = 0;
    const Parameter* weight = nullptr;  // [out, in]
    const Parameter* bias = nullptr;    // [out]
    std::vector<float> packed;

    void repack();
    void apply(const float* x, std::size_t rows, float* y) const;
};

struct LayerNorm {
    const Parameter* gamma = nullptr;
    const Parameter* beta = nullptr;
    void apply(const float* x, std::size_t rows, std::size_t d, float* y) const;
};

struct Block {
    LayerNorm ln1, ln2, ln3;                // ln3 only in decoder blocks
    MultiHeadAttention* self_attn = nullptr;
    MultiHeadAttention* cross_attn = nullptr;  // decoder blocks only
    Linear fc1, fc2;
};

// The state-dict registry: every parameter by name, in registration order, and the layers built over them.
struct ModelParts {
    std::map<std::string, Parameter> parameters;
    std::vector<std::string> keys;  // registration order
    std::vector<std::pair<std::string, std::unique_ptr<MultiHeadAttention>>> attentions;  // prefix → layer
    std::vector<Linear*> linears;   // repacked after every load
    // When set, every parameter's shape is checked against it before the parameter is allocated.
    const std::map<std::string, TensorView>* expected = nullptr;

    void expect(const std::string& name, const Shape& shape) const;
    // Reserved to their final size before any block is added: `linears` points into them.
    std::vector<Block> encoder_blocks, decoder_blocks;
    const Parameter *token_embedding = nullptr, *position_embedding = nullptr;          // LM, or the decoder
    const Parameter *source_embedding = nullptr, *source_position_embedding = nullptr;  // Seq2SeqModel encoder
    LayerNorm encoder_norm, final_norm;
    Linear head;

    const Parameter* add(const std::string& name, Shape shape);
    MultiHeadAttention* add_attention(const std::string& prefix, std::size_t d, std::size_t heads);
    LayerNorm add_layer_norm(const std::string& prefix, std::size_t d);
    void add_linear(Linear& linear, const std::string& prefix, std::size_t in, std::size_t out);
    // A Linear whose weight is `weight` ([out, in], registered already: a tied head), with its own bias.
    void add_tied_linear(Linear& linear, const Parameter* weight, const std::string& prefix, std::size_t in, std::size_t out);
    // Encoder/LM blocks have self-attention and an MLP; decoder blocks add cross-attention and ln3.
    void add_blocks(std::vector<Block>& blocks, const std::string& prefix, std::size_t count, bool decoder,
                    std::size_t d, std::size_t heads, std::size_t d_ff);
    // Repacks every Linear (after a build without a state dict; a load repacks anyway).
    void repack_all();
};

// A zeroed work buffer of the product of `factors` floats; std::length_error naming `call` when the size overflows
// size_t or does not fit in the memory left (state_dict_model.cpp).
std::vector<float> work_floats(std::initializer_list<std::size_t> factors, const char* call);

// Config and input checks (state_dict_model.cpp).
void check_sizes(const char* model, std::initializer_list<std::pair<const char*, std::size_t>> sizes, std::size_t d,
                 std::size_t heads);
void check_tokens(const char* what, const std::vector<std::int32_t>& tokens, std::size_t vocab, std::size_t max_len);
// A head mask must be empty or have one flag per head of every layer of its stack.
void check_head_mask(const char* what, const HeadMask& mask, std::size_t layers, std::size_t heads);
// The three masks of an encoder–decoder, each as check_head_mask (seq2seq.cpp).
void check_seq2seq_ablation(const char* what, const Seq2SeqAblation& ablate, const Seq2SeqModelConfig& c);
// Layer `layer`'s flags inside a stack's mask, or null when nothing is ablated.
const std::uint8_t* layer_heads(const HeadMask& mask, std::size_t layer, std::size_t heads);

// The steps of a forward pass (transformer_layers.cpp).

// x[t] = token_embedding[tokens[t]] + position_embedding[first_position + t]
void embed(const Parameter& tokens_table, const Parameter& positions_table, const std::int32_t* tokens,
           std::size_t count, std::size_t first_position, std::size_t d, float* x);
// x += fc2(gelu(fc1(ln(x)))) for `rows` rows; `h` holds rows·d, `u` rows·d_ff.
void residual_mlp(const Block& b, const LayerNorm& ln, float* x, std::size_t rows, std::size_t d, float* h, float* u);
// x += attention(ln(x), memory) over T rows; weights (may be null) [H, T, S]; the heads flagged in
// `ablate_heads` (may be null) are ablated. With `trace` (its layer, head and query set and in range; `weights` then
// not null) the call's numbers of that head and query are recorded into it (record_trace).
void residual_attention(MultiHeadAttention& attention, const LayerNorm& ln, float* x, std::size_t T,
                        const float* memory, std::size_t S, bool causal, std::size_t d, float* h, float* a,
                        float* weights, const std::uint8_t* ablate_heads, AttentionTrace* trace = nullptr);
// x += self_attn(ln1(x)) for the one new position `position`, appending its key and value to the caches;
// the new row's weights [H, position + 1] go to `weights` when it is not null.
void cached_self_attention(const Block& b, float* x, std::size_t d, float* keys, float* values, std::size_t position,
                           float* h, float* a, float* weights, const std::uint8_t* ablate_heads);
// x += a over n floats.
void add_inplace(float* x, std::size_t n, const float* a);
// logits[rows × vocab] = head(final_norm(x)); `h` holds rows·d.
void logits_of(const ModelParts& m, const float* x, std::size_t rows, std::size_t d, float* h, float* logits);
std::int32_t argmax(const float* logits, std::size_t n);
// One block's attention weights inside an [L, H, rows, cols] tensor.
float* layer_slice(Tensor& t, std::size_t layer);

// What trace() records (attention_trace.cpp).

// "<call>: <what>: expected 0 to <count - 1>, got <value>" (std::invalid_argument) when value ≥ count; `whose`, when
// not empty, says whose count it is (" (the decoder's layers)").
void check_trace_index(const char* call, const char* what, std::size_t value, std::size_t count,
                       const char* whose = "");
// Fills `trace` from the attention call residual_attention just made: x [T, d] the layer input, h [T, d] its norm
// (the queries' input), memory [S, d] the keys' and values' input (null: h, self-attention), and the call's own
// weights [H, T, S] and output [T, d]. q, k and v come from the layer's own projections, the weights row from the
// call; the scores, context and head output are computed here from those.
void record_trace(AttentionTrace& trace, const MultiHeadAttention& attention, const float* x, const float* h,
                  std::size_t T, const float* memory, std::size_t S, bool causal, const float* weights,
                  const std::uint8_t* ablate_heads, const float* output);

}  // namespace detail
}  // namespace attnscope
