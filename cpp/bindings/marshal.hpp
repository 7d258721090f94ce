// The binding's marshalling: the one error protocol, JS numbers and typed arrays ↔ sizes, shapes and heap buffers, the
// memory ceiling and the arena. The adapters (attention_bindings.cpp, model_bindings.cpp) share it.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/attnscope.hpp"

namespace attnscope::bindings {

using emscripten::val;

// The class of a failed call, which the wrapper throws (docs/errors.md): the one error protocol of every
// entry point is "null (0 for an address) comes back, _lastStatus() names the class and _lastError() the message".
enum class Status { ok, type_error, range_error, state_error, internal_error };

// An error of the JS API's arguments, raised by the adapters with the class the README promises. (The core's own
// std::invalid_argument and std::length_error arrive as RangeError, its std::logic_error as a state error.)
struct ApiError : std::runtime_error {
    ApiError(Status status, const std::string& message) : std::runtime_error(message), status(status) {}
    Status status;
};
// One piece of an error message: a size, a shape ("[2, 3, 4]"), a text, or a JS number (as JS writes it, so no
// printf float formatter comes into the .wasm).
struct JsNumber {
    double value;
};
struct Leading {
    const Shape& shape;  // written as its leading dimensions (all but the last two), each followed by ", "
};
struct Prefix {
    bool on;
    std::size_t n;  // written as "n, " when on (a batch dimension), else nothing
};
struct Bytes {
    double bytes;  // "12.3 MiB", "4.00 GiB", "512 bytes"
};
struct Quoted {
    const std::vector<std::string>& names;  // "'a', 'b', 'c'"
};
struct Piece {
    enum Kind : unsigned char { size, prefix, shape, leading, text, number, bytes, quoted } kind;
    union {
        std::size_t n;
        const Shape* dims;
        const char* chars;
        const std::vector<std::string>* names;
        double value;
    };
    Piece(std::size_t n) : kind(size), n(n) {}
    Piece(const Shape& dims) : kind(shape), dims(&dims) {}
    Piece(Leading of) : kind(leading), dims(&of.shape) {}
    Piece(const char* chars) : kind(text), chars(chars) {}
    Piece(const std::string& chars) : kind(text), chars(chars.c_str()) {}
    Piece(JsNumber number) : kind(Kind::number), value(number.value) {}
    Piece(Bytes b) : kind(Kind::bytes), value(b.bytes) {}
    Piece(Prefix p) : kind(p.on ? Kind::prefix : text), n(p.n)
    {
        if (!p.on) chars = "";
    }
    Piece(Quoted q) : kind(quoted), names(&q.names) {}
};
// Throws the API error `status` with `format`, each % replaced by the next piece. The pieces are trivially
// destructible, so a throw site costs a call instead of the unwinding code of std::string temporaries.
[[noreturn]] void fail(Status status, const char* format, std::initializer_list<Piece> pieces = {});
std::string text(const char* format, std::initializer_list<Piece> pieces);

// Classifies and records the exception in flight (call only inside a catch block); `what` names what a failed
// allocation was for ("this call", "this model").
Status record_failure(const char* what);

// Runs an entry point's body: a C++ exception never crosses into JS (it would arrive as a WebAssembly.Exception
// without its message). Returns the body's value, or null with the failure recorded.
template <class F>
val guarded(F&& body, const char* what = "this call")
{
    try {
        return body();
    } catch (...) {
        record_failure(what);
        return val::null();
    }
}

std::string get_last_error();
Status get_last_status();
void reserve_error_room();

// A JS number as JS writes it (its toString), for messages: no printf float formatter in the .wasm.
std::string number_text(double value);

// The memory ceiling, in one place. heap_bytes_in_use: what malloc has handed out; memory_limit_bytes: the most the
// WebAssembly memory may grow to. CallBuffers::place refuses a call whose total exceeds the limit ("... need 5.00 GiB
// of WebAssembly memory, more than its 4.00 GiB limit"); require_memory refuses, before allocating, what does not fit
// next to what the heap already holds.
double heap_bytes_in_use();
double memory_limit_bytes();
void require_memory(std::size_t bytes, const std::string& what);

template <class T>
T* at(double address)
{
    return reinterpret_cast<T*>(std::uintptr_t(address));
}

std::size_t to_size(double value, const char* name);
// A whole number from `min` to `max`, else a RangeError "<name>: expected a whole number from <min> to <max>, got <v>".
double whole_number(double value, const char* name, double min, double max);
Shape shape_of(const val& array, const char* name = "shape");
val shape_value(const Shape& shape);
std::size_t numel(const Shape& shape, const char* what);

// Which mask a call passes; the wrapper names it by the kind of its typed array, never by number.
enum class MaskCode { none, boolean, additive };
MaskView mask_of(MaskCode code, const void* data, Shape shape);

// A tensor argument as the wrapper converted it: a Float32Array (or, for masks, Uint8Array) and its shape. `data`
// is null when the argument was not given.
struct TensorArg {
    val data = val::null();
    val shape = val::array();
    bool given() const { return !data.isNull(); }
};
struct MaskArg {
    MaskCode kind = MaskCode::none;
    val data = val::null();
    val shape = val::array();
};

// The typed array `data` (`bytes` long) copied into the heap at `address`: one copy, through a view made just now
// (memory growth detaches older views).
void copy_in(const val& data, void* address, std::size_t bytes, bool float_elements);
// `n` floats at `data` as a fresh Float32Array, or copied into the caller's `out` (a Float32Array) when it is given.
val copy_out(const float* data, std::size_t n, const val& out);
// The length check of a caller's `out` array: "<name>: expected a Float32Array of <n> values (shape <s>), got ...".
void check_out(const val& out, std::size_t n, const Shape& shape, const char* name);

// {data, shape} of `t` (null when empty), its data a fresh Float32Array or copied into the caller's `out` (checked by
// check_out) when it is given.
val tensor_value(const Tensor& t, const val& out = val::undefined());
// Sets each named tensor on `result` as tensor_value: the models' results are such objects, and one set() call site
// serves them all (a set() per literal is instantiated once per name length).
void set_tensors(val& result, std::initializer_list<std::pair<const char*, const Tensor*>> tensors);
// Sets each named number on `result`: as set_tensors, one set() call site for the objects of sizes and counts.
void set_numbers(val& result, std::initializer_list<std::pair<const char*, double>> numbers);
// JS numbers as token ids, which the core checks against the model (its count and range, in the JS API's words).
// Only what an int32 cannot carry is refused here, a fraction or a number beyond int32, in the core's words: `vocab`
// is the argument's vocabulary size, for that message only.
std::vector<std::int32_t> token_ids(const val& array, const char* name, std::size_t vocab);
val int_array(const std::vector<std::int32_t>& values);
// One stack's heads to switch off as the wrapper passes them, [index in `name`, layer, head, …] (ablation.js
// headLists), as the flags the core takes: one per head of `layers` layers, empty when there are none. Layer and head
// are checked here, before they index the flags: "<name>[index].layer: expected a whole number from 0 to …, got …".
HeadMask head_flags(const val& list, const char* name, std::size_t layers, std::size_t heads);

// A growable block on the WASM heap for a call's arguments and results, reused from call to call under the core's
// shrink policy (reuse_floats), and checked against the memory left before it grows.
class Arena {
public:
    // Address of at least `bytes` bytes (16-byte aligned), or 0 with the failure recorded: the raw form, for
    // the wrapper's file reads.
    double reserve(double bytes);
    // The same for C++ callers: throws instead.
    void* reserve_bytes(std::size_t bytes);
    // Applies the shrink policy with nothing known of the next call (a functional call has no owner to trim it).
    void release() { reuse_floats(storage_, 0, ""); }
    void trim() { std::vector<float>().swap(storage_); }

private:
    std::vector<float> storage_;  // float-typed so the block is aligned for floats
};

// The buffers of one call in its arena: the inputs, copied in from their typed arrays, and the results, in one
// 16-byte-aligned block. Sizes are added up in doubles, so a call beyond 4 GiB is refused by the ceiling check
// instead of wrapping around.
class CallBuffers {
public:
    // A fixed table (a call has at most 7 buffers; loadStateDict as many as the layer's keys, at most 6): no
    // vector code in the .wasm.
    static constexpr std::size_t capacity = 8;
    // An input of `bytes` bytes (0: none) and the index of its buffer; `data` must live until place() copies it in.
    std::size_t input(const val* data, std::size_t bytes, bool float_elements);
    std::size_t result(std::size_t floats);
    // Refuses the call past the memory ceiling (with `workspace` bytes the core holds besides), else reserves the
    // arena and copies the inputs in. The ceiling's message names the call by its sizes: a forward pass's dims,
    // else "these shapes".
    void place(Arena& arena, double workspace, const ForwardDims& dims, bool need_weights);
    void place(Arena& arena, double workspace);
    template <class T>
    T* at(std::size_t i) const
    {
        return reinterpret_cast<T*>(entries_[i].at);
    }

private:
    void place(Arena& arena, double workspace, const ForwardDims* dims, bool need_weights);
    struct Entry {
        const val* data;  // null for a result, or for an input its caller copies in itself after place()
        double bytes;
        bool float_elements;
        char* at;
    };
    Entry entries_[capacity];
    std::size_t count_ = 0;
};

// {data, shape}: a result as the wrapper returns it.
val tensor_result(const val& data, const Shape& shape);

// A file in the WASM heap, as the wrapper copied it there.
struct FileBytes {
    const std::uint8_t* data;
    std::size_t size;
};

}  // namespace attnscope::bindings
