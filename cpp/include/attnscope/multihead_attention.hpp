/// Multi-head attention with learned projections, with torch.nn.MultiheadAttention's
/// semantics (batch_first=True) and its state-dict names.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnscope/attention.hpp"
#include "attnscope/tensor.hpp"

namespace attnscope {

/// Sizes and initialisation of a MultiHeadAttention layer.
struct MultiHeadAttentionConfig {
    std::size_t embed_dim = 0;
    std::size_t num_heads = 1;
    std::size_t kdim = 0;  ///< key feature size; 0 means embed_dim
    std::size_t vdim = 0;  ///< value feature size; 0 means embed_dim
    bool bias = true;
    std::uint64_t seed = 0;  ///< seeds the Xavier-uniform initialisation of the projections
};

/// Options of MultiHeadAttention::forward().
struct ForwardOptions {
    /// `[batch, key_len]` (or `[key_len]` for unbatched input). Boolean: nonzero = ignore that key.
    /// Additive: added to that key's scores.
    MaskView key_padding_mask;
    /// `[query_len, key_len]` or `[batch * num_heads, query_len, key_len]`.
    /// Boolean: nonzero = blocked. Additive: added to the scaled scores.
    MaskView attn_mask;
    /// Blocks key j for query i when j > i. Combines with the masks above.
    bool causal = false;
    /// false: no weights are returned and none are stored beyond one head's scores at a time.
    bool need_weights = true;
    /// true: weights averaged over heads `[batch, query_len, key_len]`;
    /// false: per head `[batch, num_heads, query_len, key_len]`.
    bool average_weights = false;
    /// Head ablation: null, or `num_heads` flags; a nonzero flag switches that head off by zeroing its context
    /// (softmax(QKᵀ)·V) before the output projection, for every batch item. Its weights are still computed and
    /// returned, so a view shows where the silenced head looked.
    const std::uint8_t* ablate_heads = nullptr;
};

/// Sizes of one forward call, in the batched layout.
struct ForwardDims {
    std::size_t batch = 1;
    std::size_t query_len = 0;
    std::size_t key_len = 0;
};

/// Multi-head attention:
///   Q = Xq·Wqᵀ + bq, K = Xk·Wkᵀ + bk, V = Xv·Wvᵀ + bv, split into heads of head_dim = embed_dim / num_heads,
///   per head softmax(Q_h·K_hᵀ/√head_dim + mask)·V_h, heads concatenated, output = concat·Woᵀ + bo.
/// A query row whose keys are all masked (for a head) gets zero weights and a zero context for that head,
/// so with every head masked its output row is exactly out_proj.bias — never NaN.
///
/// Not thread-safe: forward() reuses an internal workspace. Use one instance per thread. forward() itself runs on
/// as many threads as set_num_threads() allows (attnscope/threads.hpp), with bit-identical results.
class MultiHeadAttention {
public:
    /// Throws std::invalid_argument for zero sizes or embed_dim not divisible by num_heads, std::length_error
    /// when the parameters do not fit in memory.
    explicit MultiHeadAttention(const MultiHeadAttentionConfig& config);

    /// Bytes a layer of this configuration holds for its parameters (PyTorch's plus their packed copies),
    /// so a caller can refuse a size before constructing. Throws as the constructor does for bad sizes.
    static std::size_t parameter_bytes(const MultiHeadAttentionConfig& config);

    std::size_t embed_dim() const { return embed_dim_; }
    std::size_t num_heads() const { return num_heads_; }
    std::size_t head_dim() const { return embed_dim_ / num_heads_; }
    std::size_t kdim() const { return kdim_; }
    std::size_t vdim() const { return vdim_; }
    bool has_bias() const { return bias_; }
    /// True when kdim == vdim == embed_dim: the q/k/v projections live in one `in_proj_weight`, as in PyTorch.
    bool packed_in_proj() const { return kdim_ == embed_dim_ && vdim_ == embed_dim_; }

    /// PyTorch's state-dict keys for this configuration, in PyTorch's order.
    std::vector<std::string> state_dict_keys() const;
    /// The shape PyTorch gives `key`. Throws std::invalid_argument for a key this layer does not have.
    Shape state_dict_shape(const std::string& key) const;
    /// Copies of every parameter under PyTorch's names.
    std::map<std::string, Tensor> state_dict() const;
    /// Strict like PyTorch's load_state_dict: every key of state_dict_keys() must be present with its shape
    /// and no other key. Everything is checked before anything changes, so a failed load keeps the old weights.
    void load_state_dict(const std::map<std::string, TensorView>& state);
    void load_state_dict(const std::map<std::string, Tensor>& state);

