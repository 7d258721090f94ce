// patch_each()'s runs of one patched layer as one batched pass over a kept unpatched run (patch_runs.cpp). Internal to
// the core.
#pragma once

#include <cstddef>
#include <vector>

#include "pass.hpp"

namespace attnscope {
namespace model {

/// The unpatched pass of a request's tokens that every run resumes from (a ForwardCache's).
struct KeptPass {
    const float* layer_inputs;  ///< [layers, T, width]: the residual stream entering each layer
    const float* keys;          ///< [layers, capacity, kv_width], after QK-norm and RoPE
    const float* values;
    std::size_t capacity;
    const float* hidden;        ///< [T, width]: the stack's output after its final norm
};

/// Whether patch_runs() gives `r`'s runs the bits of their own forward(): no mean ablation (a mean over every row,
/// which a patched row would move), and rows whose element-wise steps have no scalar tail (the SIMD and scalar
/// formulas of a GELU differ in their last bits, and a batch would move a row's elements between them).
bool batchable(const Transformer::Impl& m, const Transformer::Request& r);

/// last [runs, width]: the last row of each run's pass (after the final norm), every run patched at `layer` only
/// (its head, at its positions or every position), from `kept`, the unpatched pass of r's tokens, mask and ablated
/// heads. The bits of forward() with that patch (Request::patch_from is r's). Throws std::length_error naming r.call
/// when a buffer cannot be addressed.
void patch_runs(const Transformer::Impl& m, const KeptPass& kept, const Transformer::Request& r, std::size_t layer,
                const std::vector<const Transformer::PatchRun*>& runs, float* last);

}  // namespace model
}  // namespace attnscope
