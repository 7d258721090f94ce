// PretrainedLoader: config, index and headers checked against each other before anything is allocated, then every
// file's data streamed in chunks, widened to F32 and scattered straight into the packed panels the kernels read.
#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "../file_errors.hpp"
#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "../kernels/widen.hpp"
#include "layout.hpp"
#include "parts.hpp"

namespace attnscope {
namespace pretrained {
namespace {

using file_errors::range_error;
using json::Num;
using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;

struct FileTensor {
    std::size_t begin, end;  // byte offsets in the file
    int spec = -1;           // -1: skipped
    std::uint8_t element_bytes = 4;
    bool bf16 = false;
};

struct FileState {
    bool has_header = false;
    std::uint64_t size = 0, position = 0;
    std::vector<FileTensor> tensors;  // in data order
    std::size_t cursor = 0;
    std::uint8_t carry[4] = {};
    std::size_t carry_bytes = 0;
};

struct Found {
    std::string file, name;  // where it was found, under which name (without the prefix)
    Destination destination;
    bool present = false;
};

[[noreturn]] void fail(const std::string& file, std::initializer_list<std::string_view> parts)
{
    std::string message = json::join(parts);
    range_error({call_name, ": ", file, ": ", message});
}

}  // namespace
}  // namespace pretrained

struct PretrainedLoader::Impl {
    PretrainedConfig config;
    std::vector<pretrained::TensorSpec> specs;
    std::map<std::string, std::size_t> spec_of;  // name without prefix → index in specs
    std::vector<pretrained::Found> found;        // per spec
    bool has_index = false;
    std::map<std::string, std::pair<std::string, bool>> index;  // tensor name (as in the files) → shard, seen
    std::vector<std::string> file_order;
    std::map<std::string, pretrained::FileState> files;
    std::unique_ptr<PretrainedModel::Impl> model;
    bool allocated = false, finished = false;
    bool prefixed = false;  // some tensor's name carries the task model's prefix (transformer., model.)

    // Whether the model has an LM head, from what the headers hold (see PretrainedConfig::has_lm_head).
    void heads(bool& lm, bool& mlm) const
    {
        bool lm_group = false;
        mlm = false;
        for (std::size_t i = 0; i < specs.size(); ++i) {
            if (specs[i].group == pretrained::Group::lm_head && found[i].present) lm_group = true;
            if (specs[i].group == pretrained::Group::mlm_head && found[i].present) mlm = true;
        }
        lm = config.family == PretrainedFamily::bert ? mlm : config.tied ? prefixed : lm_group;
    }
};

namespace pretrained {
namespace {

// Elements [e0, e0 + n) of a tensor, already F32, to their places.
void scatter(const Destination& d, std::size_t e0, const float* x, std::size_t n)
{
    if (d.layout == Layout::plain) {
        std::memcpy(d.base + e0, x, n * sizeof(float));
        return;
    }
    std::size_t r = e0 / d.cols, c = e0 % d.cols;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = d.layout == Layout::rows_out ? c : r;
        const std::size_t j = d.col0 + (d.layout == Layout::rows_out ? r : c);
        d.base[(j / NR) * d.K * NR + k * NR + j % NR] = x[i];
        if (++c == d.cols) {
            c = 0;
            ++r;
        }
    }
}

// Whole elements of one tensor from `bytes` (F32, F16 or BF16) starting at element e0.
void convert(const Destination& d, const FileTensor& t, std::size_t e0, const std::uint8_t* bytes, std::size_t n)
{
    float buffer[256];
    for (std::size_t i = 0; i < n; i += 256) {
        const std::size_t m = std::min<std::size_t>(256, n - i);
        if (t.element_bytes == 4) kernels::read_f32(bytes + 4 * i, m, buffer);
        else kernels::widen_half{}(arch{}, bytes + 2 * i, m, t.bf16, buffer);
        scatter(d, e0 + i, buffer, m);
    }
}

}  // namespace
}  // namespace pretrained

using pretrained::call_name;
using pretrained::fail;
using pretrained::Num;

