// A small strict JSON reader for file headers (RFC 8259, UTF-8 only). Parsing validates the whole text in one pass
// and keeps no tree: a Value is a byte offset into the text, and navigating re-reads the text. So a document costs
// its text (never copied) plus, while it is parsed, 8 bytes per key of the objects still open (at most 1.6 bytes
// per byte of text, as a key takes at least 5): a file's JSON cannot make the reader allocate much more than the
// file. Duplicate keys are refused at every depth (compared decoded), nesting is bounded in depth, and strings are
// validated at parse time and decoded on demand. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {
namespace json {

enum class Type : std::uint8_t { null, boolean, number, string, array, object };

/// "null", "a number", ... for error messages.
const char* type_name(Type type);

constexpr std::size_t max_depth = 64;

class Document;

/// Error messages are built from pieces by one function rather than chains of std::string operator+ at each site:
/// the file readers have many messages, and this keeps their code (and the .wasm) small.
std::string join(std::initializer_list<std::string_view> parts);

/// A number as text for join(), without allocating.
class Num {
public:
    explicit Num(std::uint64_t value);
    operator std::string_view() const { return {text_ + (sizeof text_ - length_), length_}; }

private:
    char text_[20];
    std::size_t length_ = 0;
};

/// Sorts the indices in `order` by `less(context, a, b)`: one small heapsort shared by the file readers instead of
/// one std::sort instantiation per element type, which keeps the .wasm small.
void sort_indices(std::vector<std::uint32_t>& order, bool (*less)(const void* context, std::uint32_t a, std::uint32_t b),
                  const void* context);

/// A value inside a Document: the offset of its first byte. Navigation costs the length of what it skips (size()
/// and find() read their container, following() the value it passes), so iterate once rather than index.
class Value {
public:
    Value(const Document& doc, std::uint32_t offset) : doc_(&doc), index_(offset) {}
    Type type() const;
    bool is(Type t) const { return type() == t; }
    /// The JSON text of the value (for strings: without the quotes, undecoded).
    std::string_view raw() const;
    /// The value as written, shortened to about 40 bytes, for error messages.
    std::string excerpt() const;
    std::string string() const;  // decoded; only for strings
    bool boolean() const;        // only for booleans
    /// A number equal to `digits` × 10^`exponent` exactly (`digits` without leading or trailing zeros).
    bool equals_decimal(std::string_view digits, long exponent) const;
    /// An integer written without fraction or exponent; false when it is negative or above `max`.
    bool to_index(std::uint64_t max, std::uint64_t& out) const;

    /// Arrays: element count; iterate with first()/following(). Objects: member count; keys and values alternate.
    std::size_t size() const;
    Value first() const;
    Value following() const;             // the next sibling (for array elements and object keys/values)
    /// The member `key` of an object, if present.
    bool find(std::string_view key, Value& out) const;

private:
    const Document* doc_;
    std::uint32_t index_;
};

class Document {
public:
    /// Parses `text` completely (one value, surrounded by optional whitespace). On malformed input, or an object
    /// with a key twice, returns false with `error` describing where. `text` is not copied: it must outlive the
    /// Document and its Values.
    bool parse(std::string_view text, std::string& error);
    Value root() const;

private:
    friend class Value;
    std::string_view text_;
};

}  // namespace json
}  // namespace attnscope
