#pragma once
// A minimal reader for the catalog files (scenarios/catalog/*.yaml) in tests, so that the
// catalog numbers can be checked without the scenario decoder: top-level names at column 0,
// their keys at two spaces, values that are plain scalars, double-quoted strings, one-line
// flow maps ({gen: 4, lanes: 16}; flattened to "host_link.gen") or a block map at four spaces
// under a key with no value (a storage node's drive:; flattened to "drive.read"). Comments are
// dropped. Also parses the few unit spellings the catalog uses (GiB, MiB, B, GB/s, TFLOPS; us,
// ns, ms for times).
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsim::testing {

using CatalogEntry = std::map<std::string, std::string>;
using Catalog = std::map<std::string, CatalogEntry>;

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Drops a '#' comment that is not inside double quotes.
inline std::string strip_comment(const std::string& line) {
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == '#' && !quoted) return line.substr(0, i);
  }
  return line;
}

inline std::string unquote(const std::string& v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

inline Catalog read_catalog(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Catalog out;
  std::string line;
  std::string current;
  std::string parent;  // a key at two spaces with no value: the keys of its block at four
  while (std::getline(in, line)) {
    const std::string text = strip_comment(line);
    if (trim(text).empty()) continue;
    const auto colon = text.find(':');
    if (colon == std::string::npos) throw std::runtime_error("no key in: " + line);
    if (text[0] != ' ') {
      current = trim(text.substr(0, colon));
      parent.clear();
      out[current];
      continue;
    }
    if (!parent.empty() && text.rfind("    ", 0) == 0 && text[4] != ' ') {
      out[current][parent + "." + trim(text.substr(0, colon))] =
          unquote(trim(text.substr(colon + 1)));
      continue;
    }
    if (text.rfind("  ", 0) != 0 || text[2] == ' ') throw std::runtime_error("bad indent: " + line);
    const std::string key = trim(text.substr(0, colon));
    const std::string value = trim(text.substr(colon + 1));
    parent.clear();
    if (value.empty()) {
      parent = key;
      continue;
    }
    if (!value.empty() && value.front() == '{') {
      if (value.back() != '}') throw std::runtime_error("unterminated flow map: " + line);
      std::stringstream items(value.substr(1, value.size() - 2));
      std::string item;
      while (std::getline(items, item, ',')) {
        const auto c = item.find(':');
        if (c == std::string::npos) throw std::runtime_error("bad flow item: " + item);
        out[current][key + "." + trim(item.substr(0, c))] = trim(item.substr(c + 1));
      }
    } else {
      out[current][key] = unquote(value);
    }
  }
  return out;
}

struct UnitScale {
  const char* name;
  double scale;
};

// The number before the first of `units` that ends `text`, times that unit's scale.
template <std::size_t N>
double parse_with_units(const std::string& text, const UnitScale (&units)[N]) {
  for (const auto& u : units) {
    const std::string name = u.name;
    if (text.size() > name.size() &&
        text.compare(text.size() - name.size(), name.size(), name) == 0) {
      return std::stod(text.substr(0, text.size() - name.size())) * u.scale;
    }
  }
  throw std::runtime_error("no known unit in: " + text);
}

// "23.99GiB" -> bytes, "1008GB/s" -> bytes/s, "165.2TFLOPS" -> FLOP/s.
inline double parse_quantity(const std::string& text) {
  static const UnitScale units[] = {
      {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"GB/s", 1e9}, {"TFLOPS", 1e12}, {"B", 1.0}};
  return parse_with_units(text, units);
}

// "80us" -> 80,000 ns; also "ns" and "ms".
inline double parse_time_ns(const std::string& text) {
  static const UnitScale units[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}};
  return parse_with_units(text, units);
}

// "[4096, 8192.5]" -> {4096, 8192.5} (a one-line flow list of numbers).
inline std::vector<double> numbers(const std::string& text) {
  const std::string t = trim(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']')
    throw std::runtime_error("not a list: " + text);
  std::vector<double> out;
  std::stringstream items(t.substr(1, t.size() - 2));
  std::string item;
  while (std::getline(items, item, ',')) out.push_back(std::stod(trim(item)));
  return out;
}

}  // namespace kvsim::testing
