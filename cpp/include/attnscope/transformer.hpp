/// Small pre-LayerNorm transformers built on MultiHeadAttention: a decoder-only language model and an
/// encoder–decoder model (Seq2SeqModel), with every layer's attention weights returned, and greedy decoding with
/// a key/value cache, and trace() of one head at one query. Parameter names follow the PyTorch modules of
/// tools/train_*.py (see tools/MODEL_FORMAT.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/tensor.hpp"
#include "attnscope/trace.hpp"

namespace attnscope {

/// Sizes of a decoder-only language model: token + learned position embeddings, `num_layers` blocks of
/// x += attn(ln1(x)) (causal), x += fc2(gelu(fc1(ln2(x)))), then logits = head(ln_f(x)).
struct LanguageModelConfig {
    std::size_t vocab_size = 0;
    std::size_t max_len = 0;
    std::size_t d_model = 0;
    std::size_t num_heads = 1;
    std::size_t d_ff = 0;
    std::size_t num_layers = 0;
    /// The head's weight is tok_emb.weight (as GPT-2's lm_head is wte): the state dict has head.bias and no
    /// head.weight, and logits = ln_f(x) · tok_emb.weightᵀ + head.bias.
    bool tie_head = false;
};

/// Sizes of an encoder–decoder model. Encoder blocks as LanguageModel's but not causal, then enc_ln_f; decoder
/// blocks x += self_attn(ln1(x)) (causal), x += cross_attn(ln2(x), memory), x += mlp(ln3(x)); logits = head(dec_ln_f(x)).
struct Seq2SeqModelConfig {
    std::size_t src_vocab_size = 0;
    std::size_t tgt_vocab_size = 0;
    std::size_t max_src_len = 0;
    std::size_t max_tgt_len = 0;
    std::size_t d_model = 0;
    std::size_t num_heads = 1;
    std::size_t d_ff = 0;
    std::size_t num_encoder_layers = 0;
    std::size_t num_decoder_layers = 0;
};

/// Heads to switch off in one stack of attention layers: empty (none), or layers × num_heads flags where
/// flag `layer * num_heads + head` nonzero zeroes that head's context before its layer's output projection
/// (see ForwardOptions::ablate_heads). Any other size is std::invalid_argument.
using HeadMask = std::vector<std::uint8_t>;

/// Heads to switch off in an encoder–decoder model, one mask per kind of attention.
struct Seq2SeqAblation {
    HeadMask encoder_self;   ///< num_encoder_layers × num_heads
    HeadMask decoder_self;   ///< num_decoder_layers × num_heads
    HeadMask decoder_cross;  ///< num_decoder_layers × num_heads
};

/// The three kinds of attention of an encoder–decoder model, as Seq2SeqModel::trace() names them.
enum class Seq2SeqAttention { encoder_self, decoder_self, decoder_cross };

namespace detail {
struct ModelParts;
}

/// Strict state-dict loading shared by the models: the names and shapes a model has, and loading them all at once.
class StateDictModel {
public:
    virtual ~StateDictModel();
    /// Every parameter name, in a stable order.
    std::vector<std::string> state_dict_keys() const;
    /// The shape of `key`; throws std::invalid_argument for a name the model does not have.
    Shape state_dict_shape(const std::string& key) const;
    /// Every key with its shape and no other; checked before anything changes.
    void load_state_dict(const std::map<std::string, TensorView>& state);

protected:
    StateDictModel();
    /// Registers the model's parameters (add_parts), each shape checked against `state` first when there is one,
    /// then loads `state`, or packs the zero weights when there is none. For the most-derived constructor's body:
    /// add_parts is virtual.
    void build(const std::map<std::string, TensorView>* state);
    std::unique_ptr<detail::ModelParts> parts_;

private:
    /// The config's checks, then every parameter registered with `m` (ModelParts::add and its kin).
    virtual void add_parts(detail::ModelParts& m) = 0;
};

/// A decoder-only transformer language model.
class LanguageModel : public StateDictModel {
public:
    /// Throws std::invalid_argument for zero sizes or d_model not divisible by num_heads. Parameters start at zero.
    explicit LanguageModel(const LanguageModelConfig& config);
    /// Builds the model and loads `state` (strict). Each parameter's shape is checked against `state` before
    /// it is allocated, so a config that does not match the tensors fails having allocated no more than them.
    LanguageModel(const LanguageModelConfig& config, const std::map<std::string, TensorView>& state);
    const LanguageModelConfig& config() const { return config_; }

