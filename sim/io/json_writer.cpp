#include "sim/io/json_writer.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "sim/core/json_string.hpp"
#include "sim/core/version.hpp"
#include "sim/io/text_format.hpp"

namespace kvsim::io {
namespace {

void append_indent(std::string& out, int depth) { out.append(2 * static_cast<std::size_t>(depth), ' '); }

void append_value(std::string& out, const Json& v, int depth, int expand_depth) {
  switch (v.type()) {
    case Json::value_t::object:
    case Json::value_t::array: {
      const bool object = v.is_object();
      const char open = object ? '{' : '[';
      const char close = object ? '}' : ']';
      if (v.empty()) {
        out += open;
        out += close;
        return;
      }
      const bool expand = depth < expand_depth;
      out += open;
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ',';
        first = false;
        if (expand) {
          out += '\n';
          append_indent(out, depth + 1);
        } else if (it != v.begin()) {
          out += ' ';
        }
        if (object) {
          append_json_string(out, it.key());
          out += ": ";
        }
        append_value(out, *it, depth + 1, expand_depth);
      }
      if (expand) {
        out += '\n';
        append_indent(out, depth);
      }
      out += close;
      return;
    }
    case Json::value_t::string:
      append_json_string(out, v.get_ref<const std::string&>());
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<std::int64_t>());
      return;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<std::uint64_t>());
      return;
    case Json::value_t::number_float:
      out += json_number(v.get<double>());  // null when not finite
      return;
    case Json::value_t::null:
    case Json::value_t::binary:
    case Json::value_t::discarded:
      out += "null";
      return;
  }
  out += "null";
}

}  // namespace

Json json_document(std::string_view command, std::string_view version) {
  Json doc = Json::object();
  doc["schema_version"] = kJsonSchemaVersion;
  doc["kvsim_version"] = version.empty() ? std::string(kVersion) : std::string(version);
  if (!command.empty()) doc["command"] = std::string(command);
  return doc;
}

Json json_number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

std::string json_text(const Json& value, int expand_depth) {
  std::string out;
  append_value(out, value, 0, expand_depth);
  out += '\n';
  return out;
}

void write_json(std::ostream& os, const Json& value, int expand_depth) { os << json_text(value, expand_depth); }

}  // namespace kvsim::io
