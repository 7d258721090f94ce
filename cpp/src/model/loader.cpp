// CheckpointLoader, its first half: config.json read by its family into the plan first (nothing proportional to the model
// exists before the plan's sizes passed their limits and its parameter bytes were counted), then the index and every
// header checked against the family's tensor table. The data follow in loader_data.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "loader_state.hpp"

namespace attnscope {

using json::Num;

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

std::size_t checkpoint_file_limit(const std::string& file)
{
    if (file == "config.json") return max_config_bytes;
    if (file == "model.safetensors.index.json") return max_index_bytes;
    if (file == "tokenizer.json") return max_tokenizer_bytes;
    if (file == "tokenizer_config.json") return max_tokenizer_config_bytes;
    return 0;
}

void check_checkpoint_file_size(const char* call, const std::string& file, std::uint64_t bytes, bool complete)
{
    const std::size_t limit = checkpoint_file_limit(file);
    if (limit && bytes > limit)
        file_errors::range_error({call, ": ", file, ": ", complete ? "" : "at least ", Num(bytes), " bytes, more than the ", Num(limit),
                                  " bytes a ", file, " may have (a real one is far smaller)"});
}

CheckpointLoader::CheckpointLoader(const std::string& text) : CheckpointLoader(text, "loadModel") {}

CheckpointLoader::CheckpointLoader(const std::string& text, const char* call) : impl_(std::make_unique<Impl>())
{
    Impl& s = *impl_;
    s.call = call;
    const std::string prefix = "config.json: ";
    // Each JSON file a checkpoint's loader reads has a size limit: a real config is a few KB.
    check_checkpoint_file_size(call, "config.json", text.size(), true);
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
    model::check_parameter_bytes(model::weight_floats(s.dry), model::weight_bytes(s.dry, true), s.plan.family,
                                 (std::string(call) + ": config.json").c_str());
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
    check_checkpoint_file_size(s.call.c_str(), file, text.size(), true);
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
        // A shard is a plain file name in the checkpoint's folder: no path, no "." or "..", at most the 255 bytes a
        // file system allows (every later message names it).
        if (shard.empty() || shard == "." || shard == ".." || shard.find_first_of("/\\") != std::string::npos ||
            shard.find('\0') != std::string::npos || shard.size() > 255)
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
    // At most every tensor of the family's table and every buffer it ignores, at each layer the config has.
    std::size_t ignored = 0, layers = 0;
    for (const char* const* p = s.family->ignored; *p; ++p) ++ignored;
    for (const plan::Stack& st : s.plan.stacks) layers = std::max(layers, st.layers());
    try {
        header = read_safetensors_header(bytes, size, file_size, true, s.present.size() + ignored * layers + 16);
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

}  // namespace attnscope
