/// Hugging Face checkpoints (config.json + safetensors, one file or shards + model.safetensors.index.json) of the
/// gpt2, bert, llama, mistral, qwen2 and qwen3 families, run by one transformer whose parts each family's adapter
/// picks: the norm, the positions, the attention kind and the MLP. Loading streams: each file arrives in chunks that
/// are widened (F16/BF16 → F32) straight into the layout the kernels use, so memory peaks at about the parameters'
/// F32 bytes (see PretrainedLoader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/safetensors.hpp"  // FileError
#include "attnscope/tensor.hpp"
#include "attnscope/trace.hpp"
#include "attnscope/transformer.hpp"  // HeadMask

namespace attnscope {

/// The model families read (config.json's `model_type`).
enum class PretrainedFamily { gpt2, bert, llama, mistral, qwen2, qwen3 };
/// "gpt2", "bert", ... as in config.json.
const char* to_string(PretrainedFamily family);

enum class NormKind { layer_norm, rms_norm };
enum class PositionKind { learned, rope };
enum class MlpKind { gelu_tanh, gelu_erf, swiglu };
/// rope_scaling's type: none (null or "default"), "linear", "llama3".
enum class RopeScaling { none, linear, llama3 };

/// Rotary positions (rotate_half convention, as HF's apply_rotary_pos_emb).
struct RopeConfig {
    double theta = 10000.0;                      ///< rope_theta
    RopeScaling scaling = RopeScaling::none;
    double factor = 1.0;                         ///< linear and llama3
    double low_freq_factor = 1.0;                ///< llama3
    double high_freq_factor = 4.0;               ///< llama3
    std::size_t original_max_positions = 8192;   ///< llama3: original_max_position_embeddings
};

/// A checkpoint's architecture in our terms, read and checked from config.json (every field's type and range).
struct PretrainedConfig {
    PretrainedFamily family = PretrainedFamily::gpt2;
    std::size_t layers = 0;
    std::size_t heads = 0;            ///< query heads
    std::size_t kv_heads = 0;         ///< key/value heads: == heads (MHA), 1 (MQA), a divisor (GQA)
    std::size_t head_dim = 0;
    std::size_t hidden = 0;           ///< d_model
    std::size_t intermediate = 0;     ///< the MLP's inner width
    std::size_t vocab = 0;
    std::size_t max_positions = 0;    ///< longest input accepted (learned tables: their length)
    std::size_t type_vocab = 0;       ///< BERT token types; 0 elsewhere
    NormKind norm = NormKind::layer_norm;
    float norm_eps = 1e-5f;
    bool post_norm = false;           ///< BERT: x = norm(x + sublayer(x)), with a norm after the embeddings
    PositionKind positions = PositionKind::learned;
    RopeConfig rope;                  ///< when positions == rope
    MlpKind mlp = MlpKind::gelu_tanh;
    bool qkv_bias = false;            ///< q, k and v projections have biases
    bool out_bias = false;            ///< the attention's output projection has a bias
    bool mlp_bias = false;
    bool qk_norm = false;             ///< Qwen3: RMSNorm over head_dim on every q and k head, before RoPE
    bool inverse_layer_scale = false; ///< GPT-2's scale_attn_by_inverse_layer_idx: layer l's scores also / (l + 1)
    std::vector<std::size_t> window;  ///< per layer: keys a query sees (itself included), 0 = all
    bool causal = true;               ///< false for BERT
    /// Logits are produced: the file holds the head (lm_head.weight, BERT's cls.predictions.*), or it is tied and the
    /// file is a task model's (its names carry transformer., model.); a base model's file (GPT2Model) gives hidden only.
    bool has_lm_head = false;
    bool tied = false;                ///< the LM head is the token embedding (one copy of it)
};

/// Largest parameter memory accepted: 4 GiB of WASM memory less 256 MiB for activations and the runtime.
constexpr std::uint64_t max_pretrained_parameter_bytes = (std::uint64_t(4) << 30) - (std::uint64_t(256) << 20);

/// The memory a load will take, known from config.json and the weight files' headers before anything in proportion
/// to the model is allocated (PretrainedLoader::plan).
struct PretrainedPlan {
    std::uint64_t parameters = 0;       ///< floats the parameters take as held (the packed panels' padding included)
    std::uint64_t parameter_bytes = 0;  ///< the same as F32
    std::size_t tokens = 0;             ///< the input length the workspace is planned for
    /// One forward pass of `tokens` tokens with every attention map: the activations, the key/value caches and the
    /// outputs (hidden, logits, attention) it allocates next to the parameters.
    std::uint64_t workspace_bytes = 0;
    bool exact = false;                 ///< every header was read; before, the smallest model the config can mean
    std::uint64_t bytes() const { return parameter_bytes + workspace_bytes; }
};

/// The input length a plan is made for unless the caller names one (capped at the model's max_positions): the
/// 512 tokens issue #22's demo is measured at.
constexpr std::size_t default_plan_tokens = 512;

/// What Request::ablate does to a flagged head's context (see Request::ablation).
enum class Ablation { zero, mean };

/// The trace of a checkpoint: the one struct of every model (attnscope/trace.hpp).
using PretrainedTrace = AttentionTrace;

/// A loaded checkpoint.
class PretrainedModel {
public:
    struct Impl;
    explicit PretrainedModel(std::unique_ptr<Impl> impl);
    ~PretrainedModel();
    PretrainedModel(const PretrainedModel&) = delete;
    PretrainedModel& operator=(const PretrainedModel&) = delete;

