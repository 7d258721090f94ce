// The binding's marshalling: the error protocol, sizes and shapes from JS values, copies in and out, the memory
// ceiling and the arena.
#include "marshal.hpp"

#include <emscripten/bind.h>
#include <emscripten/heap.h>

#include <malloc.h>

#include <cmath>
#include <new>

namespace attnscope::bindings {

namespace {
std::string last_error;
Status last_status = Status::ok;

Status record(Status status, const std::string& message)
{
    last_error = message;
    return last_status = status;
}
}  // namespace


void fail(Status status, const char* format, std::initializer_list<Piece> pieces)
{
    std::string message;
    const Piece* piece = pieces.begin();
    for (const char* c = format; *c; ++c) {
        if (*c != '%' || piece == pieces.end()) {
            message += *c;
            continue;
        }
        if (piece->kind == Piece::size) message += std::to_string(piece->n);
        if (piece->kind == Piece::shape) message += to_string(*piece->dims);
        if (piece->kind == Piece::leading)
            for (std::size_t i = 0; i + 2 < piece->dims->size(); ++i) message += std::to_string((*piece->dims)[i]) + ", ";
        if (piece->kind == Piece::text) message += piece->chars;
        if (piece->kind == Piece::number) message += number_text(piece->value);
        ++piece;
    }
    throw ApiError(status, message);
}

Status record_failure(const char* what)
{
    try {
        throw;
    } catch (const ApiError& e) {
        return record(e.status, e.what());
    } catch (const FileError& e) {  // a malformed file keeps its class
        return record(e.kind() == FileError::Kind::type ? Status::type_error : Status::range_error, e.what());
    } catch (const std::invalid_argument& e) {  // a wrong value or shape
        return record(Status::range_error, e.what());
    } catch (const std::length_error& e) {  // sizes beyond the address space or the memory left
        return record(Status::range_error, e.what());
    } catch (const std::bad_alloc&) {
        return record(Status::range_error,
                      std::string("out of memory: WebAssembly memory could not grow to fit ") + what);
    } catch (const std::logic_error& e) {
        return record(Status::state_error, e.what());
    } catch (const std::exception& e) {
        return record(Status::internal_error, e.what());
    } catch (...) {
        return record(Status::internal_error, "an unknown C++ exception");
    }
}

std::string get_last_error() { return last_error; }
Status get_last_status() { return last_status; }
// Room for any message up front, so an error never shows up as heap growth.
void reserve_error_room() { last_error.reserve(1024); }

std::string number_text(double value) { return val(value).call<std::string>("toString"); }

// Bytes malloc has handed out and not taken back: what a leak would make grow. mallinfo's fields are int;
// read as unsigned they stay right up to the 4 GiB a 32-bit heap can hold.
double heap_bytes_in_use() { return double(static_cast<unsigned>(mallinfo().uordblks)); }
double memory_limit_bytes() { return double(emscripten_get_heap_max()); }

namespace {
// "12.3 MiB", "4.00 GiB", "512 bytes", written by JS's toFixed as the wrapper used to write them.
std::string bytes_text(double bytes)
{
    const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
    if (bytes >= gib) return val(bytes / gib).call<std::string>("toFixed", 2) + " GiB";
    if (bytes >= mib) return val(bytes / mib).call<std::string>("toFixed", 1) + " MiB";
    return number_text(bytes) + " bytes";
}
}  // namespace

// Refuses, before allocating, what does not fit next to what the heap holds: WebAssembly memory never shrinks, so
// growing it step by step towards the limit only to fail on a later allocation would cripple the page. (A single
// allocation that fails does not grow it.)
void require_memory(std::size_t bytes, const std::string& what)
{
    const double left = memory_limit_bytes() - heap_bytes_in_use();
    if (double(bytes) > left) {
        const auto mib = [](double b) { return std::to_string(long(b / (1024.0 * 1024.0))) + " MiB"; };
        throw std::length_error(what + ": " + mib(double(bytes)) + " needed, more than the " + mib(left) +
                                " WebAssembly memory has left (limit " + mib(memory_limit_bytes()) + ")");
    }
}

// A JS number as a size: a whole number below 2^32, else length_error naming it (so 2^32 never wraps to 0).
std::size_t to_size(double value, const char* name)
{
    if (!(value >= 0) || value != std::floor(value) || value > double(SIZE_MAX))
        throw std::length_error(std::string(name) + ": expected a whole number from 0 to " + std::to_string(SIZE_MAX) +
                                ", got " + number_text(value));
    return std::size_t(value);
}

double whole_number(double value, const std::string& name, double min, double max)
{
    if (!(value >= min && value <= max) || value != std::floor(value))
        fail(Status::range_error, "%: expected a whole number from % to %, got %",
             {name, JsNumber{min}, JsNumber{max}, JsNumber{value}});
    return value;
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

std::size_t numel(const Shape& shape, const char* what) { return checked_numel(shape, what); }

MaskView mask_of(MaskCode code, const void* data, Shape shape)
{
    if (code == MaskCode::boolean) return MaskView::boolean(static_cast<const std::uint8_t*>(data), std::move(shape));
    if (code == MaskCode::additive) return MaskView::additive(static_cast<const float*>(data), std::move(shape));
    return {};
}

void copy_in(const val& data, void* address, std::size_t bytes, bool float_elements)
{
    if (float_elements)
        val(emscripten::typed_memory_view(bytes / sizeof(float), static_cast<float*>(address))).call<void>("set", data);
    else
        val(emscripten::typed_memory_view(bytes, static_cast<std::uint8_t*>(address))).call<void>("set", data);
}

val copy_out(const float* data, std::size_t n, const val& out)
{
    const val view(emscripten::typed_memory_view(n, data));
    if (out.isUndefined() || out.isNull()) return val::global("Float32Array").new_(view);
    out.call<void>("set", view);
    return out;
}

void check_out(const val& out, std::size_t n, const Shape& shape, const std::string& name)
{
    if (out.isUndefined() || out.isNull()) return;
    const double length = out["length"].as<double>();
    if (length != double(n))
        fail(Status::range_error, "%: expected a Float32Array of % values (shape %), got Float32Array(%)",
             {name, n, shape, JsNumber{length}});
}

// {data: Float32Array, shape: number[]} copied out of a Tensor; null for an empty tensor.
val tensor_value(const Tensor& t)
{
    if (t.data.empty()) return val::null();
    val tensor = val::object();
    tensor.set("data", copy_out(t.data.data(), t.data.size(), val::undefined()));
    tensor.set("shape", shape_value(t.shape));
    return tensor;
}

std::vector<std::int32_t> token_ids(const val& array) { return emscripten::convertJSArrayToNumberVector<std::int32_t>(array); }

val int_array(const std::vector<std::int32_t>& values)
{
    val array = val::array();
    for (std::int32_t v : values) array.call<void>("push", v);
    return array;
}

void* Arena::reserve_bytes(std::size_t bytes)
{
    const std::size_t floats = bytes / 4 + 1;  // +1: never a null data() for zero bytes
    reuse_floats(storage_, floats, "this call's arguments and results",
                 [](std::size_t size, const std::string& what) { require_memory(size, what); });
    return storage_.data();
}

double Arena::reserve(double bytes)
{
    double address = 0;
    guarded([&] {
        address = double(reinterpret_cast<std::uintptr_t>(reserve_bytes(to_size(bytes, "arena bytes"))));
        return val::undefined();
    });
    return address;
}

std::size_t CallBuffers::input(const val& data, std::size_t bytes, bool float_elements)
{
    if (count_ == capacity) throw std::logic_error("CallBuffers: more buffers than its table holds");
    Entry& e = entries_[count_];
    e.data = data;
    e.bytes = double(bytes);
    e.float_elements = float_elements;
    return count_++;
}

std::size_t CallBuffers::result(std::size_t floats)
{
    if (count_ == capacity) throw std::logic_error("CallBuffers: more buffers than its table holds");
    entries_[count_].bytes = 4.0 * double(floats);
    return count_++;
}

void CallBuffers::place(Arena& arena, double workspace, const ForwardDims& dims, bool need_weights)
{
    place(arena, workspace, &dims, need_weights);
}

void CallBuffers::place(Arena& arena, double workspace) { place(arena, workspace, nullptr, false); }

void CallBuffers::place(Arena& arena, double workspace, const ForwardDims* dims, bool need_weights)
{
    constexpr double align = 16;
    double total = 0;
    for (std::size_t i = 0; i < count_; ++i) total += std::ceil(entries_[i].bytes / align) * align;
    if (total + workspace > memory_limit_bytes()) {
        const std::string sizes = dims ? "batch " + std::to_string(dims->batch) + ", queryLen " + std::to_string(dims->query_len) +
                                             ", keyLen " + std::to_string(dims->key_len) + (need_weights ? " with weights" : "")
                                       : "these shapes";
        fail(Status::range_error, "% need % of WebAssembly memory, more than its % limit%",
             {sizes, bytes_text(total + workspace), bytes_text(memory_limit_bytes()),
              need_weights ? " (needWeights: false needs far less)" : ""});
    }
    char* base = static_cast<char*>(arena.reserve_bytes(std::size_t(total)));  // below the ceiling: countable
    for (std::size_t i = 0; i < count_; ++i) {
        Entry& e = entries_[i];
        e.at = base;
        if (!e.data.isUndefined() && e.bytes > 0) copy_in(e.data, base, std::size_t(e.bytes), e.float_elements);
        base += std::size_t(std::ceil(e.bytes / align) * align);
    }
}

val tensor_result(const val& data, const Shape& shape)
{
    val tensor = val::object();
    tensor.set("data", data);
    tensor.set("shape", shape_value(shape));
    return tensor;
}

}  // namespace attnscope::bindings
