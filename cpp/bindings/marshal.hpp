// The binding's marshalling: error state, JS numbers and arrays ↔ sizes, shapes and tensors, heap addresses, the arena.
// The adapters (attention_bindings.cpp, model_bindings.cpp) share it; registration.cpp registers what they define.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnscope/attnscope.hpp"

namespace attnscope::bindings {

using emscripten::val;

// The outcome of a call, naming the JS error class the wrapper throws (README "Errors and limits").
enum class Status { ok, range_error, state_error, internal_error };

Status record_error(Status status, const std::string& message);
Status guarded_failure();  // classifies the exception in flight (call only inside a catch block)

// Every entry point goes through here: the status is kept for calls that return a value (null on failure).
template <class F>
Status guarded(F&& body)
{
    try {
        body();
        return record_error(Status::ok, {});
    } catch (...) {
        return guarded_failure();
    }
}

std::string get_last_error();
Status get_last_status();
void reserve_error_room();

double heap_bytes_in_use();
double memory_limit_bytes();
void require_memory(double bytes, const std::string& what);

template <class T>
T* at(double address)
{
    return reinterpret_cast<T*>(std::uintptr_t(address));
}

std::size_t to_size(double value, const char* name);
Shape shape_of(const val& array, const char* name = "shape");
val shape_value(const Shape& shape);

// Which mask a call passes; the wrapper names it by kind, never by number.
enum class MaskCode { none, boolean, additive };
MaskView mask_of(MaskCode code, double address, Shape shape);

val tensor_value(const Tensor& t);
std::map<std::string, TensorView> state_views(const val& entries);
std::vector<std::int32_t> token_ids(const val& array);
val int_array(const std::vector<std::int32_t>& values);

// A growable buffer on the WASM heap that the wrapper copies inputs into and reads outputs from,
// reused across calls so a forward pass costs no malloc/free pair per argument.
class Arena {
public:
    double reserve(double bytes);
    void trim() { std::vector<float>().swap(storage_); }

private:
    std::vector<float> storage_;  // float-typed so the block is aligned for floats
};

// A file in the WASM heap, as the wrapper copied it there.
struct FileBytes {
    const std::uint8_t* data;
    std::size_t size;
};

val file_call(val (*body)(const void* context), const void* context);

}  // namespace attnscope::bindings
