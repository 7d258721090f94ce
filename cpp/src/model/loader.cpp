// CheckpointLoader: config.json read by its family into the plan first (nothing proportional to the model exists
// before the plan's sizes passed their limits and its parameter bytes were counted), then the index and every header
// checked against the family's tensor table, then one allocation, then every file's data streamed in chunks, widened
// to F32, checked for NaN and infinity, and scattered straight into the packed panels the kernels read.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>

#include "../families/family.hpp"
#include "../file_errors.hpp"
#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "../kernels/widen.hpp"
#include "pass.hpp"
#include "scatter.hpp"

namespace attnscope {
namespace model {
namespace {

using json::Num;

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

}  // namespace
}  // namespace model

using json::Num;

struct CheckpointLoader::Impl {
    std::string call;
    const families::Family* family = nullptr;
    plan::Plan plan;
    ModelConfig config;
    model::Weights dry;                       // sizes only: the shapes the files must have
    std::vector<std::size_t> first_bit;       // per table row, its bits in `present` (one per layer, or one)
    std::vector<std::uint8_t> present;  // bytes, not vector<bool>: its code costs the .wasm 2 KB
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
namespace {

// A name in a message: at most a couple of hundred characters of it (a file may hold a megabyte-long name).
std::string quoted(std::string_view name)
{
    constexpr std::size_t most = 200;
    return "'" + std::string(name.substr(0, most)) + (name.size() > most ? "…' (" + std::string(Num(name.size())) + " characters)" : "'");
}

std::string layer_name(const char* pattern, std::size_t layer)
{
    const std::string_view p = pattern;
    const std::size_t hole = p.find("{}");
    if (hole == std::string_view::npos) return std::string(p);
    return json::join({p.substr(0, hole), json::Num(layer), p.substr(hole + 2)});
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace
}  // namespace model

bool CheckpointLoader::Impl::group_present(families::Group g) const
{
    for (std::size_t e = 0; e < family->tensor_count; ++e)
        if (family->tensors[e].group == g)
            for (std::size_t b = first_bit[e]; b < (e + 1 < first_bit.size() ? first_bit[e + 1] : present.size()); ++b)
                if (present[b]) return true;
    return false;
}

bool CheckpointLoader::Impl::head() const
{
    if (!plan.head.present) return false;
    if (architecture_head >= 0) return architecture_head == 1;
    const bool own = group_present(families::Group::lm_head) || group_present(families::Group::mlm_head);
    return plan.head.tied && plan.kind != plan::Kind::encoder ? prefixed || own : own;
}

CheckpointLoader::CheckpointLoader(const std::string& text) : CheckpointLoader(text, "loadModel") {}

CheckpointLoader::CheckpointLoader(const std::string& text, const char* call) : impl_(std::make_unique<Impl>())
{
    Impl& s = *impl_;
    s.call = call;
    const std::string prefix = "config.json: ";
    // Each JSON file a checkpoint's loader reads has a size limit: a real config is a few KB.
    if (text.size() > max_config_bytes)
        file_errors::range_error({call, ": config.json: ", Num(text.size()), " bytes, more than the ", Num(max_config_bytes),
                                  " a config may have"});
    json::Document doc;
    std::string error;
    if (!doc.parse(text, error)) file_errors::range_error({call, ": ", prefix, "invalid JSON: ", error});
    const json::Value root = doc.root();
    if (!root.is(json::Type::object)) file_errors::type_error({call, ": ", prefix, "the document"}, "an object", root);
    const families::Config f(root, std::string(call) + ": " + prefix);
    if (!f.has("model_type")) f.fail({"model_type: missing (expected ", families::checkpoint_family_names(), ")"});
    const std::string type = f.text("model_type", "");
    std::size_t count = 0;
    const families::Family* const* all = families::checkpoint_families(count);
    for (std::size_t i = 0; i < count; ++i)
        if (type == all[i]->name) s.family = all[i];
    if (!s.family) f.fail({"model_type: ", f.get("model_type").excerpt(), " is not supported (expected ", families::checkpoint_family_names(), ")"});
    // `architectures` names the class the checkpoint was saved from: it must be one of this family's, and it says
    // whether the files hold an LM head (GPT2LMHeadModel) or not (GPT2Model), whatever their names' prefixes.
    if (f.has("architectures")) {
        const json::Value list = f.get("architectures");
        if (!list.is(json::Type::array) || list.size() == 0 || !list.first().is(json::Type::string))
            f.type_fail("architectures", "an array of class names", list);
        s.architecture = list.first().string();
        std::string known;
        for (const families::Architecture* a = s.family->architectures; a->name; ++a) {
            if (s.architecture == a->name) s.architecture_head = a->lm_head ? 1 : 0;
            known += std::string(known.empty() ? "" : ", ") + a->name;
        }
        if (s.architecture_head < 0)
            f.fail({"architectures: ", list.first().excerpt(), " is not a class of model_type \"", type, "\" read here (expected ", known, ")"});
    }
    s.plan = s.family->read(f);
    model::validate_plan(s.plan);
    // The least the config can mean (no optional head) must fit before anything proportional to it exists.
    model::declare_weights(s.plan, s.dry, false, false);
    model::check_parameter_bytes(model::weight_floats(s.dry), s.plan.family, call);
    model::declare_weights(s.plan, s.dry, false);
    s.config = model::summary(s.plan, true);
    std::size_t bits = 0;
    for (std::size_t e = 0; e < s.family->tensor_count; ++e) {
        const families::TensorName& t = s.family->tensors[e];
        s.first_bit.push_back(bits);
        bits += model::per_layer(t.part) ? s.plan.stacks[t.stack].layers() : 1;
    }
    s.present.assign(bits, 0);
    s.found_in.assign(bits, 0);
    s.file_order.push_back("model.safetensors");
    s.files["model.safetensors"].order = 0;
}

CheckpointLoader::~CheckpointLoader() = default;

const plan::Plan& CheckpointLoader::plan() const { return impl_->plan; }
const ModelConfig& CheckpointLoader::config() const { return impl_->config; }
void CheckpointLoader::allow_non_finite(bool allow) { impl_->allow_non_finite = allow; }

void CheckpointLoader::set_index(const std::string& text)
{
    Impl& s = *impl_;
    const std::string file = "model.safetensors.index.json";
    if (s.has_index || s.files.begin()->second.has_header) s.fail(file, {"set_index must come once, before any header"});
    if (text.size() > max_index_bytes)
        s.fail(file, {Num(text.size()), " bytes, more than the ", Num(max_index_bytes), " an index may have"});
    json::Document doc;
    std::string error;
    if (!doc.parse(text, error)) s.fail(file, {"invalid JSON: ", error});
    const json::Value root = doc.root();
    if (!root.is(json::Type::object)) file_errors::type_error({s.call, ": ", file, ": ", "the document"}, "an object", root);
    json::Value map(root);
    if (!root.find("weight_map", map)) s.fail(file, {"weight_map: missing"});
    if (!map.is(json::Type::object)) file_errors::type_error({s.call, ": ", file, ": ", "weight_map"}, "an object", map);
    s.file_order.clear();
    s.files.clear();  // the shards seen, so each entry costs a lookup, not a pass over the list
    json::Value k = map.first();
    for (std::size_t i = 0, n = map.size(); i < n; ++i, k = k.following().following()) {
        const json::Value v = k.following();
        const std::string name = k.string();
        if (!v.is(json::Type::string)) file_errors::type_error({s.call, ": ", file, ": ", "weight_map[", model::quoted(name), "]"}, "a file name", v);
        const std::string shard = v.string();
        // A shard is a plain file name in the checkpoint's folder: no path, no "." or "..".
        if (shard.empty() || shard == "." || shard == ".." || shard.find_first_of("/\\") != std::string::npos ||
            shard.find('\0') != std::string::npos)
            s.fail(file, {"weight_map[", model::quoted(name), "]: expected a file name, got ", v.excerpt()});
        const auto added = s.files.emplace(shard, model::FileState());
        if (added.second) {
            added.first->second.order = std::uint32_t(s.file_order.size());
            s.file_order.push_back(shard);
        }
        s.index.emplace(name, std::make_pair(shard, false));
    }
    if (s.file_order.empty()) s.fail(file, {"weight_map: names no tensor"});
    s.has_index = true;
}

std::vector<std::string> CheckpointLoader::files() const { return impl_->file_order; }

std::size_t CheckpointLoader::needed_header_bytes(const std::string& file, const std::uint8_t* first8, std::uint64_t file_size,
                                                  const char* call)
{
    try {
        return safetensors_header_bytes(first8, 8, file_size);
    } catch (const FileError& e) {
        throw FileError(e.kind(), json::join({call, ": ", file, ": ", e.what()}));
    }
}

std::size_t CheckpointLoader::add_header(const std::string& name, const std::uint8_t* bytes, std::size_t size, std::uint64_t file_size)
{
    Impl& s = *impl_;
    if (s.allocated) s.fail(name, {"add_header after allocate()"});
    const auto known = s.files.find(name);
    if (known == s.files.end()) {
        if (s.has_index) s.fail(name, {"not a file the index names"});
        s.fail(name, {"a checkpoint without an index is one file, model.safetensors"});
    }
    model::FileState& f = known->second;
    if (f.has_header) s.fail(name, {"its header was added twice"});
    SafetensorsHeader header;
    try {
        header = read_safetensors_header(bytes, size, file_size, true);
    } catch (const FileError& e) {
        throw FileError(e.kind(), json::join({s.call, ": ", name, ": ", e.what()}));
    }
    const families::Family& fam = *s.family;
    for (const SafetensorsTensor& t : header.tensors) {
        model::FileTensor ft{t.begin, t.end, -1, 0, {}, std::uint8_t(t.dtype == "F32" ? 4 : 2), t.dtype == "BF16", 0};
        if (s.has_index) {
            const auto where = s.index.find(t.name);
            if (where == s.index.end()) s.fail(name, {model::quoted(t.name), " is not in the index's weight_map"});
            if (where->second.first != name) s.fail(name, {model::quoted(t.name), " is here, but the index puts it in ", where->second.first});
            where->second.second = true;
        }
        std::string_view bare = t.name;
        for (const char* const* p = fam.prefixes; *p; ++p)
            if (model::starts_with(bare, *p)) {
                bare.remove_prefix(std::char_traits<char>::length(*p));
                s.prefixed = true;
                break;
            }
        std::size_t layer = 0;
        bool skip = false;
        for (const char* const* p = fam.ignored; *p && !skip; ++p) skip = families::match_name(*p, bare, layer);
        int entry = -1;
        for (std::size_t e = 0; e < fam.tensor_count && entry < 0 && !skip; ++e)
            if (families::match_name(fam.tensors[e].pattern, bare, layer)) entry = int(e);
        if (!skip) {
            const families::TensorName* row = entry >= 0 ? &fam.tensors[entry] : nullptr;
            const bool layered = row && model::per_layer(row->part);
            model::Destination d;
            if (row && (!layered || layer < s.plan.stacks[row->stack].layers()))
                d = model::destination_of(s.plan, s.dry, row->part, row->stack, layered ? layer : 0, row->layout);
            // A tied head saved anyway is skipped, as HF skips it, when the family's table makes the head optional.
            if (!d.exists() && row && row->part == model::Part::head && s.plan.head.tied && row->group == families::Group::lm_head) {
                skip = true;
            } else if (!d.exists()) {
                s.fail(name, {model::quoted(t.name), " is not a tensor of a ", fam.name, " checkpoint with this config"});
            }
            if (!skip) {
                if (t.shape != d.shape)
                    s.fail(name, {model::quoted(t.name), ": expected shape ", to_string(d.shape), " (from config.json), got ", to_string(t.shape)});
                const std::size_t b = s.bit(std::size_t(entry), layered ? layer : 0);
                if (s.present[b]) s.fail(name, {model::quoted(t.name), " appears twice (also in ", s.file_order[s.found_in[b]], ")"});
                s.present[b] = 1;
                s.found_in[b] = f.order;
                // Two names of one Parameter: whichever comes first is read.
                const int alias = row->alias_of >= 0 ? row->alias_of : -1;
                const bool other = alias >= 0 ? s.present[s.bit(std::size_t(alias), layered ? layer : 0)] : [&] {
                    for (std::size_t e = 0; e < fam.tensor_count; ++e)
                        if (fam.tensors[e].alias_of == entry && s.present[s.bit(e, layered ? layer : 0)]) return true;
                    return false;
                }();
                if (!other) {
                    ft.entry = entry;
                    ft.layer = layered ? layer : 0;
                    ft.name = t.name;
                }
            }
        }
        f.tensors.push_back(std::move(ft));
    }
    f.has_header = true;
    f.size = file_size;
    f.position = header.data_begin;
    return header.data_begin;
}

std::uint64_t CheckpointLoader::parameter_bytes() const
{
    model::Weights w;
    model::declare_weights(impl_->plan, w, false, impl_->head());
    return 4 * model::weight_floats(w);
}

MemoryPlan CheckpointLoader::memory_plan(std::size_t tokens) const
{
    const Impl& s = *impl_;
    std::size_t longest = 0;
    for (const plan::Stack& st : s.plan.stacks) longest = std::max(longest, st.max_positions);
    if (tokens > longest)
        throw std::invalid_argument(json::join({s.call, ": planTokens: expected at most the model's ", Num(longest), " positions, got ", Num(tokens)}));
    MemoryPlan p;
    p.exact = std::all_of(s.file_order.begin(), s.file_order.end(), [&](const std::string& file) {
        const auto f = s.files.find(file);
        return f != s.files.end() && f->second.has_header;
    });
    const bool head = p.exact && s.head();  // before the headers: no head found, the smallest the config can mean
    model::Weights w;
    model::declare_weights(s.plan, w, false, head);
    p.parameters = model::weight_floats(w);
    p.parameter_bytes = 4 * p.parameters;
    p.tokens = tokens ? tokens : std::min(default_plan_tokens, longest);
    p.workspace_bytes = model::forward_workspace_bytes(s.plan, p.tokens, head);
    return p;
}

void CheckpointLoader::allocate()
{
    Impl& s = *impl_;
    if (s.allocated) s.fail("allocate", {"called twice"});
    for (const std::string& file : s.file_order)
        if (!s.files[file].has_header)
            s.fail(file, {s.has_index ? "the index names this file, but its header was never added" : "its header was never added"});
    for (const auto& entry : s.index)
        if (!entry.second.second) s.fail(entry.second.first, {"the index puts ", model::quoted(entry.first), " in this file, but its header does not have it"});
    const bool head = s.head();
    s.plan.head.present = head;
    model::declare_weights(s.plan, s.dry, false);
    const families::Family& fam = *s.family;
    // Every tensor the plan needs is present; a head's tensors all, or (without a head) none are read.
    for (std::size_t e = 0; e < fam.tensor_count; ++e) {
        const families::TensorName& t = fam.tensors[e];
        if (t.alias_of >= 0 || (t.group != families::Group::required && !head)) continue;
        const std::size_t layers = model::per_layer(t.part) ? s.plan.stacks[t.stack].layers() : 1;
        for (std::size_t l = 0; l < layers; ++l) {
            if (!model::destination_of(s.plan, s.dry, t.part, t.stack, l, t.layout).exists()) continue;
            bool found = s.present[s.bit(e, l)];
            for (std::size_t a = 0; a < fam.tensor_count && !found; ++a)
                found = fam.tensors[a].alias_of == int(e) && s.present[s.bit(a, l)];
            if (found) continue;
            const std::string why = t.group == families::Group::required ? ""
                                    : s.group_present(t.group)         ? " (the file has other tensors of its head)"
                                                                       : " (architectures says " + s.architecture + ", a class with a head)";
            s.fail(s.file_order.front(), {"the tensor ", model::quoted(model::layer_name(t.pattern, l)), " is missing", why});
        }
    }
    const std::uint64_t floats = model::weight_floats(s.dry);
    model::check_parameter_bytes(floats, s.plan.family, s.call.c_str());
    s.model = std::make_unique<Transformer::Impl>();
    Transformer::Impl& m = *s.model;
    m.plan = s.plan;
    m.config = model::summary(m.plan, head);
    m.parameter_bytes = 4 * floats;
    model::declare_weights(m.plan, m.weights, true);
    s.destinations = std::vector<model::Destination>(s.present.size());
    for (auto& file : s.files)
        for (model::FileTensor& t : file.second.tensors) {
            if (t.entry < 0) continue;
            const families::TensorName& row = fam.tensors[t.entry];
            if (row.group != families::Group::required && !head) {
                t.entry = -1;  // a head the architecture does not have: its bytes are skipped
                continue;
            }
            s.destinations[s.bit(std::size_t(t.entry), t.layer)] = model::destination_of(m.plan, m.weights, row.part, row.stack, t.layer, row.layout);
        }
    s.allocated = true;
}

void CheckpointLoader::write(const std::string& name, std::uint64_t offset, const std::uint8_t* data, std::size_t size)
{
    Impl& s = *impl_;
    if (!s.allocated) s.fail(name, {"write before allocate()"});
    const auto it = s.files.find(name);
    if (it == s.files.end()) s.fail(name, {"not a file of this checkpoint"});
    model::FileState& f = it->second;
    if (offset != f.position) s.fail(name, {"write at byte ", Num(offset), ", expected ", Num(f.position), " (chunks come in order, without gaps)"});
    if (size > f.size - f.position)
        s.fail(name, {"write of ", Num(size), " bytes at ", Num(offset), " runs past the end of the file (", Num(f.size), " bytes)"});
    std::size_t pos = std::size_t(offset);
    while (size > 0) {
        while (f.cursor < f.tensors.size() && f.tensors[f.cursor].end <= pos) ++f.cursor;
        model::FileTensor& t = f.tensors[f.cursor];
        const std::size_t take = std::min(size, t.end - pos);
        if (t.entry >= 0) {
            const model::Destination& d = s.destinations[s.bit(std::size_t(t.entry), t.layer)];
            t.non_finite += model::stream_elements(d, t.element_bytes, t.bf16, pos - t.begin, data, take, f.carry, f.carry_bytes);
            if (pos + take == t.end && t.non_finite && !s.allow_non_finite)
                s.fail(name, {model::quoted(t.name), " holds ", Num(t.non_finite), " values that are NaN or infinite (every map and logit "
                              "would be NaN; load with allowNonFinite: true to read them anyway)"});
        }
        data += take;
        pos += take;
        size -= take;
    }
    f.position = pos;
}

std::unique_ptr<Transformer> CheckpointLoader::finish()
{
    Impl& s = *impl_;
    if (!s.allocated || s.finished) s.fail("finish", {s.finished ? "called twice" : "before allocate()"});
    for (const std::string& file : s.file_order) {
        const model::FileState& f = s.files[file];
        if (f.position != f.size) s.fail(file, {"only ", Num(f.position), " of its ", Num(f.size), " bytes arrived"});
    }
    s.finished = true;
    return std::make_unique<Transformer>(std::move(s.model));
}

std::unique_ptr<Transformer> load_checkpoint(
    const std::string& config_json, const std::map<std::string, std::pair<const std::uint8_t*, std::size_t>>& files)
{
    CheckpointLoader loader(config_json);
    const auto index = files.find("model.safetensors.index.json");
    if (index != files.end()) loader.set_index(std::string(reinterpret_cast<const char*>(index->second.first), index->second.second));
    std::vector<std::size_t> data_begin;
    for (const std::string& name : loader.files()) {
        const auto f = files.find(name);
        if (f == files.end()) file_errors::range_error({"loadModel: ", name, ": the file was not given"});
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
