// What a family is: a small file (cpp/src/families/<name>.cpp) with two tables, its config → the layer plan, and its
// tensor names → the plan's parts; and the registry (registry.cpp), the only list of families. The pass, the loader,
// the bindings and the JS API read these, never a family's name. Internal to the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "../json.hpp"
#include "attnscope/plan.hpp"
#include "../model/tensors.hpp"

namespace attnscope {
namespace families {

/// The fields of a config object, each read checked for type and range; messages start with `prefix`
/// ("config.json: ", or "__metadata__.config." for our files) and name the field. In a Hugging Face config a null
/// field means its default (as PretrainedConfig reads it); in our files a null is a value of the wrong type.
class Config {
public:
    Config(const json::Value& object, std::string prefix, bool null_is_absent = true)
        : object_(object), prefix_(std::move(prefix)), null_is_absent_(null_is_absent)
    {
    }

    bool has(const char* name) const;   ///< present and not null
    json::Value get(const char* name) const;
    const std::string& prefix() const { return prefix_; }
    /// An integer from `min` to `max`; `fallback` when absent or null (0: required, "missing").
    std::size_t size(const char* name, std::size_t fallback, std::size_t min, std::size_t max) const;
    /// A finite number in (low, high] (`low_open`) or [low, high]; `fallback` when absent or null.
    double real(const char* name, double fallback, double low, double high, bool low_open = true) const;
    bool flag(const char* name, bool fallback) const;
    std::string text(const char* name, const char* fallback) const;
    /// The same checks on a value found elsewhere (a nested object's member), named `name`.
    double real_of(const json::Value& v, const char* name, double low, double high, bool low_open) const;
    /// A field whose only implemented value is `expected`: anything else is refused, never ignored.
    void require_flag(const char* name, bool expected, const char* why) const;
    /// A field that must be absent (or null): a feature not implemented.
    void require_absent(const char* name, const char* why) const;
    /// A field that, when present (it must be when `required`), must be the string `implemented`.
    void require_text(const char* name, const char* implemented, bool required = false) const;
    /// A field that, when present, must be the number digits × 10^exponent (compared exactly; `text` as written).
    void require_decimal(const char* name, std::string_view digits, long exponent, const char* text) const;
    /// A field that, when present, must be the boolean `implemented`.
    void require_bool(const char* name, bool implemented) const;
    /// A nested object, read with "<prefix><name>." (absent: an empty object).
    Config nested(const char* name) const;

    [[noreturn]] void fail(std::initializer_list<std::string_view> parts) const;
    [[noreturn]] void type_fail(const char* name, const char* expected, const json::Value& got) const;

private:
    json::Value object_;
    std::string prefix_;
    bool null_is_absent_;
};

/// A value of a JSON number (correctly rounded for what configs hold; see config.cpp).
double decimal_value(std::string_view text);

/// Which optional part of a checkpoint a tensor belongs to: a group's tensors are all present, or none.
enum class Group : std::uint8_t { required, lm_head, mlm_head };

/// One row of a family's tensor table.
struct TensorName {
    const char* pattern;          ///< the name as saved, without the prefix; "{}" where the layer number goes
    model::Part part;
    std::uint8_t stack = 0;       ///< seq2seq: 0 the encoder, 1 the decoder
    model::Layout layout = model::Layout::standard;
    Group group = Group::required;
    std::int16_t alias_of = -1;   ///< another name of the row at this index (one Parameter saved twice, or tied)
};

/// An `architectures` entry a family reads, and whether that class has a language-model head.
struct Architecture {
    const char* name;
    bool lm_head;
};

struct Family {
    const char* name;                       ///< config.json's model_type, or our file's kind
    const char* label;                      ///< the name people know it by ("GPT-2"), for the page and the docs
    /// The config → the plan, every field read checked (Config's messages), every field that would change the
    /// maths in a way not implemented refused. The head is `present` when the family can have one.
    plan::Plan (*read)(const Config& config);
    const TensorName* tensors;
    std::size_t tensor_count;
    const char* const* prefixes;            ///< task models' prefixes ("transformer."), null-terminated
    const char* const* ignored;             ///< buffers the model does not read ("h.{}.attn.bias"), null-terminated
    const Architecture* architectures;      ///< the `architectures` it reads, null-terminated by a null name
};

/// The family of `name`, or null.
const Family* find_family(std::string_view name);
/// Every family read from a Hugging Face config.json, in the registry's order; `count` receives their number.
const Family* const* checkpoint_families(std::size_t& count);
/// The model_type values read, as a list for messages ("a, b or c").
std::string checkpoint_family_names();

/// True when `name` matches `pattern` ("{}" standing for a layer number), the layer number in `layer`.
bool match_name(std::string_view pattern, std::string_view name, std::size_t& layer);

}  // namespace families
}  // namespace attnscope
