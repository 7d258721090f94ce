/// Reading safetensors files (https://github.com/huggingface/safetensors) as hostile input: the header is
/// checked completely against the file's size before anything proportional to a declared size is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/tensor.hpp"

namespace attnscope {

/// A malformed file. `type`: a field has the wrong JSON type (JS gets a TypeError); `range`: a value is
/// wrong or out of range (RangeError). The message names the field and the value found.
class FileError : public std::invalid_argument {
public:
    enum class Kind { type, range };
    FileError(Kind kind, const std::string& message) : std::invalid_argument(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

/// One tensor of a safetensors header. `begin`/`end` are byte offsets from the start of the file (already
/// shifted past the header), so the tensor's bytes are `file[begin, end)`.
struct SafetensorsTensor {
    std::string name;
    std::string dtype;  ///< "F32"; "F16" or "BF16" too when half precision is accepted
    Shape shape;
    std::size_t begin = 0, end = 0;
};

/// A validated safetensors header.
struct SafetensorsHeader {
    std::vector<SafetensorsTensor> tensors;                        ///< in data order (by `begin`)
    std::vector<std::pair<std::string, std::string>> metadata;     ///< `__metadata__`, in file order
    std::size_t data_begin = 0;                                    ///< 8 + header length

    /// The metadata value of `key`, or nullptr.
    const std::string* find_metadata(const std::string& key) const;
};

/// Largest header accepted: the reference implementation's limit.
constexpr std::size_t max_safetensors_header_bytes = 100'000'000;

/// Parses and checks the header of a `size`-byte safetensors file: the 8-byte little-endian header length
/// against the file size; the header as strict UTF-8 JSON (bounded depth); every field's JSON type; dtype F32;
/// every shape and offset an integer in range, the byte length of each tensor equal to 4·numel, and the
/// tensors tiling the data section exactly (no gap, no overlap, nothing after). Throws FileError.
/// Allocates in proportion to the header's length only.
SafetensorsHeader read_safetensors_header(const std::uint8_t* file, std::size_t size);

/// The same checks over a header alone: `file` holds the first `available` bytes of a `size`-byte file (at least
/// the whole header), and with `half_precision` the dtypes F16 and BF16 (2-byte elements) are accepted besides F32.
/// More than `max_tensors` tensors are refused once the JSON is parsed, before any is read (a checkpoint's loader
/// knows how many its config can mean; a million ignored entries took 100 s in WASM).
SafetensorsHeader read_safetensors_header(const std::uint8_t* file, std::size_t available, std::uint64_t size,
                                          bool half_precision, std::size_t max_tensors = std::size_t(-1));

/// 8 + the header length read from a `size`-byte file's first bytes (`available` ≥ 8 of them), checked against the
/// file's size and the limit: how many bytes the header readers need.
std::size_t safetensors_header_bytes(const std::uint8_t* file, std::size_t available, std::uint64_t size);

}  // namespace attnscope