    /// The allocation-free entry point (after the workspace has grown once): caller-owned row-major buffers.
    /// query `[batch, query_len, embed_dim]`, key `[batch, key_len, kdim]`, value `[batch, key_len, vdim]`,
    /// output `[batch, query_len, embed_dim]`, weights per ForwardOptions (may be null when need_weights is
    /// false). For self-attention pass query as key and value.
    void forward(const float* query, const float* key, const float* value, const ForwardDims& dims,
                 const ForwardOptions& options, float* output, float* weights);

    /// For incremental decoding with a key/value cache: the key and value projections of `rows` rows
    /// (key `[rows, kdim]`, value `[rows, vdim]`) into `[rows, embed_dim]` each.
    void project_key_value(const float* key, const float* value, std::size_t rows, float* key_out,
                           float* value_out) const;
    /// The query projection of `rows` rows (`[rows, embed_dim]` → `[rows, embed_dim]`), as forward() makes it.
    void project_query(const float* query, std::size_t rows, float* out) const;
    /// Head `head`'s share of the output projection: `context` `[head_dim]` (its slice of the concatenated heads)
    /// times its head_dim columns of out_proj.weight, into `out` `[embed_dim]`, without the bias. forward()'s output
    /// row is the sum of these over the heads plus out_proj.bias.
    void project_head_output(std::size_t head, const float* context, float* out) const;
    /// Attention of unbatched `query` `[query_len, embed_dim]` over keys and values already projected by
    /// project_key_value() (`[key_len, embed_dim]` each). Same options, output and weights as forward()
    /// with batch 1; forward() is project_key_value() followed by this.
    void forward_projected(const float* query, std::size_t query_len, const float* projected_key,
                           const float* projected_value, std::size_t key_len, const ForwardOptions& options,
                           float* output, float* weights);

    /// Convenience: shapes are checked and results are returned as tensors. Unbatched input `[seq, dim]` gives
    /// unbatched output and weights without the batch dimension.
    AttentionResult forward(const TensorView& query, const TensorView& key, const TensorView& value,
                            const ForwardOptions& options = {});
    /// Self-attention: key = value = query.
    AttentionResult forward(const TensorView& query, const ForwardOptions& options = {});

    /// The number of floats forward() needs for the weights with these options (0 without weights).
    std::size_t weights_numel(const ForwardDims& dims, const ForwardOptions& options) const;
    /// The shape of the weights for these dims and options (batched layout).
    Shape weights_shape(const ForwardDims& dims, const ForwardOptions& options) const;

    /// Checks every argument of forward() without computing; throws what forward() would throw.
    void validate(const ForwardDims& dims, const ForwardOptions& options) const;

    /// Bytes of internal workspace forward() holds for these dims and options (besides the caller's buffers).
    /// Validates like validate().
    std::size_t workspace_bytes(const ForwardDims& dims, const ForwardOptions& options) const;

    /// Frees the workspace forward() keeps between calls. forward() also gives back a workspace more than four
    /// times larger than the current call needs (above 1 MiB), so one huge call does not pin its peak forever.
    void trim();

private:
    // Slices of the workspace for one call; `scores` has scores_per_worker floats for each thread.
    struct Buffers {
        float *q, *k, *v, *concat, *key_panels, *value_panels, *scores;
        std::size_t scores_per_worker;
    };
    // Where a validated state-dict key's values live; one body (parameter_in) serves both overloads.
    template <class Self>
    static auto parameter_in(Self& self, const std::string& key) -> decltype(self.in_proj_weight_.data());
    float* parameter(const std::string& key);
    const float* parameter(const std::string& key) const;
    void repack();
    using WorkspaceParts = std::array<std::size_t, 7>;  // floats of each Buffers slice, in order
    WorkspaceParts workspace_parts(const ForwardDims& dims, const ForwardOptions& options, bool with_key_value) const;
    Buffers plan(const ForwardDims& dims, const ForwardOptions& options, bool with_key_value);
    enum class Projection { query = 0, key = 1, value = 2 };  // also the index into packed_in_proj_
    void project(Projection which, const float* input, std::size_t rows, float* out) const;
    void attend_heads(const float* q, const float* k, const float* v, const ForwardDims& dims,
                      const ForwardOptions& options, const Buffers& buffers, float* output, float* weights) const;

    std::size_t embed_dim_, num_heads_, kdim_, vdim_;
    bool bias_;
    // PyTorch layout: in_proj_weight [3E, E] when packed, else q [E,E], k [E,kdim], v [E,vdim] back to back.
    std::vector<float> in_proj_weight_;
    std::vector<float> in_proj_bias_;     // [3E] or empty
    std::vector<float> out_proj_weight_;  // [E, E]
    std::vector<float> out_proj_bias_;    // [E] or empty
    // Wᵀ of the q, k, v and output projections packed into panels for the products, made when weights change.
    std::vector<float> packed_in_proj_[3];
    std::vector<float> packed_out_proj_;
    std::vector<float> workspace_;
};

}  // namespace attnscope
