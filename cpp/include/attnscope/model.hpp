/// Transformer: one loaded model of any family (our own files and Hugging Face checkpoints alike), run by the one
/// forward pass its plan (attnscope/plan.hpp) describes: forward with every attention map, trace of one head at one
/// query, greedy generate (causal models) and translate (encoder–decoders) with key/value caches, and the head
/// interventions (zero and mean ablation, patching). CheckpointLoader streams a Hugging Face checkpoint in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/plan.hpp"
#include "attnscope/safetensors.hpp"  // FileError
#include "attnscope/tensor.hpp"
#include "attnscope/trace.hpp"

namespace attnscope {

/// Heads to switch off in one stack of attention layers: empty (none), or layers × heads flags where flag
/// `layer * heads + head` nonzero replaces that head's context before its layer's output projection.
using HeadMask = std::vector<std::uint8_t>;

/// What an ablated head's context becomes.
enum class Ablation { zero, mean };

/// The attention of a model a trace or a head mask names: the main stack's self-attention (the decoder's in an
/// encoder–decoder, the only one elsewhere), the decoder's cross-attention, the encoder's self-attention.
enum class AttentionKind : std::uint8_t { self, cross, encoder };

/// A model's sizes in one struct, as the JS API's `model.config` shows them: the main stack's (the decoder's in an
/// encoder–decoder) and, for an encoder–decoder, the encoder's. Every layer of a stack has the same heads; where
/// layers differ (windows, rotary bases) the plan says how.
struct ModelConfig {
    std::string family;             ///< config.json's model_type, or our file's kind
    plan::Kind kind = plan::Kind::causal_lm;
    std::size_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0, hidden = 0, intermediate = 0;
    std::size_t vocab = 0, max_positions = 0, type_vocab = 0;
    std::size_t encoder_layers = 0, encoder_heads = 0, source_vocab = 0, max_source_positions = 0;
    bool causal = true, has_lm_head = false, tied = false;
};

/// Largest parameter memory accepted: 4 GiB of WASM memory less 256 MiB for activations and the runtime.
constexpr std::uint64_t max_parameter_bytes = (std::uint64_t(4) << 30) - (std::uint64_t(256) << 20);

/// The memory a load will take, known from the config and the weight files' headers before anything in proportion
/// to the model is allocated.
struct MemoryPlan {
    std::uint64_t parameters = 0;       ///< parameters as held (the packed panels' padding included)
    /// Their bytes: 4 each, but 2 for a matrix (a projection, an MLP's, the head, a tied embedding) whose file tensors
    /// are all BF16 or all F16, kept in 16 bits. Before every header is added (not exact), every matrix in 16 bits.
    std::uint64_t parameter_bytes = 0;
    std::size_t tokens = 0;             ///< the input length the workspace is planned for
    /// One forward pass of `tokens` tokens with every attention map (an encoder–decoder: `tokens` on each side):
    /// the activations, the key/value caches and the outputs it allocates next to the parameters.
    std::uint64_t workspace_bytes = 0;
    bool exact = false;                 ///< every header was read; before, the smallest model the config can mean
    std::uint64_t bytes() const { return parameter_bytes + workspace_bytes; }
};

/// Size limits of a checkpoint's JSON files: far beyond any real one (a config is a few KB, the largest index a few MB).
constexpr std::size_t max_config_bytes = std::size_t(4) << 20;
constexpr std::size_t max_index_bytes = std::size_t(64) << 20;
/// tokenizer.json: the largest real ones (262,144 entries) are about 33 MB.
constexpr std::size_t max_tokenizer_bytes = std::size_t(64) << 20;
/// tokenizer_config.json: a few KB, or some hundred KB with a chat template and the added tokens listed.
constexpr std::size_t max_tokenizer_config_bytes = std::size_t(4) << 20;

/// The size limit of a checkpoint's JSON file `file` (config.json, model.safetensors.index.json, tokenizer.json,
/// tokenizer_config.json); 0 for a file that has none here (a weight file: its header has its own limit).
std::size_t checkpoint_file_limit(const std::string& file);
/// Refuses `file` of `bytes` bytes when they pass its limit: a FileError (range) "<call>: <file>: <bytes> bytes, more
/// than the <limit> …". `complete` false: a file still arriving (no size was sent), of at least `bytes`. The reader
/// asks before it copies the file whole, and again as each part of a file of unknown size arrives.
void check_checkpoint_file_size(const char* call, const std::string& file, std::uint64_t bytes, bool complete);

/// translate()'s steps by default at most: HF's generation configs for translation stop at 512 too.
constexpr std::size_t default_translate_steps = 512;

/// The input length a plan is made for unless the caller names one (capped at the model's positions).
constexpr std::size_t default_plan_tokens = 512;

/// What one forward() of a causal language model keeps for the next call on the same model (forward's second
/// overload): the key/value caches of every layer, the input and options the pass ran with, and its output. A next
/// input that starts with the same tokens (and the same mask and heads switched off) reuses the keys, values, rows of
/// logits, hidden states and attention of that prefix and computes only the positions after it; any other input is
/// one fresh pass, which the cache then keeps. A patched call (Request::patch) of the kept input and options starts at
/// its lowest patched layer, from the kept pass's input to it, and at its first patched position (in whole query
/// blocks), and leaves the kept pass as it was: patching every head, or one head at every position, in turn runs
/// each from its own layer and position. Either way the output is the one a fresh pass gives, bit for bit.
class ForwardCache {
public:
    ForwardCache();
    ~ForwardCache();
    ForwardCache(const ForwardCache&) = delete;
    ForwardCache& operator=(const ForwardCache&) = delete;
    /// The tokens of the pass it holds (0: none yet).
    std::size_t positions() const;
    /// The positions the last call took from it instead of computing them.
    std::size_t reused() const;
    /// The layer the last patched call (or patch_each()'s last run) through it started at (0: from the embeddings,
    /// a fresh pass).
    std::size_t resumed_layer() const;
    /// The position the last patched call (or patch_each()'s last run) through it started at (0: every position
    /// computed). For patch_each()'s batched runs, the first position its last run names, whether or not patching
    /// there changed anything (positions where it changes nothing are skipped); with a mean ablation 0, and where
    /// each run is its own pass, the start of that position's block of 32.
    std::size_t resumed_position() const;
    /// Bytes it holds: the key/value caches (with room for more positions), each layer's input and the last outputs.
    std::uint64_t bytes() const;

