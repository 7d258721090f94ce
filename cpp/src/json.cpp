// The strict JSON reader of json.hpp: navigating a parsed Document (the parser is json_parse.cpp), and the file
// readers' message helpers.
#include "json.hpp"
#include "json_text.hpp"

#include <algorithm>
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

using text::decode_string;
using text::skip_space;

namespace {

// One past the end of the (validated) value at `pos`: strings to their closing quote, containers to their
// matching bracket (skipping the strings inside, whose brackets do not count), scalars to their last character.
std::size_t value_end(std::string_view s, std::size_t pos)
{
    if (pos >= s.size()) return pos;
    const auto string_end = [&](std::size_t p) { return text::closing_quote(s, p + 1) + 1; };  // p: the opening quote
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
