// The binding's marshalling: error state, sizes and shapes from JS values, tensors back to JS, the arena.
#include "marshal.hpp"

#include <emscripten/bind.h>
#include <emscripten/heap.h>

#include <malloc.h>

#include <cmath>

namespace attnscope::bindings {

namespace {
std::string last_error;
Status last_status = Status::ok;
}  // namespace

Status record_error(Status status, const std::string& message)
{
    if (status != Status::ok) last_error = message;
    return last_status = status;
}

Status guarded_failure()
{
    try {
        throw;
    } catch (const std::invalid_argument& e) {  // a wrong value or shape
        return record_error(Status::range_error, e.what());
    } catch (const std::length_error& e) {  // sizes beyond the address space or the memory left
        return record_error(Status::range_error, e.what());
    } catch (const std::bad_alloc&) {
        return record_error(Status::range_error, "out of memory: WebAssembly memory could not grow to fit this call");
    } catch (const std::logic_error& e) {
        return record_error(Status::state_error, e.what());
    } catch (const std::exception& e) {
        return record_error(Status::internal_error, e.what());
    }
}

std::string get_last_error() { return last_error; }
Status get_last_status() { return last_status; }
// Room for any message up front, so an error never shows up as heap growth.
void reserve_error_room() { last_error.reserve(1024); }

// Bytes malloc has handed out and not taken back: what a leak would make grow. mallinfo's fields are int;
// read as unsigned they stay right up to the 4 GiB a 32-bit heap can hold.
double heap_bytes_in_use() { return double(static_cast<unsigned>(mallinfo().uordblks)); }
// The most the WebAssembly memory may grow to (-sMAXIMUM_MEMORY).
double memory_limit_bytes() { return double(emscripten_get_heap_max()); }

// Refuses, before allocating, what could never fit: WebAssembly memory never shrinks, so growing it step by step
// towards the limit only to fail on a later allocation would cripple the page. (A single allocation that fails
// does not grow it; a workspace that already exists is reused, so forward() needs no such check.)
void require_memory(double bytes, const std::string& what)
{
    const double left = memory_limit_bytes() - heap_bytes_in_use();
    if (bytes > left) {
        const auto mib = [](double b) { return std::to_string(long(b / (1024.0 * 1024.0))) + " MiB"; };
        throw std::length_error(what + ": " + mib(bytes) + " needed, more than the " + mib(left) +
                                " WebAssembly memory has left (limit " + mib(memory_limit_bytes()) + ")");
    }
}

// A JS number as a size: a whole number below 2^32, else length_error naming it (so 2^32 never wraps to 0). The
// number is written by JS's own toString, as the caller wrote it (and std::to_string(double) would link printf's
// float formatter into the .wasm).
std::size_t to_size(double value, const char* name)
{
    if (!(value >= 0) || value != std::floor(value) || value > double(SIZE_MAX))
        throw std::length_error(std::string(name) + ": expected a whole number from 0 to " + std::to_string(SIZE_MAX) +
                                ", got " + val(value).call<std::string>("toString"));
    return std::size_t(value);
}

Shape shape_of(const val& array, const char* name)
{
    Shape shape;
    const unsigned n = array["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) shape.push_back(to_size(array[i].as<double>(), name));
    return shape;
}

val shape_value(const Shape& shape)
{
    val array = val::array();
    for (std::size_t d : shape) array.call<void>("push", double(d));
    return array;
}

MaskView mask_of(MaskCode code, double address, Shape shape)
{
    if (code == MaskCode::boolean) return MaskView::boolean(at<const std::uint8_t>(address), std::move(shape));
    if (code == MaskCode::additive) return MaskView::additive(at<const float>(address), std::move(shape));
    return {};
}

// {data: Float32Array, shape: number[]} copied out of a Tensor; null for an empty tensor.
val tensor_value(const Tensor& t)
{
    if (t.data.empty()) return val::null();
    val tensor = val::object();
    tensor.set("data", val::global("Float32Array").new_(emscripten::typed_memory_view(t.data.size(), t.data.data())));
    tensor.set("shape", shape_value(t.shape));
    return tensor;
}

// [[key, address, shape], ...] of float32 data the wrapper copied into the heap → views for load_state_dict.
std::map<std::string, TensorView> state_views(const val& entries)
{
    std::map<std::string, TensorView> state;
    const unsigned n = entries["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
        const val entry = entries[i];
        state.emplace(entry[0].as<std::string>(), TensorView(at<const float>(entry[1].as<double>()), shape_of(entry[2])));
    }
    return state;
}

std::vector<std::int32_t> token_ids(const val& array) { return emscripten::convertJSArrayToNumberVector<std::int32_t>(array); }

val int_array(const std::vector<std::int32_t>& values)
{
    val array = val::array();
    for (std::int32_t v : values) array.call<void>("push", v);
    return array;
}

// Address of at least `bytes` bytes (16-byte aligned), or 0 with the status set.
double Arena::reserve(double bytes)
{
    double address = 0;
    guarded([&] {
        const std::size_t size = to_size(bytes, "arena bytes");
        const std::size_t floats = size / 4 + 1;  // +1: never a null data() for zero bytes
        // Keep the peak only while calls come near it: give back a block four times larger than this call
        // needs (above 1 MiB), so one huge call does not hold its memory for the life of the page.
        if (storage_.size() > (1u << 18) && storage_.size() / 4 > floats) trim();
        if (storage_.size() < floats) {
            trim();  // let go of the old block before asking for a bigger one
            require_memory(double(size), "this call's arguments and results");
            resize_floats(storage_, floats, "this call's arguments and results");
        }
        address = double(reinterpret_cast<std::uintptr_t>(storage_.data()));
    });
    return address;
}

// Model files and safetensors headers. A malformed file's FileError keeps its class: the result is
// {error: 'TypeError' | 'RangeError' | 'Error', message} instead of a value, and the wrapper throws that class.
// One copy of the catch clauses for every file entry point (not a template): `body(context)` reads the file.
val file_call(val (*body)(const void* context), const void* context)
{
    const auto failure = [](const char* name, const std::string& message) {
        val error = val::object();
        error.set("error", std::string(name));
        error.set("message", message);
        return error;
    };
    try {
        return body(context);
    } catch (const FileError& e) {
        return failure(e.kind() == FileError::Kind::type ? "TypeError" : "RangeError", e.what());
    } catch (const std::length_error& e) {
        return failure("RangeError", e.what());
    } catch (const std::bad_alloc&) {
        return failure("RangeError", "out of memory: WebAssembly memory could not grow to fit this model");
    } catch (const std::exception& e) {
        return failure("Error", e.what());
    }
}

}  // namespace attnscope::bindings
