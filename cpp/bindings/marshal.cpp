// The binding's marshalling: the error protocol, sizes and shapes from JS values, copies in and out, the memory
// ceiling and the arena.
#include "marshal.hpp"

#include <emscripten/bind.h>
#include <emscripten/heap.h>

#include <malloc.h>

#include <cmath>
#include <limits>
#include <new>

namespace attnscope::bindings {
namespace {
// The names every call passes to JS (a shape's length, a result's fields, the copies' method), registered once at
// start-up: Embind then finds each by its address instead of decoding the C string again on every call. In the
// threaded build each byte of such a decode re-checks the heap's buffer (memory growth with threads): at (16, 64, 4)
// a layer's forward() with 2 threads took 43-44 µs with the strings and 35-37 µs with these (Node 20).
EMSCRIPTEN_SYMBOL(length);
EMSCRIPTEN_SYMBOL(push);
EMSCRIPTEN_SYMBOL(set);
EMSCRIPTEN_SYMBOL(data);
EMSCRIPTEN_SYMBOL(shape);
EMSCRIPTEN_SYMBOL(Float32Array);

std::string last_error;
Status last_status = Status::ok;

#if defined(__EMSCRIPTEN_PTHREADS__)
// The threaded libc++abi allocates a thread's exception state (its caught-exceptions stack) at that thread's first
// throw, and keeps it for the thread's life. Made here, at start-up, the main thread's is not counted against the
// first call that fails: a refused call must leave the heap as it found it.
extern "C" void* __cxa_get_globals();
void* const exception_state = __cxa_get_globals();
#endif

Status record(Status status, const char* message)
{
    last_error = message;
    return last_status = status;
}
}  // namespace


namespace {
// "12.3 MiB", "4.00 GiB", "512 bytes" (as JS's toFixed writes them), in integer steps: no float formatter.
void append_bytes(std::string& message, double bytes)
{
    const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
    const int decimals = bytes >= gib ? 2 : bytes >= mib ? 1 : 0;
    const double scale = decimals == 2 ? 100 : decimals == 1 ? 10 : 1;
    const auto steps = static_cast<unsigned long long>(std::floor(bytes / (decimals == 2 ? gib : decimals == 1 ? mib : 1) * scale + 0.5));
    message += std::to_string(steps / static_cast<unsigned long long>(scale));
    if (decimals) {
        std::string fraction = std::to_string(steps % static_cast<unsigned long long>(scale));
        message += '.';
        if (fraction.size() < std::size_t(decimals)) message += '0';
        message += fraction;
    }
    message += decimals == 2 ? " GiB" : decimals == 1 ? " MiB" : " bytes";
}
}  // namespace

void fail(Status status, const char* format, std::initializer_list<Piece> pieces)
{
    throw ApiError(status, text(format, pieces));
}

std::string text(const char* format, std::initializer_list<Piece> pieces)
{
    std::string message;
    const auto size = [&](std::size_t n) { message += std::to_string(n); };
    const Piece* piece = pieces.begin();
    for (const char* c = format; *c; ++c) {
        if (*c != '%' || piece == pieces.end()) {
            message += *c;
            continue;
        }
        switch (piece->kind) {
        case Piece::size: size(piece->n); break;
        case Piece::prefix:
            size(piece->n);
            message += ", ";
            break;
        case Piece::shape: message += to_string(*piece->dims); break;
        case Piece::leading:
            for (std::size_t i = 0; i + 2 < piece->dims->size(); ++i) {
                size((*piece->dims)[i]);
                message += ", ";
            }
            break;
        case Piece::text: message += piece->chars; break;
        case Piece::number: message += number_text(piece->value); break;
        case Piece::bytes: append_bytes(message, piece->value); break;
        case Piece::quoted:
            for (const std::string& name : *piece->names) {
                if (&name != &piece->names->front()) message += ", ";
                message += '\'';
                message += name;
                message += '\'';
            }
            break;
        }
        ++piece;
    }
    return message;
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
        record(Status::range_error, "out of memory: WebAssembly memory could not grow to fit ");
        last_error += what;
        return last_status;
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


// Refuses, before allocating, what does not fit next to what the heap holds: WebAssembly memory never shrinks, so
// growing it step by step towards the limit only to fail on a later allocation would cripple the page. (A single
// allocation that fails does not grow it.)
void require_memory(std::size_t bytes, const std::string& what)
{
    const double left = memory_limit_bytes() - heap_bytes_in_use(), mib = 1024.0 * 1024.0;
    if (double(bytes) > left)
        fail(Status::range_error, "%: % MiB needed, more than the % MiB WebAssembly memory has left (limit % MiB)",
             {what, std::size_t(double(bytes) / mib), std::size_t(left / mib), std::size_t(memory_limit_bytes() / mib)});
}

// A JS number as a size: a whole number below 2^32, else length_error naming it (so 2^32 never wraps to 0).
std::size_t to_size(double value, const char* name)
{
    if (!(value >= 0) || value != std::floor(value) || value > double(SIZE_MAX))
        fail(Status::range_error, "%: expected a whole number from 0 to %, got %", {name, std::size_t(SIZE_MAX), JsNumber{value}});
    return std::size_t(value);
}

double whole_number(double value, const char* name, double min, double max)
{
    if (!(value >= min && value <= max) || value != std::floor(value))
        fail(Status::range_error, "%: expected a whole number from % to %, got %",
             {name, JsNumber{min}, JsNumber{max}, JsNumber{value}});
    return value;
}

Shape shape_of(const val& array, const char* name)
{
    Shape shape;
    const unsigned n = array[length_symbol].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) shape.push_back(to_size(array[i].as<double>(), name));
    return shape;
}

val shape_value(const Shape& shape)
{
    val array = val::array();
    for (std::size_t d : shape) array.call<void>(push_symbol, double(d));
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
        val(emscripten::typed_memory_view(bytes / sizeof(float), static_cast<float*>(address))).call<void>(set_symbol, data);
    else
        val(emscripten::typed_memory_view(bytes, static_cast<std::uint8_t*>(address))).call<void>(set_symbol, data);
}

val copy_out(const float* data, std::size_t n, const val& out)
{
    const val view(emscripten::typed_memory_view(n, data));
    if (out.isUndefined() || out.isNull()) return val::global(Float32Array_symbol).new_(view);
    out.call<void>(set_symbol, view);
    return out;
}

void check_out(const val& out, std::size_t n, const Shape& shape, const char* name)
{
    if (out.isUndefined() || out.isNull()) return;
    const double length = out[length_symbol].as<double>();
    if (length != double(n))
        fail(Status::range_error, "%: expected a Float32Array of % values (shape %), got Float32Array(%)",
             {name, n, shape, JsNumber{length}});
}

// {data: Float32Array, shape: number[]} copied out of a Tensor (into `out` when given); null for an empty tensor.
val tensor_value(const Tensor& t, const val& out)
{
    if (t.data.empty()) return val::null();
    val tensor = val::object();
    tensor.set(data_symbol, copy_out(t.data.data(), t.data.size(), out));
    tensor.set(shape_symbol, shape_value(t.shape));
    return tensor;
}

void set_tensors(val& result, std::initializer_list<std::pair<const char*, const Tensor*>> tensors)
{
    for (const auto& entry : tensors) result.set(entry.first, tensor_value(*entry.second));
}

void set_numbers(val& result, std::initializer_list<std::pair<const char*, double>> numbers)
{
    for (const auto& entry : numbers) result.set(entry.first, entry.second);
}

std::vector<std::int32_t> token_ids(const val& array, const char* name, std::size_t vocab)
{
    using limits = std::numeric_limits<std::int32_t>;
    const std::vector<double> values = emscripten::convertJSArrayToNumberVector<double>(array);
    std::vector<std::int32_t> ids(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!(v >= double(limits::min()) && v <= double(limits::max())) || v != std::floor(v))
            fail(Status::range_error, "%[%]: expected a token id from 0 to %, got %", {name, i, vocab - 1, JsNumber{v}});
        ids[i] = std::int32_t(v);
    }
    return ids;
}