PretrainedLoader::PretrainedLoader(const std::string& config_json) : impl_(std::make_unique<Impl>())
{
    Impl& s = *impl_;
    s.config = pretrained::read_config(config_json);
    s.specs = pretrained::tensor_specs(s.config);
    // An alias (a second name of one Parameter) leads to the spec it names: whichever comes first is read.
    for (std::size_t i = 0; i < s.specs.size(); ++i)
        s.spec_of.emplace(s.specs[i].name, s.specs[i].alias_of == pretrained::TensorSpec::none ? i : s.specs[i].alias_of);
    s.found.resize(s.specs.size());
    s.file_order.push_back("model.safetensors");
}

PretrainedLoader::~PretrainedLoader() = default;

const PretrainedConfig& PretrainedLoader::config() const { return impl_->config; }

void PretrainedLoader::set_index(const std::string& text)
{
    Impl& s = *impl_;
    const std::string file = "model.safetensors.index.json";
    if (s.has_index || !s.files.empty()) fail(file, {"set_index must come once, before any header"});
    json::Document doc;
    std::string error;
    if (!doc.parse(text, error)) fail(file, {"invalid JSON: ", error});
    const json::Value root = doc.root();
    std::string duplicate;
    if (!root.is(json::Type::object)) file_errors::type_error({call_name, ": ", file, ": ", "the document"}, "an object", root);
    if (root.has_duplicate_keys(duplicate)) fail(file, {"the key '", duplicate, "' appears twice"});
    json::Value map(root);
    if (!root.find("weight_map", map)) fail(file, {"weight_map: missing"});
    if (!map.is(json::Type::object)) file_errors::type_error({call_name, ": ", file, ": ", "weight_map"}, "an object", map);
    if (map.has_duplicate_keys(duplicate)) fail(file, {"weight_map: the tensor '", duplicate, "' appears twice"});
    s.file_order.clear();
    json::Value k = map.first();
    for (std::size_t i = 0, n = map.size(); i < n; ++i, k = k.following().following()) {
        const json::Value v = k.following();
        if (!v.is(json::Type::string))
            file_errors::type_error({call_name, ": ", file, ": ", "weight_map['", k.string(), "']"}, "a file name", v);
        const std::string shard = v.string();
        if (shard.empty()) fail(file, {"weight_map['", k.string(), "']: an empty file name"});
        if (std::find(s.file_order.begin(), s.file_order.end(), shard) == s.file_order.end()) s.file_order.push_back(shard);
        s.index.emplace(k.string(), std::make_pair(shard, false));
    }
    if (s.file_order.empty()) fail(file, {"weight_map: names no tensor"});
    s.has_index = true;
}

std::vector<std::string> PretrainedLoader::files() const { return impl_->file_order; }

std::size_t PretrainedLoader::needed_header_bytes(const std::uint8_t* first8, std::uint64_t file_size)
{
    try {
        return safetensors_header_bytes(first8, 8, file_size);
    } catch (const FileError& e) {
        fail("safetensors", {e.what()});
    }
}