    struct State;  // cpp/src/model/incremental.cpp
    std::unique_ptr<State> state;
};

/// Which of the logit lens's layers + 1 rows Transformer::logit_lens computes: first..end − 1, where row l is the
/// stream entering layer l and row `layers` the stream leaving the last. Each row is the same bits as in the whole
/// lens, and costs the head's product alone (a large vocabulary's head is most of the lens: a few rows are that much
/// quicker).
struct LensRows {
    std::size_t first = 0;
    std::optional<std::size_t> end;  ///< none: through the last row
};

class Transformer {
public:
    struct Impl;
    explicit Transformer(std::unique_ptr<Impl> impl);
    ~Transformer();
    Transformer(const Transformer&) = delete;
    Transformer& operator=(const Transformer&) = delete;

    const plan::Plan& plan() const;
    const ModelConfig& config() const;
    /// Bytes the parameters occupy: F32, and the matrices of a BF16 or F16 file in their 16 bits (MemoryPlan).
    std::uint64_t parameter_bytes() const;
    /// The loaded weights and plan (cpp/src/model/pass.hpp): for the core's own code.
    Impl& impl() const { return *impl_; }

    struct Request {
        /// The call the messages name first ("forward"; the bindings pass the JS API's, "LanguageModel.forward").
        const char* call = nullptr;
        std::vector<std::int32_t> tokens;           ///< the input; an encoder–decoder's decoder input (from decoder_start)
        std::vector<std::uint8_t> attention_mask;   ///< HF polarity: 1 real, 0 padding (a key no query sees); empty = all real
        std::vector<std::int32_t> token_type_ids;   ///< token types (models that have them); empty = all 0
        std::vector<std::int32_t> source;           ///< an encoder–decoder's encoder input
        std::vector<std::uint8_t> source_mask;      ///< its padding mask, as attention_mask
        bool need_attention = true;
        HeadMask ablate;                            ///< the main stack's self-attention heads: empty or layers × heads flags
        HeadMask ablate_cross;                      ///< an encoder–decoder's cross-attention heads
        HeadMask ablate_encoder;                    ///< an encoder–decoder's encoder heads
        /// What an ablated head's context becomes: zeros, or its mean over this run's real positions (those whose
        /// mask is 1; every position without a mask).
        Ablation ablation = Ablation::zero;
        /// Keep every head's context of the main stack in Output::heads ([layers, T, heads, head_dim]).
        bool keep_heads = false;
        /// Activation patching: each flagged head's context (layers × heads flags) at every position is taken from
        /// `patch_from` (a kept run's Output::heads of the same T; not owned) instead of being computed.
        HeadMask patch;
        const Tensor* patch_from = nullptr;
        /// The positions at which the flagged heads are patched (each 0 to T − 1); empty: every position. Elsewhere
        /// they compute their own context. A patched call through a ForwardCache starts at the first of them.
        std::vector<std::int32_t> patch_positions;
        /// Logits of the last `logits_to_keep` positions only (Hugging Face's logits_to_keep; 1 to T); 0: every
        /// position's. The head's cost is a vocabulary's row per position, so a caller that reads the last row saves it.
        std::size_t logits_to_keep = 0;
        /// Keep the main stack's residual stream (Output::residual, residual_mid): what research tools read.
        bool keep_residual = false;
        /// Keep every layer's q|k|v projections of the main stack (Output::qkv).
        bool keep_qkv = false;
        /// Return ‖v_j‖ of every position for every query head (Output::value_norms).
        bool value_norms = false;
    };
    struct Output {
        Tensor logits;            ///< [T, vocab] ([logits_to_keep, vocab]: the last rows); empty without an LM head
        Tensor hidden;            ///< [T, d] the main stack's last hidden state (after its final norm when it has one)
        Tensor attention;         ///< [layers, heads, T, T] per query head; empty without need_attention
        Tensor heads;             ///< [layers, T, heads, head_dim] with keep_heads: each head's context (TransformerLens's hook_z)
        Tensor encoder_attention; ///< an encoder–decoder's [encoder layers, heads, S, S]
        Tensor cross_attention;   ///< an encoder–decoder's [layers, heads, T, S]
        /// With keep_residual: [layers + 1, T, d], the main stack's residual stream entering each layer (after its
        /// embeddings and their norm), then leaving the last one (before the final norm): TransformerLens's
        /// hook_resid_pre of each layer, hook_resid_post of the last. After a post-norm, the stream after it.
        Tensor residual;
        /// With keep_residual: [layers, T, d], the stream between each layer's attention and its MLP (hook_resid_mid);
        /// empty for a model whose layers run attention and MLP in parallel, which has no such point.
        Tensor residual_mid;
        /// With keep_qkv: [layers, T, heads·hd + 2·kv_heads·hd], each row q | k | v after the projection and its bias,
        /// before QK-norm and RoPE (TransformerLens's hook_q, hook_k, hook_v; k and v per key/value head).
        Tensor qkv;
        /// With value_norms: [layers, heads, T], ‖v_j‖ of the values each query head reads (its key/value head's).
        Tensor value_norms;
    };
    /// Throws std::invalid_argument naming the call and the field (the JS API's option names: attentionMask,
    /// tokenTypeIds, patchFrom…) for bad tokens, masks, type ids, ablation or patch flags.
    Output forward(const Request& request);
    /// forward() through `cache` (causal language models): the positions its kept pass shares with `request` are
    /// taken from it, the rest computed, and the cache then holds this call's pass. The output stays in the cache
    /// until its next call. Throws as forward() does, and std::invalid_argument for a model that is not a causal
    /// language model or a cache another model filled; a call that throws leaves the cache as it was or empty, never wrong.
    const Output& forward(const Request& request, ForwardCache& cache);

