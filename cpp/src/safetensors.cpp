// The safetensors header reader of attnscope/safetensors.hpp: every byte is treated as hostile.
#include "attnscope/safetensors.hpp"

#include <limits>

#include "file_errors.hpp"
#include "json.hpp"

namespace attnscope {
namespace {

using namespace file_errors;

// Largest dimension or offset accepted: sizes stay exact in a double on the JS side.
constexpr std::uint64_t max_integer = (std::uint64_t(1) << 53) - 1;

std::uint64_t index_of(const json::Value& v, std::initializer_list<std::string_view> field, std::uint64_t max)
{
    if (!v.is(json::Type::number)) type_error(field, "a non-negative integer", v);
    std::uint64_t out = 0;
    if (!v.to_index(max, out))
        range_error({json::join(field), ": expected an integer from 0 to ", Num(max), ", got ", v.excerpt()});
    return out;
}

// A name as a message quotes it: at most 200 bytes, the length said when cut (a header may hold a 1 MB name).
std::string short_name(std::string_view name)
{
    constexpr std::size_t most = 200;
    if (name.size() <= most) return std::string(name);
    return json::join({name.substr(0, most), "… (", Num(name.size()), " bytes)"});
}

SafetensorsTensor read_tensor(const json::Value& entry, const std::string& name, std::uint64_t data_size, bool half)
{
    const std::string field = "header['" + short_name(name) + "']";
    if (!entry.is(json::Type::object)) type_error({field}, "an object with dtype, shape and data_offsets", entry);
    json::Value k = entry.first();
    for (std::size_t i = 0, n = entry.size(); i < n; ++i, k = k.following().following()) {
        const std::string key = k.string();
        if (key != "dtype" && key != "shape" && key != "data_offsets")
            range_error({field, ": unknown field '", short_name(key), "' (expected dtype, shape and data_offsets)"});
    }

    SafetensorsTensor t;
    t.name = name;
    json::Value dtype(entry), shape(entry), offsets(entry);
    if (!entry.find("dtype", dtype)) range_error({field, ".dtype: missing"});
    if (!entry.find("shape", shape)) range_error({field, ".shape: missing"});
    if (!entry.find("data_offsets", offsets)) range_error({field, ".data_offsets: missing"});
    if (!dtype.is(json::Type::string)) type_error({field, ".dtype"}, "a string", dtype);
    t.dtype = dtype.string();
    const bool is_half = t.dtype == "F16" || t.dtype == "BF16";
    if (t.dtype != "F32" && !(half && is_half)) {
        if (half) range_error({field, ".dtype: expected \"F32\", \"F16\" or \"BF16\", got ", dtype.excerpt()});
        range_error({field, ".dtype: expected \"F32\" (the only dtype attnscope reads; save float32 tensors), got ",
                     dtype.excerpt()});
    }
    const std::uint64_t element_bytes = is_half ? 2 : 4;
    if (!shape.is(json::Type::array)) type_error({field, ".shape"}, "an array of integers", shape);
    const std::size_t rank = shape.size();
    std::uint64_t numel = 1;
    bool overflow = false;
    // The shape as written, for the message: t.shape's size_t holds 32 bits in WASM, where a refused dimension may
    // not fit (a shape that passes holds no dimension over the file's size).
    std::string written = "[";
    json::Value dim = shape.first();
    for (std::size_t i = 0; i < rank; ++i, dim = dim.following()) {
        const std::uint64_t d = index_of(dim, {field, ".shape[", Num(i), "]"}, max_integer);
        t.shape.push_back(std::size_t(d));
        written += json::join({i ? ", " : "", Num(d)});
        if (d != 0 && numel > max_integer / d) overflow = true;
        numel *= overflow ? 1 : d;
    }
    if (!offsets.is(json::Type::array)) type_error({field, ".data_offsets"}, "an array [begin, end]", offsets);
    if (offsets.size() != 2)
        range_error({field, ".data_offsets: expected [begin, end], got ", Num(offsets.size()), " entries"});
    const std::uint64_t begin = index_of(offsets.first(), {field, ".data_offsets[0]"}, data_size);
    const std::uint64_t end = index_of(offsets.first().following(), {field, ".data_offsets[1]"}, data_size);
    if (end < begin)
        range_error({field, ".data_offsets: end ", Num(end), " is before begin ", Num(begin)});
    if (overflow || numel * element_bytes != end - begin)
        range_error({field, ": shape ", written, "] needs ",
                     overflow ? std::string_view("more than 2^53") : std::string_view(Num(numel * element_bytes)),
                     " bytes of ", t.dtype, ", data_offsets [", Num(begin), ", ", Num(end), "] hold ", Num(end - begin)});
    t.begin = std::size_t(begin);
    t.end = std::size_t(end);
    return t;
}

}  // namespace

void file_errors::type_error(std::initializer_list<std::string_view> field, const char* expected, const json::Value& got)
{
    throw FileError(FileError::Kind::type,
                    json::join({json::join(field), ": expected ", expected, ", got ", json::type_name(got.type()), " ", got.excerpt()}));
}

void file_errors::range_error(std::initializer_list<std::string_view> parts)
{
    throw FileError(FileError::Kind::range, json::join(parts));
}

const std::string* SafetensorsHeader::find_metadata(const std::string& key) const
{
    for (const auto& entry : metadata)  // a handful of lookups per file: a linear search is enough
        if (entry.first == key) return &entry.second;
    return nullptr;
}

std::size_t safetensors_header_bytes(const std::uint8_t* file, std::size_t available, std::uint64_t size)
{
    if (size < 8 || available < 8)
        range_error({"the file has ", Num(size < 8 ? size : available), " bytes, fewer than the 8 of the header length"});
    std::uint64_t header_length = 0;
    for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | file[i];  // little-endian
    if (header_length > size - 8)
        range_error({"header length ", Num(header_length), " runs past the end of the file (", Num(size), " bytes)"});
    if (header_length > max_safetensors_header_bytes)
        range_error({"header length ", Num(header_length), " is above the limit of ", Num(max_safetensors_header_bytes),
                     " bytes"});
    return 8 + std::size_t(header_length);
}

SafetensorsHeader read_safetensors_header(const std::uint8_t* file, std::size_t size)
{
    return read_safetensors_header(file, size, size, false);
}

SafetensorsHeader read_safetensors_header(const std::uint8_t* file, std::size_t available, std::uint64_t size,
                                          bool half_precision, std::size_t max_tensors)
{
    const std::size_t header_end = safetensors_header_bytes(file, available, size);
    if (available < header_end)
        range_error({"the header needs ", Num(header_end), " bytes, only ", Num(available), " were given"});
    if (size > std::numeric_limits<std::size_t>::max())
        range_error({"the file has ", Num(size), " bytes, more than this build can address"});
    const std::uint64_t header_length = header_end - 8;
    const std::string_view text(reinterpret_cast<const char*>(file + 8), std::size_t(header_length));
    if (text.empty() || text[0] != '{')
        range_error({"the header must start with '{', got ", text.empty() ? "an empty header" : "byte ",
                     text.empty() ? std::string_view() : std::string_view(Num(std::uint8_t(text[0])))});

    json::Document doc;
    std::string error;
    if (!doc.parse(text, error)) range_error({"header: invalid JSON: ", error});
    const json::Value root = doc.root();
    const std::size_t members = root.size();
    if (members > max_tensors && members - 1 > max_tensors)  // __metadata__ is not a tensor
        range_error({"header: ", Num(members), " entries, more than the ", Num(max_tensors), " tensors a checkpoint with this config can hold"});

    SafetensorsHeader header;
    header.data_begin = 8 + std::size_t(header_length);
    const std::size_t data_size = std::size_t(size) - header.data_begin;
    json::Value key = root.first();
    for (std::size_t i = 0; i < members; ++i, key = key.following().following()) {
        const std::string name = key.string();
        const json::Value value = key.following();
        if (name == "__metadata__") {
            if (value.is(json::Type::null)) continue;
            if (!value.is(json::Type::object)) type_error({"header.__metadata__"}, "an object of strings", value);
            json::Value mk = value.first();
            for (std::size_t j = 0, n = value.size(); j < n; ++j, mk = mk.following().following()) {
                const json::Value mv = mk.following();
                if (!mv.is(json::Type::string)) type_error({"header.__metadata__['", short_name(mk.string()), "']"}, "a string", mv);
                header.metadata.emplace_back(mk.string(), mv.string());
            }
            continue;
        }
        header.tensors.push_back(read_tensor(value, name, data_size, half_precision));
    }

    // The tensors must tile the data section exactly: sorted by begin, each starts where the previous ends.
    // Sorted by (begin, end), so an empty tensor comes before the tensor that starts where it sits.
    std::vector<std::uint32_t> order(header.tensors.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    json::sort_indices(order, [](const void* c, std::uint32_t a, std::uint32_t b) {
        const auto& t = *static_cast<const std::vector<SafetensorsTensor>*>(c);
        return t[a].begin != t[b].begin ? t[a].begin < t[b].begin : t[a].end < t[b].end;
    }, &header.tensors);
    std::vector<SafetensorsTensor> sorted;
    sorted.reserve(order.size());
    for (std::uint32_t i : order) sorted.push_back(std::move(header.tensors[i]));
    header.tensors = std::move(sorted);
    std::size_t covered = 0;
    for (const SafetensorsTensor& t : header.tensors) {
        if (t.begin != covered)
            range_error({"header['", short_name(t.name), "'].data_offsets: begins at ", Num(t.begin), ", expected ", Num(covered),
                         t.begin < covered ? " (it overlaps the tensor before)" : " (a gap before it)"});
        covered = t.end;
    }
    if (covered != data_size)
        range_error({"the tensors cover ", Num(covered), " bytes of the data section's ", Num(data_size), " (the file has ",
                     Num(size), " bytes)"});
    for (SafetensorsTensor& t : header.tensors) {
        t.begin += header.data_begin;
        t.end += header.data_begin;
    }
    return header;
}

}  // namespace attnscope