    const PretrainedConfig& config() const;

    struct Request {
        std::vector<std::int32_t> tokens;           ///< 1 ≤ T ≤ max_positions, each < vocab
        std::vector<std::uint8_t> attention_mask;   ///< HF polarity: 1 real, 0 padding (a key no query sees); empty = all real
        std::vector<std::int32_t> token_type_ids;   ///< BERT only; empty = all 0
        bool need_attention = true;
        HeadMask ablate;                            ///< empty, or layers × heads flags (as transformer.hpp)
        /// What an ablated head's context becomes: zeros, or its mean over this run's real positions (those whose
        /// attention_mask is 1; every position without a mask). The same run's mean needs no second input, and it
        /// is what a reference distribution gives when that is the run itself; to ablate towards another run's
        /// mean, keep that run's heads and patch them in (patch_from).
        Ablation ablation = Ablation::zero;
        /// Keep every head's context in Output::heads ([layers, T, heads, head_dim]) for a later run to patch from.
        bool keep_heads = false;
        /// Activation patching: for each flagged head (layers × heads flags, as `ablate`), its context at every
        /// position is taken from `patch_from` instead of being computed here. Empty: nothing is patched.
        HeadMask patch;
        /// A kept run's Output::heads, [layers, T, heads, head_dim] with this request's T. Not owned: the caller
        /// keeps it alive for the call. Ignored when `patch` is empty.
        const Tensor* patch_from = nullptr;
    };
    struct Output {
        Tensor logits;     ///< [T, vocab]; empty without an LM head
        Tensor hidden;     ///< [T, d] the last hidden state as HF returns it (after the final norm when there is one)
        Tensor attention;  ///< [layers, heads, T, T] per query head; empty without need_attention
        /// [layers, T, heads, head_dim] with keep_heads, else empty: each head's context, softmax(q·kᵀ)·v, after
        /// ablation and patching, before the output projection (TransformerLens's hook_z). The context rather than
        /// its [T, d] contribution through the projection: it is what patching replaces, head_dim/d of the size,
        /// and the projection is linear, so patching one is patching the other.
        Tensor heads;
    };
    /// Throws std::invalid_argument naming the field for bad tokens, masks, type ids, ablation or patch flags, and
    /// for a patch_from that is missing or of another shape (another length of run, another model).
    Output forward(const Request& request);

    /// Greedy continuation of `prompt` (causal models only) with a key/value cache, so each new token costs O(T):
    /// up to `max_new_tokens` tokens, stopping after `stop_token` when it is ≥ 0 or at max_positions. Returns only
    /// the new tokens.
    std::vector<std::int32_t> generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                       std::int32_t stop_token = -1, const HeadMask& ablate = {});

