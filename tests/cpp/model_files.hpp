// The shipped model files (models/*.safetensors) for the tests: read once through the core's reader, with their
// vocabulary parsed for the decoding checks.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/model_file.hpp"

namespace attnscope_test {

inline std::vector<std::uint8_t> read_bytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The FileError of reading `bytes`, which must fail: a file that loads throws, and so fails the test.
inline attnscope::FileError file_error_of(const std::vector<std::uint8_t>& bytes)
{
    try {
        attnscope::read_model_file(bytes.data(), bytes.size());
    } catch (const attnscope::FileError& e) {
        return e;
    }
    throw std::runtime_error("the file loaded");
}

struct ShippedModel {
    attnscope::ModelFile file;
    nlohmann::json config, vocab;
};

/// models/<name>, loaded once per test run.
inline ShippedModel& shipped_model(const std::string& name)
{
    static std::map<std::string, ShippedModel> cache;
    auto it = cache.find(name);
    if (it == cache.end()) {
        const std::vector<std::uint8_t> bytes = read_bytes(std::string(ATTNSCOPE_MODEL_DIR) + "/" + name);
        ShippedModel m;
        m.file = attnscope::read_model_file(bytes.data(), bytes.size());
        m.config = nlohmann::json::parse(m.file.config);
        m.vocab = nlohmann::json::parse(m.file.vocab);
        it = cache.emplace(name, std::move(m)).first;
    }
    return it->second;
}

}  // namespace attnscope_test