    /// One patched run of patch_each(): a head (a query head of the main stack's self-attention), patched at
    /// `positions` (each 0 to T − 1) or, empty, at every position.
    struct PatchRun {
        std::size_t layer = 0, head = 0;
        std::vector<std::int32_t> positions;
    };
    /// The last position's logits [runs, vocab] of `request` (a causal language model's, with a head) patched by each
    /// run in turn from request.patch_from: row i is forward() of the request with runs[i]'s patch and logits_to_keep
    /// 1, bit for bit. `cache` first takes request's unpatched pass unless it holds it; the runs of each layer then
    /// go through the layers from theirs together (each weight read once for all of them), computing only the rows
    /// a patch changes (at its layer its patched positions, above it the positions from its first, at the last layer
    /// the last row), and the head's product runs once over every run's last row (a 50,257-wide head read once
    /// instead of once per run). With a mean ablation, or a hidden or MLP width the SIMD vectors do not divide, each
    /// run is its own patched pass from its layer and position. Throws as forward() does, naming `options.patches[i]` (the JS
    /// API's names) for a bad run and `options.logitIds[j]` for an id outside the vocabulary, and std::invalid_argument for a request with its own `patch`, no runs, or a model without a head.
    /// With `logit_ids` (token ids, in any order; empty: whole rows), only those logits: [runs, logit_ids.size()],
    /// column j token logit_ids[j]'s, the same bits as in the whole row, and the head computes only the packed
    /// panels that hold them (a logit difference of two tokens: at most 16 of GPT-2's 50,257 columns in the .wasm).
    /// In the batched path (not a mean ablation, nor widths the SIMD vectors do not divide), a position where
    /// request.patch_from holds the head's own context in request's pass, bit for bit (every position before the
    /// first token a clean and a corrupted prompt differ in), changes nothing and is skipped; a run of such
    /// positions alone gives the unpatched pass's logits. Elsewhere it runs: the same bits either way.
    Tensor patch_each(const Request& request, const std::vector<PatchRun>& runs, ForwardCache& cache,
                      const std::vector<std::int32_t>& logit_ids = {});

