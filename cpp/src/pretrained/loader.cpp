// PretrainedLoader: config, index and headers checked against each other before anything is allocated, then every
// file's data streamed in chunks, widened to F32 and scattered straight into the packed panels the kernels read.
#include <algorithm>
#include <cstring>
#include <map>

#include "../file_errors.hpp"
#include "../json.hpp"
#include "../kernels/gemm.hpp"
#include "../kernels/widen.hpp"
#include "parts.hpp"

namespace attnscope {
namespace pretrained {
namespace {

using file_errors::range_error;
using json::Num;
using arch = xsimd::default_arch;
constexpr std::size_t NR = kernels::panel_width<arch>;

enum class Layout : std::uint8_t { plain, rows_out, rows_in };

// Where a tensor's elements go: plain (contiguous from base), or into the packed panels of a matrix with K rows
// whose columns col0.. the tensor fills — rows_out for nn.Linear's [out, in], rows_in for Conv1D's [in, out].
struct Destination {
    float* base = nullptr;
    Layout layout = Layout::plain;
    std::size_t K = 0, col0 = 0, cols = 1;  // cols: the file tensor's last dimension
};

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
    std::string file;
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

Destination destination_of(PretrainedModel::Impl& m, const TensorSpec& s)
{
    const PretrainedConfig& c = m.config;
    Weights& w = m.weights;
    LayerWeights* l = s.layer < w.layers.size() ? &w.layers[s.layer] : nullptr;
    const std::size_t q_cols = c.heads * c.head_dim, kv_cols = c.kv_heads * c.head_dim;
    auto plain = [](std::vector<float>& v, std::size_t offset = 0) { return Destination{v.data() + offset, Layout::plain, 0, 0, 1}; };
    auto matrix = [&](Matrix& mat, std::size_t col0) {
        return Destination{mat.packed.data(), s.conv1d ? Layout::rows_in : Layout::rows_out, mat.in, col0, s.shape.back()};
    };
    switch (s.role) {
    case Role::token_embedding: return c.tied && c.has_lm_head ? matrix(w.head, 0) : plain(w.token_embedding);
    case Role::position_embedding: return plain(w.position_embedding);
    case Role::token_type_embedding: return plain(w.token_type_embedding);
    case Role::embed_norm_w: return plain(w.embed_norm.weight);
    case Role::embed_norm_b: return plain(w.embed_norm.bias);
    case Role::norm1_w: return plain(l->norm1.weight);
    case Role::norm1_b: return plain(l->norm1.bias);
    case Role::norm2_w: return plain(l->norm2.weight);
    case Role::norm2_b: return plain(l->norm2.bias);
    case Role::q_norm: return plain(l->q_norm.weight);
    case Role::k_norm: return plain(l->k_norm.weight);
    case Role::q_w: return matrix(l->qkv, 0);
    case Role::k_w: return matrix(l->qkv, q_cols);
    case Role::v_w: return matrix(l->qkv, q_cols + kv_cols);
    case Role::qkv_w: return matrix(l->qkv, 0);
    case Role::q_b: return plain(l->qkv.bias);
    case Role::k_b: return plain(l->qkv.bias, q_cols);
    case Role::v_b: return plain(l->qkv.bias, q_cols + kv_cols);
    case Role::qkv_b: return plain(l->qkv.bias);
    case Role::o_w: return matrix(l->o, 0);
    case Role::o_b: return plain(l->o.bias);
    case Role::up_w: return matrix(l->up, 0);
    case Role::up_b: return plain(l->up.bias);
    case Role::gate_w: return matrix(l->gate, 0);
    case Role::gate_b: return plain(l->gate.bias);
    case Role::down_w: return matrix(l->down, 0);
    case Role::down_b: return plain(l->down.bias);
    case Role::final_norm_w: return plain(w.final_norm.weight);
    case Role::final_norm_b: return plain(w.final_norm.bias);
    case Role::head_w: return matrix(w.head, 0);
    case Role::mlm_dense_w: return matrix(w.mlm_dense, 0);
    case Role::mlm_dense_b: return plain(w.mlm_dense.bias);
    case Role::mlm_norm_w: return plain(w.mlm_norm.weight);
    case Role::mlm_norm_b: return plain(w.mlm_norm.bias);
    case Role::mlm_bias: return plain(w.head.bias);
    }
    return {};
}

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

void allocate_matrix(Matrix& m, std::size_t in, std::size_t out, bool bias, const char* what)
{
    m.in = in;
    m.out = out;
    resize_floats(m.packed, detail::packed_floats(in, out, NR, what), what);
    if (bias) resize_floats(m.bias, out, what);
}

void allocate_norm(Norm& n, std::size_t d, bool bias)
{
    resize_floats(n.weight, d, "norm");
    if (bias) resize_floats(n.bias, d, "norm");
}

void allocate_weights(PretrainedModel::Impl& m, bool mlm_head)
{
    const PretrainedConfig& c = m.config;
    Weights& w = m.weights;
    const std::size_t d = c.hidden, V = c.vocab, I = c.intermediate;
    const std::size_t q_cols = c.heads * c.head_dim, qkv_cols = q_cols + 2 * c.kv_heads * c.head_dim;
    const bool ln = c.norm == NormKind::layer_norm;
    if (!(c.tied && c.has_lm_head)) resize_floats(w.token_embedding, detail::checked_mul(V, d, "embedding"), "embedding");
    if (c.positions == PositionKind::learned)
        resize_floats(w.position_embedding, detail::checked_mul(c.max_positions, d, "positions"), "positions");
    if (c.type_vocab) resize_floats(w.token_type_embedding, detail::checked_mul(c.type_vocab, d, "token types"), "token types");
    if (c.post_norm) allocate_norm(w.embed_norm, d, true);
    else allocate_norm(w.final_norm, d, ln);
    w.layers.resize(c.layers);
    for (LayerWeights& l : w.layers) {
        allocate_norm(l.norm1, d, ln);
        allocate_norm(l.norm2, d, ln);
        if (c.qk_norm) {
            allocate_norm(l.q_norm, c.head_dim, false);
            allocate_norm(l.k_norm, c.head_dim, false);
        }
        allocate_matrix(l.qkv, d, qkv_cols, c.qkv_bias, "attention");
        allocate_matrix(l.o, q_cols, d, c.out_bias, "attention");
        allocate_matrix(l.up, d, I, c.mlp_bias, "mlp");
        if (c.mlp == MlpKind::swiglu) allocate_matrix(l.gate, d, I, c.mlp_bias, "mlp");
        allocate_matrix(l.down, I, d, c.mlp_bias, "mlp");
    }
    if (c.has_lm_head) allocate_matrix(w.head, d, V, mlm_head, "lm head");
    if (mlm_head) {
        allocate_matrix(w.mlm_dense, d, d, true, "mlm head");
        allocate_norm(w.mlm_norm, d, true);
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
    for (std::size_t i = 0; i < s.specs.size(); ++i) s.spec_of.emplace(s.specs[i].name, i);
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
            if (found.present) fail(name, {"'", t.name, "' appears twice (also in ", found.file, ")"});
            if (t.shape != sp.shape)
                fail(name, {"'", t.name, "': expected shape ", to_string(sp.shape), " (from config.json), got ", to_string(t.shape)});
            found.present = true;
            found.file = name;
            ft.spec = int(spec->second);
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
