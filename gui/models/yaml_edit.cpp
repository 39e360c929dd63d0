#include "gui/models/yaml_edit.hpp"

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <vector>

namespace kvsim::gui {
namespace {

std::vector<std::string> split_dotted(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::optional<std::size_t> as_index(const std::string& s) {
  if (s.empty() || s.size() > 6) return std::nullopt;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return v;
}

bool ends_plain_scalar(const std::string& text, std::size_t pos) {
  if (pos >= text.size()) return true;
  const char c = text[pos];
  return c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == ',' || c == '}' || c == ']' ||
         c == '#';
}

// End (one past) of the quoted scalar starting at `pos`, or npos.
std::size_t quoted_end(const std::string& text, std::size_t pos) {
  const char q = text[pos];
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] == q) {
      if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;
        continue;
      }
      return i + 1;
    }
  }
  return std::string::npos;
}

// End (one past) of the flow collection opening at `pos`, or npos.
std::size_t flow_end(const std::string& text, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = pos; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const auto e = quoted_end(text, i);
      if (e == std::string::npos) return e;
      i = e - 1;
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      --depth;
      if (depth == 0) return i + 1;
    }
  }
  return std::string::npos;
}

// The source span [begin, end) of a node's value, or nothing when it cannot be replaced in place.
std::optional<std::pair<std::size_t, std::size_t>> value_span(const std::string& text,
                                                              const YAML::Node& node) {
  const auto mark = node.Mark();
  if (mark.pos < 0) return std::nullopt;
  const auto pos = static_cast<std::size_t>(mark.pos);
  if (pos >= text.size()) return std::nullopt;
  const char c = text[pos];
  if (node.IsScalar()) {
    if (c == '|' || c == '>') return std::nullopt;  // block scalar
    if (c == '"' || c == '\'') {
      const auto e = quoted_end(text, pos);
      if (e == std::string::npos) return std::nullopt;
      return std::make_pair(pos, e);
    }
    const std::string& s = node.Scalar();
    if (text.compare(pos, s.size(), s) != 0 || !ends_plain_scalar(text, pos + s.size()))
      return std::nullopt;
    return std::make_pair(pos, pos + s.size());
  }
  if ((node.IsMap() || node.IsSequence()) && (c == '{' || c == '[')) {
    const auto e = flow_end(text, pos);
    if (e == std::string::npos) return std::nullopt;
    return std::make_pair(pos, e);
  }
  return std::nullopt;
}

// `key: value` nested in flow maps for every remaining key: a: {b: {c: value}}.
std::optional<std::string> nested_entry(const std::vector<std::string>& parts, std::size_t from,
                                        const std::string& value) {
  std::string out;
  std::string close;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (as_index(parts[i])) return std::nullopt;
    out += parts[i] + ": ";
    if (i + 1 < parts.size()) {
      out += "{";
      close += "}";
    }
  }
  return out + value + close;
}

// Inserts `entry` (key: value) into the existing map `map`.
std::optional<std::string> insert_into_map(const std::string& text, const YAML::Node& map,
                                           const std::string& entry, bool is_root) {
  if (is_root) {
    std::string out = text;
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out + entry + '\n';
  }
  const auto mark = map.Mark();
  if (mark.pos < 0) return std::nullopt;
  const auto pos = static_cast<std::size_t>(mark.pos);
  if (pos < text.size() && text[pos] == '{') {
    std::string out = text;
    const bool empty = map.size() == 0;
    out.insert(pos + 1, empty ? entry : entry + ", ");
    return out;
  }
  if (map.size() == 0) return std::nullopt;
  const auto first_key = map.begin()->first.Mark();
  if (first_key.pos < 0) return std::nullopt;
  const auto kpos = static_cast<std::size_t>(first_key.pos);
  std::string out = text;
  out.insert(kpos, entry + "\n" + std::string(static_cast<std::size_t>(first_key.column), ' '));
  return out;
}

}  // namespace

std::optional<std::string> set_yaml_value(const std::string& text, const std::string& path,
                                          const std::string& value) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  if (!root.IsMap() && !root.IsNull()) return std::nullopt;
  const auto parts = split_dotted(path);
  YAML::Node cur = root;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const YAML::Node& ccur = cur;
    YAML::Node next;
    if (ccur.IsSequence()) {
      const auto idx = as_index(parts[i]);
      if (!idx || *idx >= ccur.size()) return std::nullopt;
      next.reset(ccur[*idx]);
    } else if (ccur.IsMap()) {
      const YAML::Node child = ccur[parts[i]];
      if (!child.IsDefined()) {
        const auto entry = nested_entry(parts, i, value);
        if (!entry) return std::nullopt;
        return insert_into_map(text, ccur, *entry, i == 0);
      }
      next.reset(child);
    } else if (ccur.IsNull() && i == 0) {
      const auto entry = nested_entry(parts, i, value);
      if (!entry) return std::nullopt;
      return insert_into_map(text, ccur, *entry, true);
    } else {
      return std::nullopt;
    }
    if (last) {
      const auto span = value_span(text, next);
      if (!span) return std::nullopt;
      std::string out = text;
      out.replace(span->first, span->second - span->first, value);
      return out;
    }
    cur.reset(next);
  }
  return std::nullopt;
}

}  // namespace kvsim::gui