    struct Output {
        Tensor logits;     ///< [T, vocab_size]
        Tensor attention;  ///< [num_layers, num_heads, T, T]; empty without need_attention
    };
    /// Every position's logits for `tokens` (1 ≤ T ≤ max_len, ids < vocab_size), with the heads in `ablate`
    /// switched off.
    Output forward(const std::vector<std::int32_t>& tokens, bool need_attention = true, const HeadMask& ablate = {});
    /// Greedy continuation of `prompt` by up to `max_new_tokens` tokens with a key/value cache, stopping after
    /// `stop_token` when it is ≥ 0 or at max_len, with the heads in `ablate` switched off at every step.
    /// Returns only the new tokens.
    std::vector<std::int32_t> generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                       std::int32_t stop_token = -1, const HeadMask& ablate = {});
    /// Head `head` of layer `layer` at query position `query` on `tokens`, with the heads in `ablate` switched off:
    /// the numbers of forward() with need_attention (its weights row bit for bit), recorded by its own attention
    /// call. Throws std::invalid_argument for bad tokens or ablation (as forward()) and for a layer, head or query
    /// out of range.
    AttentionTrace trace(const std::vector<std::int32_t>& tokens, std::size_t layer, std::size_t head,
                         std::size_t query, const HeadMask& ablate = {});

private:
    void add_parts(detail::ModelParts& m) override;
    // forward() and trace() (which asks for every map, so the weights are those of forward() with need_attention):
    // with a trace the pass stops after the traced layer.
    Output run(const std::vector<std::int32_t>& tokens, bool need_attention, const HeadMask& ablate,
               AttentionTrace* trace, const char* call);
    LanguageModelConfig config_;
};

// Declared as LanguageModel is (constructors, config(), Output): each model's own API, not logic to share.
/// An encoder–decoder transformer.
class Seq2SeqModel : public StateDictModel {
public:
    explicit Seq2SeqModel(const Seq2SeqModelConfig& config);
    /// As LanguageModel's: shapes checked against `state` before anything is allocated, then loaded.
    Seq2SeqModel(const Seq2SeqModelConfig& config, const std::map<std::string, TensorView>& state);
    const Seq2SeqModelConfig& config() const { return config_; }

    struct Output {
        Tensor logits;             ///< [T, tgt_vocab_size]
        Tensor encoder_attention;  ///< [num_encoder_layers, num_heads, S, S]
        Tensor decoder_attention;  ///< [num_decoder_layers, num_heads, T, T]
        Tensor cross_attention;    ///< [num_decoder_layers, num_heads, T, S]
    };
    /// Teacher-forced pass: `target` is the decoder input (starting with BOS). Attention tensors are empty
    /// without need_attention. The heads in `ablate` are switched off.
    Output forward(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                   bool need_attention = true, const Seq2SeqAblation& ablate = {});

    struct Translation {
        std::vector<std::int32_t> tokens;  ///< generated tokens, without BOS, ending with EOS if it was produced
        Tensor encoder_attention;          ///< [num_encoder_layers, num_heads, S, S]
        Tensor decoder_attention;          ///< [num_decoder_layers, num_heads, N, N], row t = the step producing tokens[t]
        Tensor cross_attention;            ///< [num_decoder_layers, num_heads, N, S], N = tokens.size()
    };
    /// Greedy decoding with a key/value cache: starts from `bos`, stops after `eos` or min(max_steps,
    /// max_steps_limit()) tokens. The heads in `ablate` are switched off at every step.
    Translation translate(const std::vector<std::int32_t>& source, std::int32_t bos, std::int32_t eos,
                          std::size_t max_steps, const Seq2SeqAblation& ablate = {});
    /// The most tokens translate() produces: max_tgt_len (the last one is chosen from a full decoder and never fed
    /// back). The bindings refuse a larger maxSteps by this number.
    std::size_t max_steps_limit() const { return config_.max_tgt_len; }
    /// Head `head` of layer `layer` of attention `which` at query row `query` (a source position for the encoder's
    /// self-attention, a target position for the decoder's two), teacher-forced on `source` and `target` as
    /// forward() with need_attention (its weights row bit for bit). The encoder's trace reads no target: `target`
    /// may then be empty. Cross-attention's key_input is the encoder's output [S, d]. Throws std::invalid_argument
    /// for bad tokens or ablation (as forward()) and for a layer, head or query out of range.
    AttentionTrace trace(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                         Seq2SeqAttention which, std::size_t layer, std::size_t head, std::size_t query,
                         const Seq2SeqAblation& ablate = {});

private:
    void add_parts(detail::ModelParts& m) override;
    // forward() and trace() (`which` then names the traced attention; trace() asks for every map, so the weights are
    // those of forward() with need_attention): with a trace the pass stops after the traced attention.
    Output run(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target, bool need_attention,
               const Seq2SeqAblation& ablate, AttentionTrace* trace, Seq2SeqAttention which, const char* call);
    Seq2SeqModelConfig config_;
};

}  // namespace attnscope
