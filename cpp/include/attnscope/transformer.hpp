/// Our own transformers' C++ API: a decoder-only language model and an encoder–decoder (Seq2SeqModel), in the state-dict
/// layout of tools/train_*.py (see tools/MODEL_FORMAT.md), built from their sizes. Each is a Transformer
/// (attnscope/model.hpp) of its family's plan (cpp/src/families/decoder_lm.cpp, seq2seq.cpp), run by the one forward
/// pass every model runs; this API only adds the state dict and the argument checks of its own calls.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/model.hpp"
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

/// Heads to switch off in an encoder–decoder model, one mask per kind of attention.
struct Seq2SeqAblation {
    HeadMask encoder_self;   ///< num_encoder_layers × num_heads
    HeadMask decoder_self;   ///< num_decoder_layers × num_heads
    HeadMask decoder_cross;  ///< num_decoder_layers × num_heads
};

/// The three kinds of attention of an encoder–decoder model, as Seq2SeqModel::trace() names them.
enum class Seq2SeqAttention { encoder_self, decoder_self, decoder_cross };

/// Strict state-dict loading: the names and shapes a model has, and loading them all at once.
class StateDictModel {
public:
    virtual ~StateDictModel();
    /// Every parameter name, in a stable order.
    virtual std::vector<std::string> state_dict_keys() const = 0;
    /// The shape of `key`; throws std::invalid_argument for a name the model does not have.
    virtual Shape state_dict_shape(const std::string& key) const = 0;
    /// Every key with its shape and no other; checked before anything changes.
    virtual void load_state_dict(const std::map<std::string, TensorView>& state) = 0;
};

/// What the two models below share: a Transformer of one of our families, and its state dict.
class TrainedModel : public StateDictModel {
public:
    ~TrainedModel() override;
    std::vector<std::string> state_dict_keys() const override;
    Shape state_dict_shape(const std::string& key) const override;
    void load_state_dict(const std::map<std::string, TensorView>& state) override;
    /// The model as every other: its plan, forward with the head interventions, trace.
    Transformer& transformer() { return *model_; }
    const Transformer& transformer() const { return *model_; }

protected:
    /// Builds the model of `family` (its plan from the sizes) with zero parameters, or loads `state` (strict), each
    /// tensor's name and shape checked against the plan before the parameters are allocated.
    TrainedModel(const char* family, plan::Plan plan, const std::map<std::string, TensorView>* state);

private:
    const void* family_;  // the family's tensor table (families::Family)
    std::unique_ptr<Transformer> model_;
};

/// A decoder-only transformer language model.
class LanguageModel : public TrainedModel {
public:
    /// Throws std::invalid_argument for zero sizes or d_model not divisible by num_heads. Parameters start at zero.
    explicit LanguageModel(const LanguageModelConfig& config);
    /// Builds the model and loads `state` (strict). Each tensor's shape is checked against `state` before the
    /// parameters are allocated, so a config that does not match the tensors fails having allocated nothing.
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
    /// the numbers of forward() (its weights row bit for bit), recorded by its own pass. Throws
    /// std::invalid_argument for bad tokens or ablation (as forward()) and for a layer, head or query out of range.
    AttentionTrace trace(const std::vector<std::int32_t>& tokens, std::size_t layer, std::size_t head,
                         std::size_t query, const HeadMask& ablate = {});

private:
    LanguageModelConfig config_;
};

/// An encoder–decoder transformer.
class Seq2SeqModel : public TrainedModel {
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

    using Translation = Transformer::Translation;
    /// Greedy decoding with a key/value cache: starts from `bos`, stops after `eos` or min(max_steps,
    /// max_steps_limit()) tokens. The heads in `ablate` are switched off at every step.
    Translation translate(const std::vector<std::int32_t>& source, std::int32_t bos, std::int32_t eos,
                          std::size_t max_steps, const Seq2SeqAblation& ablate = {});
    /// The most tokens translate() produces: max_tgt_len (the last one is chosen from a full decoder and never fed
    /// back). The bindings refuse a larger maxSteps by this number.
    std::size_t max_steps_limit() const { return config_.max_tgt_len; }
    /// Head `head` of layer `layer` of attention `which` at query row `query` (a source position for the encoder's
    /// self-attention, a target position for the decoder's two), teacher-forced on `source` and `target` as
    /// forward() (its weights row bit for bit). The encoder's trace reads no target: `target` may then be empty.
    /// Cross-attention's key_input is the encoder's output [S, d].
    AttentionTrace trace(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
                         Seq2SeqAttention which, std::size_t layer, std::size_t head, std::size_t query,
                         const Seq2SeqAblation& ablate = {});

private:
    Seq2SeqModelConfig config_;
};

}  // namespace attnscope
