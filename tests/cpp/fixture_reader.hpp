// Reader for attnscope's golden fixtures (tests/fixtures/golden/*.json, tests/fixtures/models/*.json; the format is
// described in tests/fixtures/fixture_json.py). Header-only, nlohmann::json plus <dirent.h> (works natively and
// under Emscripten with -sNODERAWFS=1).
#pragma once

#include <dirent.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnscope_test {

struct FixtureTensor {
  std::string dtype;                 // "f32" or "u8"
  std::vector<std::size_t> shape;
  std::vector<float> f32;            // filled when dtype == "f32"
  std::vector<std::uint8_t> u8;      // filled when dtype == "u8"
  std::size_t numel() const {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
  }
};

struct FixtureCase {
  std::string name;
  std::map<std::string, long long> ints;
  std::map<std::string, double> floats;
  std::map<std::string, std::string> strs;
  std::map<std::string, FixtureTensor> tensors;

  bool has(const std::string& tensor_name) const { return tensors.count(tensor_name) != 0; }

  const FixtureTensor& tensor(const std::string& tensor_name) const {
    auto it = tensors.find(tensor_name);
    if (it == tensors.end())
      throw std::runtime_error("fixture '" + name + "': no tensor '" + tensor_name + "'");
    return it->second;
  }

  long long get_int(const std::string& key) const {
    auto it = ints.find(key);
    if (it == ints.end())
      throw std::runtime_error("fixture '" + name + "': no int '" + key + "'");
    return it->second;
  }
};

namespace fixture_detail {

// A number, or one of the strings the writer uses for what JSON cannot spell. Numbers go text -> double -> float:
// the writer only writes texts for which that equals strtof's float.
inline double number(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  const std::string& s = v.get_ref<const std::string&>();  // throws type_error for anything else
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::runtime_error("'" + s + "' is not a number");
}

inline FixtureTensor tensor(const nlohmann::json& j) {
  FixtureTensor t;
  t.dtype = j.at("dtype").get<std::string>();
  t.shape = j.at("shape").get<std::vector<std::size_t>>();
  const nlohmann::json& data = j.at("data");
  if (t.shape.empty()) throw std::runtime_error("rank 0");
  if (!data.is_array() || data.size() != t.numel())
    throw std::runtime_error("expected " + std::to_string(t.numel()) + " values, got " + std::to_string(data.size()));
  if (t.dtype == "f32") {
    for (const auto& v : data) t.f32.push_back(static_cast<float>(number(v)));
  } else if (t.dtype == "u8") {
    for (const auto& v : data) {
      if (!v.is_number_unsigned() || v.get<unsigned>() > 255) throw std::runtime_error("bad u8 value " + v.dump());
      t.u8.push_back(static_cast<std::uint8_t>(v.get<unsigned>()));
    }
  } else {
    throw std::runtime_error("unknown dtype '" + t.dtype + "'");
  }
  return t;
}

// j[key], or an empty object when the file has no such section.
inline const nlohmann::json& section(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none = nlohmann::json::object();
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

}  // namespace fixture_detail

inline FixtureCase load_fixture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open fixture file");
  FixtureCase fc;
  std::string where;  // the entry being read, for the error message
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    fc.name = j.at("case").get<std::string>();
    using fixture_detail::section;
    for (const auto& [k, v] : section(j, "str").items()) fc.strs[where = k] = v.get<std::string>();
    for (const auto& [k, v] : section(j, "int").items()) {
      where = k;
      if (!v.is_number_integer()) throw std::runtime_error("not an integer");
      fc.ints[k] = v.get<long long>();
    }
    for (const auto& [k, v] : section(j, "float").items()) fc.floats[where = k] = fixture_detail::number(v);
    for (const auto& [k, v] : section(j, "tensor").items()) fc.tensors[where = k] = fixture_detail::tensor(v);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + (where.empty() ? "" : ": '" + where + "'") + ": " + e.what());
  }
  return fc;
}

inline std::vector<FixtureCase> load_fixture_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw std::runtime_error(dir + ": cannot open fixture directory");
  std::vector<std::string> files;
  while (const dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) files.push_back(n);
  }
  ::closedir(d);
  // A suite driven by an empty folder would pass with nothing tested.
  if (files.empty()) throw std::runtime_error(dir + ": no *.json fixtures in this directory");
  std::sort(files.begin(), files.end());
  std::vector<FixtureCase> out;
  out.reserve(files.size());
  const std::string prefix = (!dir.empty() && dir.back() != '/') ? dir + "/" : dir;
  for (const std::string& f : files) out.push_back(load_fixture(prefix + f));
  return out;
}

}  // namespace attnscope_test