    /// Greedy continuation of `prompt` (causal models with a head) with a key/value cache: up to `max_new_tokens`
    /// tokens, stopping after `stop_token` when it is ≥ 0 or at max_positions. Returns only the new tokens.
    std::vector<std::int32_t> generate(const std::vector<std::int32_t>& prompt, std::size_t max_new_tokens,
                                       std::int32_t stop_token = -1, const HeadMask& ablate = {},
                                       const char* call = "generate");

    struct Translation {
        std::vector<std::int32_t> tokens;  ///< generated tokens, without the start token, ending with `eos` if produced
        Tensor encoder_attention;          ///< [encoder layers, heads, S, S]
        Tensor decoder_attention;          ///< [layers, heads, N, N], row t = the step producing tokens[t]
        Tensor cross_attention;            ///< [layers, heads, N, S]
    };
    /// Greedy decoding of an encoder–decoder from `start`: the encoder once, its keys and values per layer once, then
    /// one position per step; stops after `eos` or min(max_steps, max_steps_limit()) tokens. The heads of `request`'s
    /// three masks are switched off at every step (its tokens are ignored).
    Translation translate(const std::vector<std::int32_t>& source, std::int32_t start, std::int32_t eos,
                          std::size_t max_steps, const Request& heads);
    Translation translate(const std::vector<std::int32_t>& source, std::int32_t start, std::int32_t eos, std::size_t max_steps);
    /// The bytes generate()'s caches and translate()'s caches and maps may take at most. generate() refuses a
    /// max_new_tokens whose caches need more before decoding; translate() grows its maps with the steps taken and
    /// refuses the step that would pass it, naming maxSteps and how many fit.
    static constexpr std::uint64_t decode_budget_bytes = std::uint64_t(256) << 20;
    /// The most tokens translate() produces: the decoder's positions.
    std::size_t max_steps_limit() const;
    /// translate()'s steps when the caller names none: one short of the decoder's positions, and at most
    /// default_translate_steps (a model that never writes its end token is stopped there, not at 65,536 positions).
    std::size_t default_steps() const;

