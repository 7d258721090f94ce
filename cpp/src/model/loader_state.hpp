// The checkpoint loader's state between its calls (CheckpointLoader::Impl): the plan, the family's table and which of
// its rows the headers held, the files and where each stands. Internal to loader.cpp and loader_data.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../families/family.hpp"
#include "../file_errors.hpp"
#include "../json.hpp"
#include "pass.hpp"

namespace attnscope {
namespace model {

struct FileTensor {
    std::size_t begin, end;     // byte offsets in the file
    int entry = -1;             // the tensor table's row; -1: skipped
    std::size_t layer = 0;
    std::string name;           // as saved (for messages)
    std::uint8_t element_bytes = 4;
    bool bf16 = false;
    std::size_t non_finite = 0;
};

struct FileState {
    std::uint32_t order = 0;  // its place in file_order
    bool has_header = false;
    std::uint64_t size = 0, position = 0;
    std::vector<FileTensor> tensors;  // in data order
    std::size_t cursor = 0;
    std::uint8_t carry[4] = {};
    std::size_t carry_bytes = 0;
};

}  // namespace model

struct CheckpointLoader::Impl {
    std::string call;
    const families::Family* family = nullptr;
    plan::Plan plan;
    ModelConfig config;
    model::Weights dry;                       // sizes only: the shapes the files must have
    std::vector<std::size_t> first_bit;       // per table row, its bits in `present` (one per layer, or one)
    std::vector<std::uint8_t> present;        // bytes, not vector<bool>: its bit access costs the .wasm code
    std::vector<std::uint32_t> found_in;      // per bit: which file of file_order held it (for "appears twice")
    int architecture_head = -1;               // `architectures` says: 1 an LM head, 0 none, -1 not said
    std::string architecture;
    bool has_index = false;
    std::map<std::string, std::pair<std::string, bool>> index;  // tensor name → shard, seen
    std::vector<std::string> file_order;
    std::map<std::string, model::FileState> files;
    std::unique_ptr<Transformer::Impl> model;
    std::vector<model::Destination> destinations;  // per bit, once allocated
    bool allocated = false, finished = false, prefixed = false, allow_non_finite = false;

    [[noreturn]] void fail(const std::string& file, std::initializer_list<std::string_view> parts) const
    {
        file_errors::range_error({call, ": ", file, ": ", json::join(parts)});
    }
    std::size_t bit(std::size_t entry, std::size_t layer) const { return first_bit[entry] + layer; }
    // Whether the files hold a language-model head, from `architectures` when the config names one, else from the
    // tensors: a tied head exists when the file is a task model's (its names carry the prefix) or holds the head's
    // own tensors (a bias, a transform); an untied one when its weight is there.
    bool head() const;
    bool group_present(families::Group g) const;
};

namespace model {

/// A name in a message: at most a couple of hundred characters of it (a file may hold a megabyte-long name).
inline std::string quoted(std::string_view name)
{
    constexpr std::size_t most = 200;
    return "'" + std::string(name.substr(0, most)) + (name.size() > most ? "…' (" + std::string(json::Num(name.size())) + " characters)" : "'");
}

inline std::string layer_name(const char* pattern, std::size_t layer)
{
    const std::string_view p = pattern;
    const std::size_t hole = p.find("{}");
    if (hole == std::string_view::npos) return std::string(p);
    return json::join({p.substr(0, hole), json::Num(layer), p.substr(hole + 2)});
}

inline bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace model

}  // namespace attnscope
