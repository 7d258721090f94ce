/// A GRU encoder–decoder (RnnSeq2SeqModel), the model attention was invented for: the decoder starts from the
/// encoder's final state, the fixed context vector, and with `attention = dot` also looks back at every encoder
/// state at each step (Luong's global attention, dot score: the decoder state is the query, the encoder states
/// are the keys and the values). Parameter names and equations are tools/training/rnn_nets.py's (PyTorch's nn.GRU).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/tensor.hpp"
#include "attnscope/transformer.hpp"  // StateDictModel

namespace attnscope {

namespace detail {
struct RnnLayers;
struct ParameterRegistry;
}

/// What the decoder sees of the source besides its first state.
enum class RnnAttention { none, dot };

/// Sizes of an RnnSeq2SeqModel: one GRU layer on each side over embeddings of `embedding_dim`, then
/// logits = out(tanh(combine(h))) (none) or out(tanh(combine([context; h]))) (dot).
struct RnnSeq2SeqConfig {
    std::size_t src_vocab_size = 0;
    std::size_t tgt_vocab_size = 0;
    std::size_t embedding_dim = 0;
    std::size_t hidden_size = 0;
    std::size_t max_src_len = 0;  ///< the longest source accepted (a GRU has no positions; this bounds the input)
    std::size_t max_tgt_len = 0;  ///< BOS + output: at most max_tgt_len − 1 tokens are generated
    RnnAttention attention = RnnAttention::none;
};

class RnnSeq2SeqModel : public StateDictModel {
public:
    /// Throws std::invalid_argument for zero sizes or max_tgt_len < 2. Parameters start at zero.
    explicit RnnSeq2SeqModel(const RnnSeq2SeqConfig& config);
    ~RnnSeq2SeqModel() override;
    /// Builds the model and loads `state` (strict); each parameter's shape is checked against `state` before it is
    /// allocated.
    RnnSeq2SeqModel(const RnnSeq2SeqConfig& config, const std::map<std::string, TensorView>& state);
    const RnnSeq2SeqConfig& config() const { return config_; }

    struct Output {
        Tensor logits;     ///< [T, tgt_vocab_size]
        Tensor attention;  ///< [T, S] (dot); empty for none
    };
    /// Teacher-forced pass: `target` is the decoder input (starting with BOS), 1 ≤ T ≤ max_tgt_len; the source
    /// has 1 to max_src_len ids.
    Output forward(const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target);

    struct Translation {
        std::vector<std::int32_t> tokens;  ///< without BOS, ending with EOS if it was produced
        std::vector<float> context;        ///< [hidden]: the encoder's final state, all the "none" decoder sees
        Tensor encoder_states;             ///< [S, hidden]: the keys and values of the dot attention
        Tensor decoder_states;             ///< [N, hidden]: the state (the query) of the step producing tokens[t]
        Tensor attention;                  ///< [N, S] (dot); empty for none
    };
    /// Greedy decoding from `bos` until `eos` or min(max_steps, max_steps_limit()) tokens; the buffers grow with
    /// the steps taken.
    Translation translate(const std::vector<std::int32_t>& source, std::int32_t bos, std::int32_t eos,
                          std::size_t max_steps);
    /// The most tokens translate() produces: max_tgt_len − 1, the positions after `bos` (the bindings refuse a
    /// larger maxSteps by this number).
    std::size_t max_steps_limit() const { return config_.max_tgt_len - 1; }

    std::vector<std::string> state_dict_keys() const override;
    Shape state_dict_shape(const std::string& key) const override;
    void load_state_dict(const std::map<std::string, TensorView>& state) override;

private:
    // Registers every parameter (each shape checked against `state` first when there is one), then loads `state`, or
    // packs the zero weights when there is none.
    void build(const std::map<std::string, TensorView>* state);
    RnnSeq2SeqConfig config_;
    std::unique_ptr<detail::ParameterRegistry> parts_;
    std::unique_ptr<detail::RnnLayers> layers_;  // the Linears over parts_' parameters
};

}  // namespace attnscope
