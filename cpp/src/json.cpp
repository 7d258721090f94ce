// The strict JSON reader of json.hpp.
#include "json.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace attnscope {
namespace json {

std::string join(std::initializer_list<std::string_view> parts)
{
    std::size_t length = 0;
    for (std::string_view p : parts) length += p.size();
    std::string text;
    text.reserve(length);
    for (std::string_view p : parts) text.append(p.data(), p.size());
    return text;
}

Num::Num(std::uint64_t value)
{
    do {
        text_[sizeof text_ - ++length_] = char('0' + value % 10);
        value /= 10;
    } while (value);
}

const char* type_name(Type type)
{
    static const char* const names[] = {"null", "a boolean", "a number", "a string", "an array", "an object"};
    return names[int(type)];
}

namespace {

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. Returns the offset of the first bad
// byte, or text.size().
std::size_t invalid_utf8_at(std::string_view text)
{
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t i = 0, n = text.size();
    while (i < n) {
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

// Decodes the inside of a string literal that the parser has validated (or checks it when `out` is null).
bool decode_string(std::string_view s, std::string* out)
{
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (static_cast<unsigned char>(c) < 0x20) return false;
        if (c != '\\') {
            if (out) *out += c;
            continue;
        }
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

// Validates the whole text in one pass and keeps nothing of it but the keys of the objects still open (8 bytes
// each, and a key takes at least 5 bytes of text: `"":0,`), checked for duplicates when their object closes.
class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    bool parse(std::string& error)
    {
        skip_space();
        if (!value(0)) {
            error = message_.empty() ? "" : message_ + " at byte " + std::to_string(pos_);
            if (!duplicate_.empty()) error = duplicate_;
            return false;
        }
        skip_space();
        if (pos_ != s_.size()) {
            error = "unexpected text after the JSON value at byte " + std::to_string(pos_);
            return false;
        }
        return true;
    }

private:
    std::string_view s_;
    std::size_t pos_ = 0;
    std::string message_, duplicate_;
    std::vector<KeySpan> keys_;  // the keys of every open object, innermost last

    bool fail(const char* what)
    {
        message_ = what;
        return false;
    }
    void skip_space()
    {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    bool literal(const char* word)
    {
        const std::size_t n = std::strlen(word);
        if (s_.compare(pos_, n, word) != 0) return fail("invalid literal");
        pos_ += n;
        return true;
    }
    bool string_value()
    {
        const std::size_t begin = ++pos_;  // past the opening quote
        while (pos_ < s_.size() && s_[pos_] != '"') pos_ += s_[pos_] == '\\' ? 2 : 1;
        if (pos_ >= s_.size()) return fail("unterminated string");
        if (!decode_string(s_.substr(begin, pos_ - begin), nullptr)) return fail("invalid string (control character or bad escape)");
        ++pos_;
        return true;
    }
    bool number_value()
    {
        auto digits = [&] {
            const std::size_t start = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            return pos_ - start;
        };
        if (s_[pos_] == '-') ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
        else if (digits() == 0) return fail("invalid number");
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            if (digits() == 0) return fail("invalid number");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (digits() == 0) return fail("invalid number");
        }
        return true;
    }
    // The keys from `first` on belong to the object that just closed: sorted, neighbours compared, then dropped.
    bool unique_keys(std::size_t first)
    {
        KeyOrder order(s_);
        const auto begin = keys_.begin() + std::ptrdiff_t(first);
        std::sort(begin, keys_.end(), [&](const KeySpan& a, const KeySpan& b) {
            const int c = order.compare(a, b);
            return c != 0 ? c < 0 : a.begin < b.begin;
        });
        for (auto k = begin; k + 1 < keys_.end(); ++k)
            if (order.compare(*k, *(k + 1)) == 0) {
                const std::string key = order.decoded(*k);
                duplicate_ = "the key '" + key.substr(0, 40) + (key.size() > 40 ? "…" : "") + "' appears twice in an object (at bytes " +
                             std::to_string(k->begin - 1) + " and " + std::to_string((k + 1)->begin - 1) + ")";
                return false;
            }
        keys_.resize(first);
        return true;
    }
    bool value(std::size_t depth)
    {
        if (pos_ >= s_.size()) return fail("unexpected end of text");
        const char c = s_[pos_];
        if (c == '{' || c == '[') {
            if (depth >= max_depth) return fail("nested too deeply");
            const bool object = c == '{';
            const std::size_t first_key = keys_.size();
            ++pos_;
            skip_space();
            const char closing = object ? '}' : ']';
            if (pos_ < s_.size() && s_[pos_] == closing) {
                ++pos_;
                return true;
            }
            for (;;) {
                if (object) {
                    if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a string key");
                    const std::size_t key_begin = pos_ + 1;
                    if (!string_value()) return false;
                    keys_.push_back({std::uint32_t(key_begin), std::uint32_t(pos_ - 1)});
                    skip_space();
                    if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':'");
                    ++pos_;
                    skip_space();
                }
                if (!value(depth + 1)) return false;
                skip_space();
                if (pos_ < s_.size() && s_[pos_] == ',') {
                    ++pos_;
                    skip_space();
                    continue;
                }
                if (pos_ < s_.size() && s_[pos_] == closing) {
                    ++pos_;
                    return !object || unique_keys(first_key);
                }
                return fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
            }
        }
        if (c == '"') return string_value();
        if (c == 't') return literal("true");
        if (c == 'f') return literal("false");
        if (c == 'n') return literal("null");
        if (c == '-' || (c >= '0' && c <= '9')) return number_value();
        return fail("unexpected character");
    }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view s, std::size_t pos)
{
    while (pos < s.size() && is_space(s[pos])) ++pos;
    return pos;
}

// One past the end of the (validated) value at `pos`: strings to their closing quote, containers to their
// matching bracket (skipping the strings inside, whose brackets do not count), scalars to their last character.
std::size_t value_end(std::string_view s, std::size_t pos)
{
    if (pos >= s.size()) return pos;
    const auto string_end = [&](std::size_t p) {  // p: the opening quote
        for (++p; s[p] != '"'; p += s[p] == '\\' ? 2 : 1) {}
        return p + 1;
    };
    switch (s[pos]) {
    case '"': return string_end(pos);
    case '{':
    case '[': {
        std::size_t depth = 0;
        for (std::size_t p = pos;;) {
            const char c = s[p];
            if (c == '"') { p = string_end(p); continue; }
            if (c == '{' || c == '[') ++depth;
            else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
            ++p;
        }
    }
    case 't': return pos + 4;
    case 'n': return pos + 4;
    case 'f': return pos + 5;
    default:
        while (pos < s.size() && (s[pos] == '-' || s[pos] == '+' || s[pos] == '.' || s[pos] == 'e' || s[pos] == 'E' ||
                                  (s[pos] >= '0' && s[pos] <= '9')))
            ++pos;
        return pos;
    }
}

// At the end of a container: the position of its closing bracket (what following() returns after its last element).
bool at_close(std::string_view s, std::size_t pos) { return pos >= s.size() || s[pos] == ']' || s[pos] == '}'; }

}  // namespace

bool Document::parse(std::string_view text, std::string& error)
{
    // Navigation trusts the text to be valid JSON: a document that failed to parse keeps no text at all.
    text_ = std::string_view();
    if (text.size() >= UINT32_MAX) {
        error = "longer than 4 GiB";
        return false;
    }
    const std::size_t bad = invalid_utf8_at(text);
    if (bad != text.size()) {
        error = "invalid UTF-8 at byte " + std::to_string(bad);
        return false;
    }
    if (!Parser(text).parse(error)) return false;
    text_ = text;
    return true;
}

Value Document::root() const { return Value(*this, std::uint32_t(skip_space(text_, 0))); }

Type Value::type() const
{
    const std::string_view s = doc_->text_;
    if (index_ >= s.size()) return Type::null;
    switch (s[index_]) {
    case '"': return Type::string;
    case '{': return Type::object;
    case '[': return Type::array;
    case 't':
    case 'f': return Type::boolean;
    case 'n':
    case ']':
    case '}': return Type::null;  // past the end of a container: nothing there
    default: return Type::number;
    }
}

std::string_view Value::raw() const
{
    const std::string_view s = doc_->text_;
    const std::size_t end = value_end(s, index_);
    if (is(Type::string)) return s.substr(index_ + 1, end - index_ - 2);
    return s.substr(index_, end - index_);
}

std::string Value::excerpt() const
{
    const std::string_view r = raw();
    const std::string_view quote = is(Type::string) ? "\"" : "";
    return join({quote, r.substr(0, 40), r.size() > 40 ? "…" : "", quote});
}

std::string Value::string() const
{
    // Decoding never lengthens the text (an escape is at least as long as its UTF-8): one allocation, not the
    // doublings of appending, which held up to 3× a long string while it grew.
    const std::string_view r = raw();
    std::string out;
    out.reserve(r.size());
    decode_string(r, &out);
    return out;
}

bool Value::boolean() const { return raw() == "true"; }

bool Value::equals_decimal(std::string_view digits, long exponent) const
{
    // Normalise the literal to significant digits × 10^e, exactly (no floating point): "0.00001", "1e-5" and
    // "1.0E-05" all become ("1", -5). Literals with more than 64 mantissa digits never compare equal.
    if (!is(Type::number)) return false;
    const std::string_view r = raw();
    if (r[0] == '-') return false;  // only positive constants are compared
    char significant[64];
    std::size_t n = 0, i = 0;
    long e = 0;
    for (; i < r.size() && r[i] != 'e' && r[i] != 'E'; ++i) {
        if (r[i] == '.') continue;
        if (n == sizeof significant) return false;
        significant[n++] = r[i];
        if (r.find('.') < i) --e;  // a fraction digit
    }
    if (i < r.size()) {  // exponent
        ++i;
        const bool negative = r[i] == '-';
        if (r[i] == '-' || r[i] == '+') ++i;
        long x = 0;
        for (; i < r.size(); ++i) x = x > 100000 ? x : x * 10 + (r[i] - '0');
        e += negative ? -x : x;
    }
    std::size_t first = 0;
    while (first < n && significant[first] == '0') ++first;
    if (first == n) return digits == "0";
    while (significant[n - 1] == '0') --n, ++e;
    return std::string_view(significant + first, n - first) == digits && e == exponent;
}

bool Value::to_index(std::uint64_t max, std::uint64_t& out) const
{
    if (!is(Type::number)) return false;
    const std::string_view r = raw();
    if (r.find_first_of(".eE") != std::string_view::npos) return false;  // not written as an integer
    if (r[0] == '-') return r == "-0" ? (out = 0, true) : false;
    std::uint64_t v = 0;
    for (char c : r) {
        const std::uint64_t d = std::uint64_t(c - '0');
        if (d > max || v > (max - d) / 10) return false;  // v·10 + d would exceed max
        v = v * 10 + d;
    }
    out = v;
    return true;
}

Value Value::following() const
{
    const std::string_view s = doc_->text_;
    std::size_t pos = skip_space(s, value_end(s, index_));
    if (pos < s.size() && (s[pos] == ',' || s[pos] == ':')) pos = skip_space(s, pos + 1);
    return Value(*doc_, std::uint32_t(pos));
}

Value Value::first() const { return Value(*doc_, std::uint32_t(skip_space(doc_->text_, std::size_t(index_) + 1))); }

std::size_t Value::size() const
{
    if (!is(Type::array) && !is(Type::object)) return 0;
    std::size_t count = 0;
    for (Value v = first(); !at_close(doc_->text_, v.index_); v = v.following()) ++count;
    return is(Type::object) ? count / 2 : count;
}

bool Value::find(std::string_view key, Value& out) const
{
    if (!is(Type::object)) return false;
    for (Value k = first(); !at_close(doc_->text_, k.index_);) {
        const Value v = k.following();
        // Keys without escapes compare raw; others are decoded.
        const std::string_view r = k.raw();
        if (r.find('\\') == std::string_view::npos ? r == key : k.string() == key) {
            out = v;
            return true;
        }
        k = v.following();
    }
    return false;
}

bool Value::has_duplicate_keys(std::string& duplicate) const
{
    // Document::parse already refuses duplicate keys at every depth; this check stays for callers that ask, and
    // compares decoded keys the same way.
    if (!is(Type::object)) return false;
    std::vector<KeySpan> keys;
    for (Value k = first(); !at_close(doc_->text_, k.index_); k = k.following().following()) {
        const std::string_view r = k.raw();
        const std::uint32_t begin = std::uint32_t(r.data() - doc_->text_.data());
        keys.push_back({begin, std::uint32_t(begin + r.size())});
    }
    KeyOrder order(doc_->text_);
    std::sort(keys.begin(), keys.end(), [&](const KeySpan& a, const KeySpan& b) { return order.compare(a, b) < 0; });
    for (std::size_t i = 1; i < keys.size(); ++i)
        if (order.compare(keys[i - 1], keys[i]) == 0) {
            duplicate = order.decoded(keys[i]);
            return true;
        }
    return false;
}

void sort_indices(std::vector<std::uint32_t>& a, bool (*less)(const void*, std::uint32_t, std::uint32_t), const void* context)
{
    const std::size_t n = a.size();
    const auto sift = [&](std::size_t root, std::size_t end) {
        for (;;) {
            std::size_t child = 2 * root + 1;
            if (child >= end) return;
            if (child + 1 < end && less(context, a[child], a[child + 1])) ++child;
            if (!less(context, a[root], a[child])) return;
            std::swap(a[root], a[child]);
            root = child;
        }
    };
    for (std::size_t i = n / 2; i-- > 0;) sift(i, n);
    for (std::size_t end = n; end-- > 1;) {
        std::swap(a[0], a[end]);
        sift(0, end);
    }
}

}  // namespace json
}  // namespace attnscope