std::size_t PretrainedLoader::add_header(const std::string& name, const std::uint8_t* bytes, std::size_t size,
                                         std::uint64_t file_size)
{
    Impl& s = *impl_;
    if (s.allocated) fail(name, {"add_header after allocate()"});
    if (std::find(s.file_order.begin(), s.file_order.end(), name) == s.file_order.end()) {
        if (s.has_index) fail(name, {"not a file the index names"});
        fail(name, {"a checkpoint without an index is one file, model.safetensors"});
    }
    pretrained::FileState& f = s.files[name];
    if (f.has_header) fail(name, {"its header was added twice"});
    SafetensorsHeader header;
    try {
        header = read_safetensors_header(bytes, size, file_size, true);
    } catch (const FileError& e) {
        throw FileError(e.kind(), json::join({call_name, ": ", name, ": ", e.what()}));
    }
    for (const SafetensorsTensor& t : header.tensors) {
        pretrained::FileTensor ft{t.begin, t.end, -1, std::uint8_t(t.dtype == "F32" ? 4 : 2), t.dtype == "BF16"};
        if (s.has_index) {
            const auto where = s.index.find(t.name);
            if (where == s.index.end()) fail(name, {"'", t.name, "' is not in the index's weight_map"});
            if (where->second.first != name)
                fail(name, {"'", t.name, "' is here, but the index puts it in ", where->second.first});
            where->second.second = true;
        }
        if (!pretrained::ignored_tensor(s.config, t.name)) {
            const std::string bare = pretrained::strip_prefix(s.config, t.name);
            if (bare.size() != t.name.size()) s.prefixed = true;
            const auto spec = s.spec_of.find(bare);
            if (spec == s.spec_of.end())
                fail(name, {"'", t.name, "' is not a tensor of a ", to_string(s.config.family), " checkpoint with this config"});
            const pretrained::TensorSpec& sp = s.specs[spec->second];
            pretrained::Found& found = s.found[spec->second];
            if (t.shape != sp.shape)
                fail(name, {"'", t.name, "': expected shape ", to_string(sp.shape), " (from config.json), got ", to_string(t.shape)});
            if (found.present && found.name == bare) fail(name, {"'", t.name, "' appears twice (also in ", found.file, ")"});
            if (!found.present) {  // else: the other name of the same Parameter, already read
                found.present = true;
                found.file = name;
                found.name = bare;
                ft.spec = int(spec->second);
            }
        }
        f.tensors.push_back(ft);
    }
    f.has_header = true;
    f.size = file_size;
    f.position = header.data_begin;
    return header.data_begin;
}

std::uint64_t PretrainedLoader::parameter_bytes() const
{
    bool lm = false, mlm = false;
    impl_->heads(lm, mlm);
    return 4 * pretrained::parameter_floats(impl_->config, lm, mlm);
}

PretrainedPlan PretrainedLoader::plan(std::size_t tokens) const
{
    const Impl& s = *impl_;
    PretrainedConfig c = s.config;
    if (tokens > c.max_positions)
        throw std::invalid_argument(json::join({call_name, ": planTokens: expected at most max_position_embeddings (",
                                                Num(c.max_positions), "), got ", Num(tokens)}));
    PretrainedPlan p;
    p.exact = std::all_of(s.file_order.begin(), s.file_order.end(), [&](const std::string& file) {
        const auto f = s.files.find(file);
        return f != s.files.end() && f->second.has_header;
    });
    bool mlm = false;
    s.heads(c.has_lm_head, mlm);  // before the headers: no head found, the smallest the config can mean
    p.parameters = pretrained::parameter_floats(c, c.has_lm_head, mlm);
    p.parameter_bytes = 4 * p.parameters;
    p.tokens = tokens ? tokens : std::min(default_plan_tokens, c.max_positions);
    p.workspace_bytes = pretrained::forward_workspace_bytes(c, p.tokens);
    return p;
}

void PretrainedLoader::allocate()
{
    Impl& s = *impl_;
    if (s.allocated) fail("allocate", {"called twice"});
    for (const std::string& file : s.file_order)
        if (!s.files.count(file) || !s.files[file].has_header)
            fail(file, {s.has_index ? "the index names this file, but its header was never added" : "its header was never added"});
    for (const auto& entry : s.index)
        if (!entry.second.second)
            fail(entry.second.first, {"the index puts '", entry.first, "' in this file, but its header does not have it"});
    // Every required tensor present; the optional heads all-or-nothing.
    bool groups[3] = {true, false, false}, missing[3] = {false, false, false};
    const pretrained::TensorSpec* first_missing[3] = {};
    for (std::size_t i = 0; i < s.specs.size(); ++i) {
        if (s.specs[i].alias_of != pretrained::TensorSpec::none) continue;  // found under its main name
        const int g = int(s.specs[i].group);
        if (s.found[i].present) groups[g] = true;
        else if (!missing[g]) {
            missing[g] = true;
            first_missing[g] = &s.specs[i];
        }
    }
    for (int g = 0; g < 3; ++g)
        if (groups[g] && missing[g])
            fail(s.file_order.front(), {"the tensor '", first_missing[g]->name, "' is missing",
                                        g == 0 ? "" : " (the file has other tensors of its head)"});
    const std::uint64_t bytes = parameter_bytes();  // throws length_error past the limit
    s.model = std::make_unique<PretrainedModel::Impl>();
    PretrainedModel::Impl& m = *s.model;
    m.config = s.config;
    bool mlm = false;
    s.heads(m.config.has_lm_head, mlm);
    m.parameter_bytes = bytes;
    pretrained::allocate_weights(m, groups[2]);
    for (std::size_t i = 0; i < s.specs.size(); ++i)
        if (s.found[i].present) s.found[i].destination = pretrained::destination_of(m, s.specs[i]);
    s.allocated = true;
}