    /// The numbers of one head at one query of one layer of attention `kind`, recorded by forward() itself.
    /// Throws std::invalid_argument for a layer, head or query out of range.
    AttentionTrace trace(const Request& request, AttentionKind kind, std::size_t layer, std::size_t head, std::size_t query);
    /// trace() through `cache` (a causal language model's self-attention): when the cache holds this request's own
    /// pass (forward(request, cache) with the same tokens, mask and heads switched off), the traced layer starts from
    /// the input that pass kept for it, not from the embeddings; the same numbers, bit for bit. Otherwise a fresh
    /// trace. The cache is left as it was. Throws as trace() does, and std::invalid_argument for another model's cache.
    AttentionTrace trace(const Request& request, AttentionKind kind, std::size_t layer, std::size_t head, std::size_t query,
                         ForwardCache& cache);

    /// The logit lens: the residual stream entering every layer and leaving the last (Output::residual) through the
    /// main stack's final norm and the head, softmaxed; per row, its `k` most probable tokens.
    struct Lens {
        Tensor probabilities;             ///< [rows, T, k], largest first
        std::vector<std::int32_t> ids;    ///< [rows, T, k]
        bool from_cache = false;          ///< the stream was a cache's kept pass: only the head ran
        std::size_t first_row = 0;        ///< the lens row that probabilities' first is (LensRows::first)
    };
    using LensRows = attnscope::LensRows;
    /// Throws std::invalid_argument for a model without a head, k outside 1 to min(vocab, 100), or rows not within
    /// 0..layers + 1 with first < end.
    Lens logit_lens(const Request& request, std::size_t k, LensRows rows = {});
    /// logit_lens() through `cache` (a causal language model's): when the cache holds this request's own pass
    /// (forward(request, cache) with the same tokens, token types, mask, heads switched off and ablation kind, nothing
    /// patched), the stream is
    /// that pass's (each layer's input and the last hidden state) and only the head runs: the same numbers, bit for
    /// bit. Otherwise a fresh pass, as without the cache. The cache is left as it was. Throws as logit_lens() does,
    /// and std::invalid_argument for another model's cache.
    Lens logit_lens(const Request& request, std::size_t k, const ForwardCache& cache, LensRows rows = {});