HeadMask head_flags(const val& list, const char* name, std::size_t layers, std::size_t heads)
{
    const std::vector<double> values = emscripten::convertJSArrayToNumberVector<double>(list);
    HeadMask flags;
    for (std::size_t i = 0; i + 2 < values.size(); i += 3) {
        const std::size_t entry = std::size_t(values[i]);
        const double layer = whole_number(values[i + 1], text("%[%].layer", {name, entry}).c_str(), 0, double(layers) - 1);
        const double head = whole_number(values[i + 2], text("%[%].head", {name, entry}).c_str(), 0, double(heads) - 1);
        if (flags.empty()) flags.assign(layers * heads, 0);  // layers × heads: checked by the model's config
        flags[std::size_t(layer) * heads + std::size_t(head)] = 1;
    }
    return flags;
}

val int_array(const std::vector<std::int32_t>& values)
{
    val array = val::array();
    for (std::int32_t v : values) array.call<void>(push_symbol, v);
    return array;
}

void* Arena::reserve_bytes(std::size_t bytes)
{
    const std::size_t floats = bytes / 4 + 1;  // +1: never a null data() for zero bytes
    reuse_floats(storage_, floats, "this call's arguments and results",
                 [](std::size_t size, const char* what) { require_memory(size, what); });
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

std::size_t CallBuffers::input(const val* data, std::size_t bytes, bool float_elements)
{
    if (count_ == capacity) throw std::logic_error("CallBuffers: more buffers than its table holds");
    entries_[count_] = {data, double(bytes), float_elements, nullptr};
    return count_++;
}

std::size_t CallBuffers::result(std::size_t floats)
{
    if (count_ == capacity) throw std::logic_error("CallBuffers: more buffers than its table holds");
    entries_[count_] = {nullptr, 4.0 * double(floats), true, nullptr};
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
        const double limit = memory_limit_bytes();
        if (!dims) fail(Status::range_error, "these shapes need % of WebAssembly memory, more than its % limit", {Bytes{total + workspace}, Bytes{limit}});
        fail(Status::range_error, "batch %, queryLen %, keyLen %% need % of WebAssembly memory, more than its % limit%",
             {dims->batch, dims->query_len, dims->key_len, need_weights ? " with weights" : "", Bytes{total + workspace},
              Bytes{limit}, need_weights ? " (needWeights: false needs far less)" : ""});
    }
    char* base = static_cast<char*>(arena.reserve_bytes(std::size_t(total)));  // below the ceiling: countable
    for (std::size_t i = 0; i < count_; ++i) {
        Entry& e = entries_[i];
        e.at = base;
        if (e.data && e.bytes > 0) copy_in(*e.data, base, std::size_t(e.bytes), e.float_elements);
        base += std::size_t(std::ceil(e.bytes / align) * align);
    }
}

val tensor_result(const val& data, const Shape& shape)
{
    val tensor = val::object();
    tensor.set(data_symbol, data);
    tensor.set(shape_symbol, shape_value(shape));
    return tensor;
}

}  // namespace attnscope::bindings
