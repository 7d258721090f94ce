// The MultiHeadAttention fuzz case shared by mha_entry.cpp (which decodes it and checks the valid calls) and
// mha_invalid.cpp (which makes one argument of it wrong): the mutations, and the parts of a case that both read.
#pragma once

#include <cstddef>

#include "attnscope/attnscope.hpp"
#include "decode.hpp"
#include "entry_points.hpp"

namespace attnscope {
namespace fuzz {

// The argument an invalid case makes wrong: the configuration (the constructor must throw) up to mut_huge_config,
// then the call's sizes, masks, pointers and shapes.
enum MhaMutation {
    mut_embed_zero,
    mut_heads_zero,
    mut_not_divisible,
    mut_huge_config,
    mut_zero_size,
    mut_kpm_shape,
    mut_am_shape,
    mut_huge_dims,
    mut_null,
    mut_tensor_shape,
    mha_mutation_count
};

// The decoded case, by reference to mha_entry.cpp's own variables: an invalid call changes sizes, shapes and masks
// in place before making the call.
struct MhaCase {
    MhaEntry entry;
    bool pointers, unbatched;
    std::size_t E, H, kdim, vdim, sharing;
    std::size_t &B, &Lq, &Lk;
    const ValueKind& values;
    const Shape& kpm_shape;
    OwnedMask &kpm, &am;
    ForwardOptions& options;
    ForwardDims& dims;
    Shape &q_shape, &k_shape, &v_shape;
};

// Makes one argument of the case invalid (`mutation`, past the configuration's own) and calls the entry point:
// it must throw, and validate() must say the same.
void call_mha_invalid(Input& in, MultiHeadAttention& mha, MhaCase& c, std::size_t mutation);

}  // namespace fuzz
}  // namespace attnscope
