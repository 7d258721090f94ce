// Where each tensor of a checkpoint lives in the model: the weights allocated in the kernels' layout, and for each
// tensor the place its elements go (plain, or scattered into a matrix's packed panels); and the memory a forward
// pass takes beside them, for the loader's plan. Internal to the loader.
#pragma once

#include <cstddef>
#include <cstdint>

#include "parts.hpp"

namespace attnscope {
namespace pretrained {

enum class Layout : std::uint8_t { plain, rows_out, rows_in };

// Where a tensor's elements go: plain (contiguous from base), or into the packed panels of a matrix with K rows
// whose columns col0.. the tensor fills — rows_out for nn.Linear's [out, in], rows_in for Conv1D's [in, out].
struct Destination {
    float* base = nullptr;
    Layout layout = Layout::plain;
    std::size_t K = 0, col0 = 0, cols = 1;  // cols: the file tensor's last dimension
};

/// Allocates every parameter of `m.config` (zeros), the MLM head's when `mlm_head`.
void allocate_weights(PretrainedModel::Impl& m, bool mlm_head);
/// Where the elements of the tensor `spec` go once the weights are allocated.
Destination destination_of(PretrainedModel::Impl& m, const TensorSpec& spec);
/// Bytes one forward() of `tokens` tokens with every attention map allocates next to the weights: run_request's
/// caches and outputs and run()'s activations (model.cpp, forward.cpp; a change there changes this). Saturates
/// instead of wrapping, so an absurd config gives an absurd number, never a small one.
std::uint64_t forward_workspace_bytes(const PretrainedConfig& config, std::size_t tokens);

}  // namespace pretrained
}  // namespace attnscope