    /// The numbers of one head at one query of one layer, recorded by forward() itself. Throws
    /// std::invalid_argument for a layer, head or query out of range.
    PretrainedTrace trace(const Request& request, std::size_t layer, std::size_t head, std::size_t query);

    /// F32 bytes the parameters occupy.
    std::uint64_t parameter_bytes() const;

private:
    std::unique_ptr<Impl> impl_;
};

/// Streams a checkpoint in: config.json first, the index (if sharded), every file's header, then allocate(), then
/// every file's data section in order, in chunks of any size. Each chunk is widened to F32 and written straight to
/// its final place in the packed layout the kernels read (a tied embedding is held once, serving the lookup and the
/// LM head), so nothing holds a whole file or tensor: peak memory is parameter_bytes() (the packed panels' padding
/// included) + the headers' text + the caller's chunk. Every check that a file can fail (names, shapes, dtypes,
/// offsets against the config) happens before allocate(); every method throws FileError (or std::length_error for
/// sizes that cannot be addressed) naming the call, file and field, and a loader that threw must be discarded.
class PretrainedLoader {
public:
    /// Parses and checks config.json. Throws FileError for an unknown model_type or any field that changes the
    /// maths in a way not implemented, and std::length_error when the parameters cannot fit in
    /// max_pretrained_parameter_bytes.
    explicit PretrainedLoader(const std::string& config_json);
    ~PretrainedLoader();
    PretrainedLoader(const PretrainedLoader&) = delete;
    PretrainedLoader& operator=(const PretrainedLoader&) = delete;

    const PretrainedConfig& config() const;

    /// Optional: model.safetensors.index.json (its weight_map names which shard holds each tensor).
    void set_index(const std::string& index_json);
    /// The files to read, in order: the index's shards, or {"model.safetensors"}.
    std::vector<std::string> files() const;

    /// The first bytes of file `file_name` (`file_size` bytes long): the 8-byte header length and the whole JSON
    /// header (size ≥ needed_header_bytes(); more is ignored). Checks every tensor's name, dtype, shape and offsets
    /// against the config and the index. Returns where the data section starts (8 + header length).
    std::size_t add_header(const std::string& file_name, const std::uint8_t* bytes, std::size_t size,
                           std::uint64_t file_size);
    /// Bytes add_header() needs, from a file's first 8 bytes: 8 + header length (FileError past the file's end or
    /// the header size limit).
    static std::size_t needed_header_bytes(const std::uint8_t* first8, std::uint64_t file_size);

    /// Every parameter's F32 bytes as they will be held (known once the config and headers are read).
    std::uint64_t parameter_bytes() const;
    /// The memory the load and one forward pass of `tokens` tokens (0: default_plan_tokens, capped at
    /// max_positions) will take. Exact once every file's header was added; before, from config.json alone, the
    /// least the config can mean (no optional head), so that a model too large is refused before its headers are
    /// read. std::invalid_argument when `tokens` exceeds max_positions.
    PretrainedPlan plan(std::size_t tokens) const;
    /// After every file's header: every tensor the config needs is present (FileError naming the first missing
    /// one otherwise); allocates the parameters.
    void allocate();
    /// Bytes [offset, offset + size) of `file_name`: offsets are the file's own, the first write starts at its data
    /// section, each write continues where the previous ended (FileError otherwise). Chunks may split elements.
    void write(const std::string& file_name, std::uint64_t offset, const std::uint8_t* data, std::size_t size);
    /// Every byte of every file arrived (FileError naming the first incomplete file otherwise): the model.
    std::unique_ptr<PretrainedModel> finish();

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

/// Loads a checkpoint whose files are all in memory: `files` maps file names ("config.json" excluded;
/// "model.safetensors.index.json" optional, as its text) to their bytes. For tests and native use.
std::unique_ptr<PretrainedModel> load_pretrained(
    const std::string& config_json, const std::map<std::string, std::pair<const std::uint8_t*, std::size_t>>& files);

}  // namespace attnscope
