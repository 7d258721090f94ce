// The JSON reader's parser (json.hpp): Document::parse validates the whole text in one pass.
#include "json.hpp"
#include "json_text.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace attnscope {
namespace json {

using text::KeyOrder;
using text::KeySpan;
using text::decode_string;

namespace {

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
    void skip_space() { pos_ = text::skip_space(s_, pos_); }
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
        pos_ = text::closing_quote(s_, begin);
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

}  // namespace

bool Document::parse(std::string_view text, std::string& error)
{
    // Navigation trusts the text to be valid JSON: a document that failed to parse keeps no text at all.
    text_ = std::string_view();
    if (text.size() >= UINT32_MAX) {
        error = "longer than 4 GiB";
        return false;
    }
    const std::size_t bad = text::invalid_utf8_at(text);
    if (bad != text.size()) {
        error = "invalid UTF-8 at byte " + std::to_string(bad);
        return false;
    }
    if (!Parser(text).parse(error)) return false;
    text_ = text;
    return true;
}

}  // namespace json
}  // namespace attnscope