    /// One head's weights as its QK and OV circuits read them (biases left out), each [d, head_dim]: W_Q, and W_K
    /// and W_V of the key/value head it reads under grouped-query attention (kv_head), and W_Oᵀ, so that
    /// QK = q·kᵀ and OV = v·oᵀ.
    struct HeadWeights {
        std::size_t kv_head = 0;
        Tensor q, k, v, o;
    };
    /// Throws std::invalid_argument for a layer or head out of range.
    HeadWeights head_weights(std::size_t layer, std::size_t head, const char* call = "headWeights") const;

private:
    AttentionTrace trace(const Request& request, AttentionKind kind, std::size_t layer, std::size_t head, std::size_t query,
                         ForwardCache* cache);
    Lens logit_lens(const Request& request, std::size_t k, const ForwardCache* cache, LensRows rows);
    std::unique_ptr<Impl> impl_;
};

/// Streams a Hugging Face checkpoint in: config.json first, the index (if sharded), every file's header, then
/// allocate(), then every file's data section in order, in chunks of any size. Each chunk is widened to F32 and
/// written straight to its final place in the packed layout the kernels read, so nothing holds a whole file or
/// tensor: peak memory is parameter_bytes() + the headers' text + the caller's chunk. Every check that a file can
/// fail (names, shapes, dtypes, offsets against the config) happens before allocate(); every method throws
/// FileError (or std::length_error for sizes that cannot be addressed) naming the file and field, and a loader
/// that threw must be discarded.
class CheckpointLoader {
public:
    /// Parses and checks config.json: the plan from it alone, before anything proportional to it is allocated.
    /// Throws FileError for an unknown model_type or any field that changes the maths in a way not implemented,
    /// and std::length_error when the parameters cannot fit in max_parameter_bytes.
    explicit CheckpointLoader(const std::string& config_json);
    /// The same, with every message starting with `call` (the JS API's name: the bindings pass it).
    CheckpointLoader(const std::string& config_json, const char* call);
    ~CheckpointLoader();
    CheckpointLoader(const CheckpointLoader&) = delete;
    CheckpointLoader& operator=(const CheckpointLoader&) = delete;

    const plan::Plan& plan() const;
    const ModelConfig& config() const;

    /// Optional: model.safetensors.index.json (its weight_map names which shard holds each tensor).
    void set_index(const std::string& index_json);
    /// Reads tensors holding NaN or infinity instead of refusing them (the default refuses, naming the tensor).
    void allow_non_finite(bool allow);
    /// The files to read, in order: the index's shards, or {"model.safetensors"}.
    std::vector<std::string> files() const;
    /// Bytes add_header() needs, from a file's first 8 bytes: 8 + header length.
    static std::size_t needed_header_bytes(const std::string& file_name, const std::uint8_t* first8, std::uint64_t file_size,
                                           const char* call = "loadModel");
    /// The first bytes of `file_name` (`file_size` bytes long): the header length and the whole JSON header. Checks
    /// every tensor's name, dtype, shape and offsets against the plan and the index. Returns where the data starts.
    std::size_t add_header(const std::string& file_name, const std::uint8_t* bytes, std::size_t size, std::uint64_t file_size);
    /// Every parameter's F32 bytes as they will be held (known once the config and headers are read).
    std::uint64_t parameter_bytes() const;
    /// The memory the load and one forward pass of `tokens` tokens (0: default_plan_tokens, capped at the positions)
    /// will take: exact once every header was added; before, the least the config can mean (no optional head), so a
    /// model too large is refused before its headers are read. std::invalid_argument past the positions.
    MemoryPlan memory_plan(std::size_t tokens) const;
    /// After every file's header: every tensor the plan needs is present; allocates the parameters.
    void allocate();
    /// Bytes [offset, offset + size) of `file_name`, in order, without gaps; chunks may split elements.
    void write(const std::string& file_name, std::uint64_t offset, const std::uint8_t* data, std::size_t size);
    /// Every byte of every file arrived: the model.
    std::unique_ptr<Transformer> finish();

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

/// A family of Hugging Face checkpoints read here: config.json's model_type, and the name people know it by.
struct CheckpointFamily {
    std::string model_type, label;
};
/// Every family loadModel reads, in the registry's order (cpp/src/families/registry.cpp: the only list).
std::vector<CheckpointFamily> checkpoint_families();

/// Loads a checkpoint whose files are all in memory: `files` maps file names ("model.safetensors.index.json"
/// optional, as its text) to their bytes. For tests and native use.
std::unique_ptr<Transformer> load_checkpoint(
    const std::string& config_json, const std::map<std::string, std::pair<const std::uint8_t*, std::size_t>>& files);

}  // namespace attnscope