void PretrainedLoader::write(const std::string& name, std::uint64_t offset, const std::uint8_t* data, std::size_t size)
{
    Impl& s = *impl_;
    if (!s.allocated) fail(name, {"write before allocate()"});
    const auto it = s.files.find(name);
    if (it == s.files.end()) fail(name, {"not a file of this checkpoint"});
    pretrained::FileState& f = it->second;
    if (offset != f.position)
        fail(name, {"write at byte ", Num(offset), ", expected ", Num(f.position), " (chunks come in order, without gaps)"});
    if (size > f.size - f.position)
        fail(name, {"write of ", Num(size), " bytes at ", Num(offset), " runs past the end of the file (", Num(f.size), " bytes)"});
    std::size_t pos = std::size_t(offset);
    while (size > 0) {
        while (f.cursor < f.tensors.size() && f.tensors[f.cursor].end <= pos) ++f.cursor;
        const pretrained::FileTensor& t = f.tensors[f.cursor];
        const std::size_t take = std::min(size, t.end - pos);
        if (t.spec >= 0) {
            const pretrained::Destination& d = s.found[std::size_t(t.spec)].destination;
            const std::size_t eb = t.element_bytes;
            const std::uint8_t* p = data;
            std::size_t left = take, at = pos;
            if (f.carry_bytes > 0) {  // finish the element the previous chunk split
                const std::size_t more = std::min(left, eb - f.carry_bytes);
                std::memcpy(f.carry + f.carry_bytes, p, more);
                f.carry_bytes += more;
                p += more;
                left -= more;
                at += more;
                if (f.carry_bytes == eb) {
                    pretrained::convert(d, t, (at - t.begin) / eb - 1, f.carry, 1);
                    f.carry_bytes = 0;
                }
            }
            const std::size_t whole = left / eb;
            pretrained::convert(d, t, (at - t.begin) / eb, p, whole);
            const std::size_t rest = left - whole * eb;
            std::memcpy(f.carry + f.carry_bytes, p + whole * eb, rest);
            f.carry_bytes += rest;
        }
        data += take;
        pos += take;
        size -= take;
    }
    f.position = pos;
}

std::unique_ptr<PretrainedModel> PretrainedLoader::finish()
{
    Impl& s = *impl_;
    if (!s.allocated || s.finished) fail("finish", {s.finished ? "called twice" : "before allocate()"});
    for (const std::string& file : s.file_order) {
        const pretrained::FileState& f = s.files[file];
        if (f.position != f.size)
            fail(file, {"only ", Num(f.position), " of its ", Num(f.size), " bytes arrived"});
    }
    s.finished = true;
    return std::make_unique<PretrainedModel>(std::move(s.model));
}

std::unique_ptr<PretrainedModel> load_pretrained(
    const std::string& config_json, const std::map<std::string, std::pair<const std::uint8_t*, std::size_t>>& files)
{
    PretrainedLoader loader(config_json);
    const auto index = files.find("model.safetensors.index.json");
    if (index != files.end())
        loader.set_index(std::string(reinterpret_cast<const char*>(index->second.first), index->second.second));
    std::vector<std::size_t> data_begin;
    for (const std::string& name : loader.files()) {
        const auto f = files.find(name);
        if (f == files.end()) fail(name, {"the file was not given"});
        data_begin.push_back(loader.add_header(name, f->second.first, f->second.second, f->second.second));
    }
    loader.allocate();
    std::size_t i = 0;
    for (const std::string& name : loader.files()) {
        const auto& f = files.find(name)->second;
        const std::size_t begin = data_begin[i++];
        loader.write(name, begin, f.first + begin, f.second - begin);
    }
    return loader.finish();
}

}  // namespace attnscope
