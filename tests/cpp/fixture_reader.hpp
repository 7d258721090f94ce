// Reader for attnscope's golden fixtures (tests/fixtures/golden/*.txt, written by
// tests/fixtures/make_fixtures.py). Header-only, C++17, standard library plus
// <dirent.h> (works natively and under Emscripten with -sNODERAWFS=1).
//
// Format (one case per file):
//   # comment                      (lines starting with '#', and blank lines, are ignored)
//   case <name>
//   str <key> <value...>           (value = rest of the line)
//   int <key> <integer>
//   float <key> <float>
//   tensor <name> <f32|u8> <rank> <dim0> ... <dim{rank-1}>
//   <numel values on ONE line; f32 may be inf, -inf, nan>
//   end
#pragma once

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
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

[[noreturn]] inline void fail(const std::string& path, std::size_t line, const std::string& msg) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + msg);
}

inline std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0, n = s.size();
  while (i < n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < n && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.emplace_back(s, i, j - i);
    i = j;
  }
  return out;
}

inline bool is_ignored(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  return i == std::string::npos || line[i] == '#';
}

inline bool parse_ll(const std::string& tok, long long& out) {
  if (tok.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(tok.c_str(), &end, 10);
  if (errno != 0 || end != tok.c_str() + tok.size()) return false;
  out = v;
  return true;
}

inline bool parse_size(const std::string& tok, std::size_t& out) {
  long long v = 0;
  if (!parse_ll(tok, v) || v < 0) return false;
  out = static_cast<std::size_t>(v);
  return true;
}

// inf / -inf / nan are spelled exactly like that by the writer; strtof also
// accepts them (and "infinity"), case-insensitively. Relies on the "C" locale.
inline bool parse_f32(const std::string& tok, float& out) {
  if (tok.empty()) return false;
  errno = 0;
  char* end = nullptr;
  float v = std::strtof(tok.c_str(), &end);
  if (end != tok.c_str() + tok.size()) return false;
  // ERANGE on underflow (denormals) is fine; overflow to inf only when the text says inf.
  if (errno == ERANGE && std::isinf(v) && tok.find_first_of("iI") == std::string::npos) return false;
  out = v;
  return true;
}

inline bool parse_f64(const std::string& tok, double& out) {
  if (tok.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(tok.c_str(), &end);
  if (end != tok.c_str() + tok.size()) return false;
  out = v;
  return true;
}

}  // namespace fixture_detail

inline FixtureCase load_fixture(const std::string& path) {
  using namespace fixture_detail;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open fixture file");

  FixtureCase fc;
  bool have_case = false, have_end = false;
  std::string line;
  std::size_t lineno = 0;

  auto next_content_line = [&](std::string& out) -> bool {
    while (std::getline(in, out)) {
      ++lineno;
      if (!out.empty() && out.back() == '\r') out.pop_back();
      if (!is_ignored(out)) return true;
    }
    return false;
  };

  while (next_content_line(line)) {
    if (have_end) fail(path, lineno, "content after 'end'");
    std::vector<std::string> tok = split_ws(line);
    const std::string& kw = tok[0];
    if (!have_case) {
      if (kw != "case" || tok.size() != 2) fail(path, lineno, "expected 'case <name>'");
      fc.name = tok[1];
      have_case = true;
      continue;
    }
    if (kw == "end") {
      if (tok.size() != 1) fail(path, lineno, "junk after 'end'");
      have_end = true;
    } else if (kw == "case") {
      fail(path, lineno, "second 'case' line (one case per file)");
    } else if (kw == "str") {
      if (tok.size() < 3) fail(path, lineno, "expected 'str <key> <value>'");
      // value = rest of the line after the key, trimmed
      std::size_t p = line.find(tok[1], line.find("str") + 3) + tok[1].size();
      std::size_t b = line.find_first_not_of(" \t", p);
      std::size_t e = line.find_last_not_of(" \t");
      if (!fc.strs.emplace(tok[1], line.substr(b, e + 1 - b)).second)
        fail(path, lineno, "duplicate str '" + tok[1] + "'");
    } else if (kw == "int") {
      long long v = 0;
      if (tok.size() != 3 || !parse_ll(tok[2], v)) fail(path, lineno, "expected 'int <key> <integer>'");
      if (!fc.ints.emplace(tok[1], v).second) fail(path, lineno, "duplicate int '" + tok[1] + "'");
    } else if (kw == "float") {
      double v = 0;
      if (tok.size() != 3 || !parse_f64(tok[2], v)) fail(path, lineno, "expected 'float <key> <float>'");
      if (!fc.floats.emplace(tok[1], v).second) fail(path, lineno, "duplicate float '" + tok[1] + "'");
    } else if (kw == "tensor") {
      if (tok.size() < 4) fail(path, lineno, "expected 'tensor <name> <f32|u8> <rank> <dims...>'");
      FixtureTensor t;
      const std::string tname = tok[1];
      t.dtype = tok[2];
      if (t.dtype != "f32" && t.dtype != "u8") fail(path, lineno, "unknown dtype '" + t.dtype + "'");
      std::size_t rank = 0;
      if (!parse_size(tok[3], rank) || rank == 0) fail(path, lineno, "bad rank '" + tok[3] + "'");
      if (tok.size() != 4 + rank)
        fail(path, lineno, "tensor '" + tname + "': rank " + tok[3] + " but " +
                               std::to_string(tok.size() - 4) + " dims given");
      for (std::size_t i = 0; i < rank; ++i) {
        std::size_t d = 0;
        if (!parse_size(tok[4 + i], d)) fail(path, lineno, "bad dim '" + tok[4 + i] + "'");
        t.shape.push_back(d);
      }
      const std::size_t n = t.numel();
      std::string data;
      if (!next_content_line(data)) fail(path, lineno, "missing data line for tensor '" + tname + "'");
      std::vector<std::string> vals = split_ws(data);
      if (vals.size() != n)
        fail(path, lineno, "tensor '" + tname + "': expected " + std::to_string(n) + " values, got " +
                               std::to_string(vals.size()));
      if (t.dtype == "f32") {
        t.f32.resize(n);
        for (std::size_t i = 0; i < n; ++i)
          if (!parse_f32(vals[i], t.f32[i]))
            fail(path, lineno, "tensor '" + tname + "': bad f32 value '" + vals[i] + "'");
      } else {
        t.u8.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          long long v = 0;
          if (!parse_ll(vals[i], v) || v < 0 || v > 255)
            fail(path, lineno, "tensor '" + tname + "': bad u8 value '" + vals[i] + "'");
          t.u8[i] = static_cast<std::uint8_t>(v);
        }
      }
      if (!fc.tensors.emplace(tname, std::move(t)).second)
        fail(path, lineno, "duplicate tensor '" + tname + "'");
    } else {
      fail(path, lineno, "unknown keyword '" + kw + "'");
    }
  }
  if (in.bad()) throw std::runtime_error(path + ": read error");
  if (!have_case) fail(path, lineno, "no 'case' line");
  if (!have_end) fail(path, lineno, "missing 'end'");
  return fc;
}

inline std::vector<FixtureCase> load_fixture_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw std::runtime_error(dir + ": cannot open fixture directory");
  std::vector<std::string> files;
  while (const dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".txt") == 0) files.push_back(n);
  }
  ::closedir(d);
  // A suite driven by an empty folder would pass with nothing tested.
  if (files.empty()) throw std::runtime_error(dir + ": no *.txt fixtures in this directory");
  std::sort(files.begin(), files.end());
  std::vector<FixtureCase> out;
  out.reserve(files.size());
  const std::string prefix = (!dir.empty() && dir.back() != '/') ? dir + "/" : dir;
  for (const std::string& f : files) out.push_back(load_fixture(prefix + f));
  return out;
}

}  // namespace attnscope_test
