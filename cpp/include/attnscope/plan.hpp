/// The layer plan: what a model is made of, and what the one forward pass interprets, for every model. A family
/// (cpp/src/families/) turns its config into a Plan of parts: per stack an embedding, layers of norms, attention and
/// MLP, a final norm; and the head. The weights, the workspace and the memory plan all follow from it, so a feature a
/// family asks for is a part written once, never an `if` on the family.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {
namespace plan {

enum class NormKind : std::uint8_t { none, layer_norm, rms_norm };

/// A norm over one row of features: LayerNorm (mean and biased variance, optional bias) or RMSNorm.
struct Norm {
    NormKind kind = NormKind::none;
    bool bias = false;         ///< LayerNorm's bias (an RMSNorm never has one)
    float eps = 1e-5f;
    /// Added to the stored weight once, at load: a norm that multiplies by (1 + w), which HF computes in float32 as
    /// this does, so folding it in gives the same bits.
    float weight_offset = 0.f;
    bool present() const { return kind != NormKind::none; }
};

/// The MLP's activation (HF's ACT2FN names: gelu → gelu_erf; gelu_new, gelu_pytorch_tanh → gelu_tanh; relu;
/// silu, swish → silu).
enum class Activation : std::uint8_t { gelu_erf, gelu_tanh, relu, silu };

/// How positions enter a stack.
enum class Positions : std::uint8_t {
    none,        ///< nothing (or only the attention's relative bias)
    learned,     ///< a table added to the embeddings (from a row offset in some families)
    sinusoidal,  ///< a fixed table of sines and cosines, computed at load and never stored
    rope,        ///< rotary, per layer in the attention (Attention::rope)
};

enum class RopeScaling : std::uint8_t { none, linear, llama3, longrope };

/// Rotary positions (HF's modeling_rope_utils.py and apply_rotary_pos_emb): the first `dims` features of each head
/// rotate, feature i paired with i + dims/2 (rotate_half); the rest pass through (partial rotary).
struct Rope {
    double theta = 10000.0;                      ///< rope_theta (base)
    std::size_t dims = 0;                        ///< rotated features per head (even; head_dim unless partial)
    RopeScaling scaling = RopeScaling::none;
    double factor = 1.0;                         ///< linear, llama3, longrope
    double low_freq_factor = 1.0;                ///< llama3
    double high_freq_factor = 4.0;               ///< llama3
    std::size_t original_max_positions = 0;      ///< llama3, longrope
    /// longrope: per-frequency divisors, dims/2 each; the long ones are used once an input is longer than
    /// original_max_positions; cos and sin are multiplied by `attention_factor`.
    std::vector<double> short_factor, long_factor;
    double attention_factor = 1.0;
};

enum class QkNorm : std::uint8_t {
    none,
    per_head,  ///< an RMSNorm over head_dim on every q and k head
    whole,     ///< an RMSNorm over all of q's heads and all of k's
};

/// One attention sublayer: self-attention, or cross-attention over the encoder's output.
struct Attention {
    std::size_t heads = 0, kv_heads = 0, head_dim = 0;
    std::size_t input_width = 0;      ///< features k and v are projected from (the model width, or the encoder's)
    float scale = 1.f;                ///< multiplies q·k (1/√head_dim, or the family's own)
    float softcap = 0.f;              ///< > 0: scores become softcap·tanh(scores/softcap) before the mask
    bool causal = false;
    std::size_t window = 0;           ///< keys a query sees, itself included (sliding window); 0: all
    QkNorm qk_norm = QkNorm::none;
    float qk_norm_eps = 1e-6f;
    float qk_norm_offset = 0.f;       ///< as Norm::weight_offset
    bool rope = false;
    Rope rotary;                      ///< when rope
    bool relative_bias = false;       ///< the stack's bucketed relative-position bias is added to the scores
    bool qkv_bias = false, out_bias = false;
    std::size_t q_width() const { return heads * head_dim; }
    std::size_t kv_width() const { return kv_heads * head_dim; }
};

struct Mlp {
    bool gated = false;               ///< act(gate(x))·up(x) (SwiGLU, GeGLU); else act(up(x))
    Activation activation = Activation::gelu_erf;
    std::size_t inner = 0;
    bool bias = false;
};

/// A sublayer's norms: `in` on its input (pre-norm), `out` on its output before the residual sum (a sandwich, or
/// output norms alone), `after` on the residual sum (post-norm).
struct Norms {
    Norm in, out, after;
};

/// One layer. Sequential: x = x + attn(x); [x = x + cross(x, memory);] x = x + mlp(x), each sublayer wrapped in its
/// norms. Parallel: x = x + attn(in(x)) + mlp(mlp_in(x)), both read the same x.
struct Layer {
    Norms attn_norms;
    Attention self;
    bool has_cross = false;
    Norms cross_norms;
    Attention cross;
    Norms mlp_norms;
    Mlp mlp;
    bool parallel = false;
};

/// Relative-position buckets (HF's T5Attention._relative_position_bucket): the table is layer 0's, shared by every
/// layer of the stack.
struct RelativeBias {
    std::size_t buckets = 0, max_distance = 0;
    bool bidirectional = false;       ///< the encoder's; the decoder's is causal
};

struct Embedding {
    std::size_t vocab = 0, width = 0;
    /// Which token table: stacks that share one (an encoder–decoder's `shared`) give the same number.
    std::size_t table = 0;
    float scale = 1.f;                ///< multiplies the token embedding (√width in some families; rounded to float32)
    Positions positions = Positions::none;
    std::size_t position_rows = 0;    ///< learned or sinusoidal table rows
    std::size_t position_offset = 0;  ///< the learned table's row of position 0
    std::size_t type_vocab = 0;       ///< token types (sentence A and B)
    Norm norm;                        ///< on the embeddings' sum
};

/// One stack of layers over one sequence: the model itself, or an encoder or a decoder.
struct Stack {
    Embedding embedding;
    /// The kinds of layer this stack has (one, or sliding-window and global ones), and each layer's
    /// kind. Built only after the sizes passed the limits (limits.hpp), so a config cannot make them large.
    std::vector<Layer> kinds;
    std::vector<std::uint32_t> kind_of;
    Norm final_norm;
    RelativeBias relative;
    std::size_t max_positions = 0;    ///< longest input
    std::size_t layers() const { return kind_of.size(); }
    const Layer& layer(std::size_t l) const { return kinds[kind_of[l]]; }
    std::size_t width() const { return embedding.width; }
};

struct Head {
    /// Logits are produced. From config alone a family says whether it can have one; the files decide (a base
    /// model's checkpoint has none).
    bool present = false;
    bool tied = false;                ///< the head's weight is the main stack's token table, held once
    bool bias = false;                ///< the logits' bias (final_logits_bias, an MLM decoder's bias, our head.bias)
    float input_scale = 1.f;          ///< multiplies the head's input (d_model^-½ for some tied heads)
    float softcap = 0.f;              ///< > 0: logits become softcap·tanh(logits/softcap)
    bool mlm_transform = false;       ///< a masked-LM transform (dense, activation, LayerNorm) before the decoder
    Activation mlm_activation = Activation::gelu_erf;
    Norm mlm_norm;
    std::size_t vocab = 0;
};

enum class Kind : std::uint8_t {
    causal_lm,  ///< one causal stack
    encoder,    ///< one bidirectional stack
    seq2seq,    ///< an encoder and a decoder with cross-attention
};

struct Plan {
    std::string family;               ///< config.json's model_type, or our file's kind
    Kind kind = Kind::causal_lm;
    std::vector<Stack> stacks;        ///< seq2seq: {encoder, decoder}; else the one stack
    Head head;
    std::int32_t decoder_start = -1;  ///< seq2seq: the decoder's first input (decoder_start_token_id)
    std::int32_t eos = -1;            ///< seq2seq: where translate() stops (eos_token_id)
    const Stack& main() const { return stacks.back(); }
    bool seq2seq() const { return kind == Kind::seq2seq; }
};

}  // namespace plan
}  // namespace attnscope
