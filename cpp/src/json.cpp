// The strict JSON reader of json.hpp.
#include "json.hpp"

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

class Parser {
public:
    Parser(std::string_view text, std::vector<Node>& nodes) : s_(text), nodes_(nodes) {}

    bool parse(std::string& error)
    {
        skip_space();
        if (!value(0)) {
            error = message_ + " at byte " + std::to_string(pos_);
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
    std::vector<Node>& nodes_;
    std::size_t pos_ = 0;
    std::string message_;

    bool fail(const char* what)
    {
        message_ = what;
        return false;
    }
    void skip_space()
    {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    std::uint32_t push(Type type, std::size_t begin)
    {
        nodes_.push_back(Node{type, false, std::uint32_t(begin), std::uint32_t(begin), 0});
        return std::uint32_t(nodes_.size() - 1);
    }
    void close(std::uint32_t node, std::size_t end)
    {
        nodes_[node].end = std::uint32_t(end);
        nodes_[node].next = std::uint32_t(nodes_.size());
    }
    bool literal(const char* word, Type type)
    {
        const std::size_t n = std::strlen(word);
        if (s_.compare(pos_, n, word) != 0) return fail("invalid literal");
        close(push(type, pos_), pos_ + n);
        pos_ += n;
        return true;
    }
    bool string_value()
    {
        const std::size_t begin = ++pos_;  // past the opening quote
        while (pos_ < s_.size() && s_[pos_] != '"') pos_ += s_[pos_] == '\\' ? 2 : 1;
        if (pos_ >= s_.size()) return fail("unterminated string");
        if (!decode_string(s_.substr(begin, pos_ - begin), nullptr)) return fail("invalid string (control character or bad escape)");
        close(push(Type::string, begin), pos_);
        ++pos_;
        return true;
    }
    bool number_value()
    {
        const std::size_t begin = pos_;
        auto digits = [&] {
            const std::size_t start = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            return pos_ - start;
        };
        if (s_[pos_] == '-') ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
        else if (digits() == 0) return fail("invalid number");
        bool integer = true;
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            integer = false;
            if (digits() == 0) return fail("invalid number");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            integer = false;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (digits() == 0) return fail("invalid number");
        }
        const std::uint32_t node = push(Type::number, begin);
        nodes_[node].integer = integer;
        close(node, pos_);
        return true;
    }
    bool value(std::size_t depth)
    {
        if (pos_ >= s_.size()) return fail("unexpected end of text");
        const char c = s_[pos_];
        if (c == '{' || c == '[') {
            if (depth >= max_depth) return fail("nested too deeply");
            const bool object = c == '{';
            const std::uint32_t node = push(object ? Type::object : Type::array, pos_);
            ++pos_;
            skip_space();
            const char closing = object ? '}' : ']';
            if (pos_ < s_.size() && s_[pos_] == closing) {
                close(node, ++pos_);
                return true;
            }
            for (;;) {
                if (object) {
                    if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a string key");
                    if (!string_value()) return false;
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
                    close(node, ++pos_);
                    return true;
                }
                return fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
            }
        }
        if (c == '"') return string_value();
        if (c == 't') return literal("true", Type::boolean);
        if (c == 'f') return literal("false", Type::boolean);
        if (c == 'n') return literal("null", Type::null);
        if (c == '-' || (c >= '0' && c <= '9')) return number_value();
        return fail("unexpected character");
    }
};

}  // namespace

bool Document::parse(std::string_view text, std::string& error)
{
    text_ = text;
    nodes_.clear();
    if (text.size() >= UINT32_MAX) {
        error = "longer than 4 GiB";
        return false;
    }
    const std::size_t bad = invalid_utf8_at(text);
    if (bad != text.size()) {
        error = "invalid UTF-8 at byte " + std::to_string(bad);
        return false;
    }
    return Parser(text, nodes_).parse(error);
}

Type Value::type() const { return doc_->nodes_[index_].type; }

std::string_view Value::raw() const
{
    const Node& n = doc_->nodes_[index_];
    return doc_->text_.substr(n.begin, n.end - n.begin);
}

std::string Value::excerpt() const
{
    const std::string_view r = raw();
    const std::string_view quote = is(Type::string) ? "\"" : "";
    return join({quote, r.substr(0, 40), r.size() > 40 ? "…" : "", quote});
}

std::string Value::string() const
{
    std::string out;
    decode_string(raw(), &out);
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
    const Node& n = doc_->nodes_[index_];
    if (n.type != Type::number || !n.integer) return false;
    const std::string_view r = raw();
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

Value Value::following() const { return Value(*doc_, doc_->nodes_[index_].next); }

std::size_t Value::size() const
{
    const Node& n = doc_->nodes_[index_];
    std::size_t count = 0;
    for (std::uint32_t i = index_ + 1; i < n.next; i = doc_->nodes_[i].next) ++count;
    return type() == Type::object ? count / 2 : count;
}

bool Value::find(std::string_view key, Value& out) const
{
    const std::uint32_t end = doc_->nodes_[index_].next;
    for (std::uint32_t i = index_ + 1; i < end;) {
        const Value k(*doc_, i);
        const Value v = k.following();
        // Keys without escapes compare raw; others are decoded.
        const std::string_view r = k.raw();
        if (r.find('\\') == std::string_view::npos ? r == key : k.string() == key) {
            out = v;
            return true;
        }
        i = v.following().index_;
    }
    return false;
}

bool Value::has_duplicate_keys(std::string& duplicate) const
{
    // Keys compare as decoded text; only keys with escapes are decoded (into `decoded`, reserved up front so the
    // views into it stay valid).
    const std::uint32_t end = doc_->nodes_[index_].next;
    std::vector<std::string_view> keys;
    std::vector<std::string> decoded;
    decoded.reserve(size());
    for (std::uint32_t i = index_ + 1; i < end;) {
        const Value k(*doc_, i);
        const std::string_view r = k.raw();
        if (r.find('\\') == std::string_view::npos) {
            keys.push_back(r);
        } else {
            decoded.push_back(k.string());
            keys.push_back(decoded.back());
        }
        i = k.following().following().index_;
    }
    std::vector<std::uint32_t> order(keys.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    sort_indices(order, [](const void* c, std::uint32_t a, std::uint32_t b) {
        const auto& k = *static_cast<const std::vector<std::string_view>*>(c);
        return k[a] < k[b];
    }, &keys);
    for (std::size_t i = 1; i < order.size(); ++i)
        if (keys[order[i]] == keys[order[i - 1]]) {
            duplicate = std::string(keys[order[i]]);
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
