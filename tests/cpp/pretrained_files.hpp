// Reading the Hugging Face fixtures (tests/fixtures/hf/<case>/: config.json, safetensors files, reference.json) for
// the pretrained tests, and building small checkpoints in memory for the hostile-input tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/model.hpp"

namespace attnscope_test {

inline std::string read_text(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::string hf_dir(const std::string& name) { return std::string(ATTNSCOPE_HF_FIXTURE_DIR) + "/" + name; }

/// A case's files: config.json's text and every other checkpoint file's bytes.
struct HfCase {
    std::string name, config;
    std::map<std::string, std::string> files;  // file name → bytes (model.safetensors, shards, the index)
    nlohmann::json reference;

    std::map<std::string, std::pair<const std::uint8_t*, std::size_t>> views() const
    {
        std::map<std::string, std::pair<const std::uint8_t*, std::size_t>> v;
        for (const auto& f : files) v[f.first] = {reinterpret_cast<const std::uint8_t*>(f.second.data()), f.second.size()};
        return v;
    }
};

inline std::vector<std::string> hf_case_names()
{
    std::vector<std::string> names;
    for (const auto& c : nlohmann::json::parse(read_text(hf_dir("cases.json")))) names.push_back(c.at("case"));
    return names;
}

inline HfCase read_hf_case(const std::string& name)
{
    HfCase c;
    c.name = name;
    const std::string dir = hf_dir(name);
    c.config = read_text(dir + "/config.json");
    c.reference = nlohmann::json::parse(read_text(dir + "/reference.json"));
    std::ifstream index(dir + "/model.safetensors.index.json");
    if (index) {
        c.files["model.safetensors.index.json"] = read_text(dir + "/model.safetensors.index.json");
        const auto map = nlohmann::json::parse(c.files["model.safetensors.index.json"]).at("weight_map");
        for (const auto& entry : map.items()) {
            const std::string shard = entry.value();
            if (!c.files.count(shard)) c.files[shard] = read_text(dir + "/" + shard);
        }
    } else {
        c.files["model.safetensors"] = read_text(dir + "/model.safetensors");
    }
    return c;
}

/// A safetensors file: the header is written from `tensors` (name → dtype, shape, bytes) in the order given.
struct FakeTensor {
    std::string name, dtype;
    std::vector<std::size_t> shape;
    std::string bytes;
};

inline std::string safetensors_file(const std::vector<FakeTensor>& tensors, const std::string& extra_header = "")
{
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    std::size_t offset = 0;
    for (const FakeTensor& t : tensors) {
        header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
        offset += t.bytes.size();
    }
    std::string text = header.dump() + extra_header;
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[std::size_t(i)] = char((std::uint64_t(text.size()) >> (8 * i)) & 0xff);
    file += text;
    for (const FakeTensor& t : tensors) file += t.bytes;
    return file;
}

/// A safetensors file's header's length (its first 8 bytes, little-endian): the data section starts 8 bytes after.
inline std::size_t header_length(const std::string& file)
{
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | std::uint8_t(file[std::size_t(i)]);
    return std::size_t(n);
}

/// The tensors of a safetensors `file` (written by safetensors_file or not), in its header's order.
inline std::vector<FakeTensor> safetensors_tensors(const std::string& file)
{
    const std::size_t n = header_length(file);
    std::vector<FakeTensor> tensors;
    const nlohmann::ordered_json header = nlohmann::ordered_json::parse(file.substr(8, n));  // items() does not keep it alive
    for (const auto& entry : header.items()) {
        if (entry.key() == "__metadata__") continue;
        const std::size_t begin = entry.value().at("data_offsets")[0], end = entry.value().at("data_offsets")[1];
        tensors.push_back({entry.key(), entry.value().at("dtype"), entry.value().at("shape"), file.substr(8 + n + begin, end - begin)});
    }
    return tensors;
}

/// `file` with its header rewritten by `edit` (the data section kept as it is).
inline std::string rewrite_header(const std::string& file, const std::function<void(nlohmann::ordered_json&)>& edit)
{
    const std::size_t n = header_length(file);
    nlohmann::ordered_json header = nlohmann::ordered_json::parse(file.substr(8, n));
    edit(header);
    const std::string text = header.dump();
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char((std::uint64_t(text.size()) >> (8 * i)) & 0xff);
    return out + text + file.substr(8 + std::size_t(n));
}

/// Float bytes of n values (a small pattern, so tensors differ).
inline std::string f32_bytes(std::size_t n, float scale = 0.01f)
{
    std::string b(n * 4, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        const float v = scale * float(int(i % 13) - 6);
        std::memcpy(&b[i * 4], &v, 4);
    }
    return b;
}

}  // namespace attnscope_test
