// The JSON reader's text primitives, shared by its parser (json_parse.cpp) and its navigation (json.cpp): strict
// UTF-8, string literals checked and decoded, keys compared as decoded text. Internal to json*.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnscope {
namespace json {
namespace text {

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. Returns the offset of the first bad
// byte, or text.size().
std::size_t invalid_utf8_at(std::string_view text);

// Decodes the inside of a string literal that the parser has validated (or checks it when `out` is null).
bool decode_string(std::string_view s, std::string* out);

// The closing quote of the string literal whose text starts at `pos` (just past its opening quote), or s.size()
// when there is none: memchr to each quote, escaped when an odd run of backslashes comes before it. A step per
// byte cost a 100 MB header string seconds.
std::size_t closing_quote(std::string_view s, std::size_t pos);

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline std::size_t skip_space(std::string_view s, std::size_t pos)
{
    while (pos < s.size() && is_space(s[pos])) ++pos;
    return pos;
}

// A key of an object being parsed: the byte range inside its quotes.
struct KeySpan {
    std::uint32_t begin, end;
};

// Keys compare as decoded text. Most keys have no escapes and compare raw; the others are decoded into the two
// scratch strings, so no key is copied for longer than one comparison.
class KeyOrder {
public:
    explicit KeyOrder(std::string_view text) : s_(text) {}
    int compare(const KeySpan& a, const KeySpan& b)
    {
        const std::string_view ra = s_.substr(a.begin, a.end - a.begin), rb = s_.substr(b.begin, b.end - b.begin);
        if (ra.find('\\') == std::string_view::npos && rb.find('\\') == std::string_view::npos) return ra.compare(rb);
        scratch_a_.clear();
        scratch_b_.clear();
        decode_string(ra, &scratch_a_);
        decode_string(rb, &scratch_b_);
        return scratch_a_.compare(scratch_b_);
    }
    std::string decoded(const KeySpan& k)
    {
        std::string out;
        decode_string(s_.substr(k.begin, k.end - k.begin), &out);
        return out;
    }

private:
    std::string_view s_;
    std::string scratch_a_, scratch_b_;
};

}  // namespace text
}  // namespace json
}  // namespace attnscope
