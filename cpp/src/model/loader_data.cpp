// CheckpointLoader, its second half: the memory plan, one allocation, then every file's data streamed in chunks,
// widened to F32 (a BF16 or F16 file's matrices kept in 16 bits), checked for NaN and infinity, and scattered
// straight into the packed panels the kernels read.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "loader_state.hpp"
#include "scatter.hpp"

namespace attnscope {

using json::Num;

namespace {

using kernels::PanelType;

// The panel type of every matrix of `w` (declared dry from s.plan, with or without its head), in matrices() order:
// 16-bit when every file tensor it receives has that one type (a matrix fed by both F16 and BF16 tensors, or by an
// F32 one, is F32). A tensor split between two matrices (in_proj as cross-attention) makes them agree: both keep
// 16 bits or neither does, as the scatter writes a tensor's elements one way.
std::vector<PanelType> panel_types(const CheckpointLoader::Impl& s, model::Weights& w, bool head)
{
    const families::Family& fam = *s.family;
    std::vector<std::pair<model::Destination, PanelType>> feeds;
    for (const auto& file : s.files)
        for (const model::FileTensor& t : file.second.tensors) {
            if (t.entry < 0) continue;
            const families::TensorName& row = fam.tensors[t.entry];
            if (row.group != families::Group::required && !head) continue;
            model::Destination d = model::destination_of(s.plan, w, row.part, row.stack, t.layer, row.layout);
            if (d.matrix) feeds.emplace_back(std::move(d), t.element_bytes == 4 ? PanelType::f32 : t.bf16 ? PanelType::bf16 : PanelType::f16);
        }
    std::map<const model::Matrix*, PanelType> type;
    for (const auto& f : feeds)
        for (std::size_t g = 0; g < f.first.segments; ++g) {
            const auto it = type.emplace(f.first.seg[g].owner, f.second).first;
            if (it->second != f.second) it->second = PanelType::f32;
        }
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& f : feeds)
            if (f.first.segments == 2 && type[f.first.seg[0].owner] != type[f.first.seg[1].owner]) {
                type[f.first.seg[0].owner] = type[f.first.seg[1].owner] = PanelType::f32;
                changed = true;
            }
    }
    std::vector<PanelType> out;
    for (const model::Matrix* m : model::matrices(w)) {
        const auto it = type.find(m);
        out.push_back(it == type.end() ? PanelType::f32 : it->second);
    }
    return out;
}

}  // namespace

std::uint64_t CheckpointLoader::parameter_bytes() const
{
    const bool head = impl_->head();
    model::Weights w;
    model::declare_weights(impl_->plan, w, false, head);
    model::declare_weights(impl_->plan, w, false, head, panel_types(*impl_, w, head));
    return model::weight_bytes(w);
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
    // Before the headers the dtypes are not known: every matrix in 16 bits, the least a checkpoint can take (as the
    // constructor's check counts it), so that a BF16 model that fits is not refused from config.json alone; then
    // 16 bits where the files have them.
    if (p.exact) model::declare_weights(s.plan, w, false, head, panel_types(s, w, head));
    p.parameters = model::weight_floats(w);
    p.parameter_bytes = model::weight_bytes(w, !p.exact);
    p.tokens = tokens ? tokens : std::min(default_plan_tokens, longest);
    // Products by F32 weights may read their input in slivers (a buffer of its own while each runs); 16-bit ones never
    // do. Before the headers, every matrix counts as 16-bit: the least.
    const std::vector<model::Matrix*> all = model::matrices(w);
    const bool f32_matrices = p.exact && std::any_of(all.begin(), all.end(), [](const model::Matrix* m) {
        return m->exists() && m->type == PanelType::f32;
    });
    p.workspace_bytes = model::forward_workspace_bytes(s.plan, p.tokens, head, f32_matrices);
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
    const std::vector<kernels::PanelType> types = panel_types(s, s.dry, head);
    model::declare_weights(s.plan, s.dry, false, head, types);
    const std::uint64_t bytes = model::weight_bytes(s.dry);
    model::check_parameter_bytes(model::weight_floats(s.dry), bytes, s.plan.family, (s.call + ": config.json").c_str());
    s.model = std::make_unique<Transformer::Impl>();
    Transformer::Impl& m = *s.model;
    m.plan = s.plan;
    m.config = model::summary(m.plan, head);
    m.parameter_bytes = bytes;
    model::declare_weights(m.plan, m.weights, true, head, types);
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
