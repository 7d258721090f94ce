// The fuzzers whose input is several files: NUL separates them (`config.json` NUL `index.json` NUL …).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace attnscope {
namespace fuzz {

/// The bytes before the first NUL (all of them when there is none); `data` and `size` move past it.
inline std::string take_part(const std::uint8_t*& data, std::size_t& size)
{
    const void* nul = std::memchr(data, 0, size);
    const std::size_t n = nul ? std::size_t(static_cast<const std::uint8_t*>(nul) - data) : size;
    std::string part(reinterpret_cast<const char*>(data), n);
    const std::size_t skip = nul ? n + 1 : n;
    data += skip;
    size -= skip;
    return part;
}

}  // namespace fuzz
}  // namespace attnscope
