// Strict UTF-8 and string literals for the JSON reader (json_text.hpp).
#include "json_text.hpp"

#include <cstring>

namespace attnscope {
namespace json {
namespace text {

namespace {

int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool read_hex4(std::string_view s, std::size_t at, std::uint32_t& out)
{
    if (s.size() - at < 4) return false;
    out = 0;
    for (std::size_t k = 0; k < 4; ++k) {
        const int d = hex_digit(s[at + k]);
        if (d < 0) return false;
        out = out * 16 + std::uint32_t(d);
    }
    return true;
}

void append_utf8(std::string& out, std::uint32_t cp)
{
    if (cp < 0x80) out += char(cp);
    else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) { out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
    else { out += char(0xF0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3F)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
}

}  // namespace

std::size_t invalid_utf8_at(std::string_view text)
{
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t i = 0, n = text.size();
    while (i < n) {
        // Eight ASCII bytes at a time: JSON is mostly ASCII.
        std::uint64_t eight;
        if (n - i >= 8 && (std::memcpy(&eight, s + i, 8), (eight & 0x8080808080808080ull) == 0)) {
            i += 8;
            continue;
        }
        const unsigned c = s[i];
        std::size_t len;
        std::uint32_t cp, min;
        if (c < 0x80) { ++i; continue; }
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
        else return i;
        if (n - i < len) return i;
        for (std::size_t k = 1; k < len; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return n;
}

std::size_t closing_quote(std::string_view s, std::size_t pos)
{
    for (std::size_t from = pos; from < s.size();) {
        const void* quote = std::memchr(s.data() + from, '"', s.size() - from);
        if (!quote) break;
        const std::size_t at = std::size_t(static_cast<const char*>(quote) - s.data());
        std::size_t slashes = 0;
        while (at - slashes > pos && s[at - slashes - 1] == '\\') ++slashes;
        if (slashes % 2 == 0) return at;
        from = at + 1;
    }
    return s.size();
}

bool decode_string(std::string_view s, std::string* out)
{
    for (std::size_t i = 0; i < s.size(); ++i) {
        // A run of plain characters at once (appending them one by one cost most of a long string's time).
        std::size_t run = i;
        while (run < s.size() && s[run] != '\\' && static_cast<unsigned char>(s[run]) >= 0x20) ++run;
        if (out) out->append(s.data() + i, run - i);
        i = run;
        if (i == s.size()) break;
        if (static_cast<unsigned char>(s[i]) < 0x20) return false;
        if (++i == s.size()) return false;
        std::uint32_t cp;
        switch (s[i]) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u': {
            if (!read_hex4(s, i + 1, cp)) return false;
            i += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
            if (cp >= 0xD800 && cp <= 0xDBFF) {               // must be followed by a low surrogate
                std::uint32_t low;
                if (s.size() - i < 7 || s[i + 1] != '\\' || s[i + 2] != 'u' || !read_hex4(s, i + 3, low) ||
                    low < 0xDC00 || low > 0xDFFF)
                    return false;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                i += 6;
            }
            break;
        }
        default: return false;
        }
        if (out) append_utf8(*out, cp);
    }
    return true;
}

}  // namespace text
}  // namespace json
}  // namespace attnscope
