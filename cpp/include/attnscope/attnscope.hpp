/// attnscope: scaled dot-product and multi-head attention, exact against PyTorch, SIMD through xsimd.
#pragma once

#include "attnscope/attention.hpp"
#include "attnscope/multihead_attention.hpp"
#include "attnscope/tensor.hpp"
#include "attnscope/threads.hpp"
#include "attnscope/kernel_settings.hpp"
#include "attnscope/model.hpp"
#include "attnscope/transformer.hpp"
#include "attnscope/model_file.hpp"
#include "attnscope/rnn.hpp"
#include "attnscope/safetensors.hpp"
