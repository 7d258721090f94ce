// The attention fuzzer's three entry points; attention_fuzzer.cpp picks one from the input's first byte.
#pragma once

#include "decode.hpp"

namespace attnscope {
namespace fuzz {

// Which MultiHeadAttention API a case calls: the values are those of the input's first byte.
enum MhaEntry { mha_raw = 0, mha_views = 1, mha_self_view = 2, mha_cache = 5 };

// MultiHeadAttention: raw pointers, tensor views, self-attention views, and the key/value cache (mha_entry.cpp).
void fuzz_mha(Input& in, MhaEntry entry, Mode mode);
// scaled_dot_product_attention (sdpa_entry.cpp).
void fuzz_sdpa(Input& in, Mode mode);
// MultiHeadAttention's state dicts: keys, shapes, round trips and failed loads (state_dict_entry.cpp).
void fuzz_state_dict(Input& in, Mode mode);

}  // namespace fuzz
}  // namespace attnscope
