#include "sim/workload/vllm_input.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json_error.hpp"
#include "sim/workload/distributions.hpp"
#include "sim/workload/json_locator.hpp"
#include "sim/workload/token_count.hpp"

namespace kvsim::workload {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxDiagnostics = 50;

// Collects diagnostics located in the JSON text.
class Errors {
 public:
  Errors(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  void add(const JsonPath& path, const std::string& message) {
    if (diags_.size() >= kMaxDiagnostics) return;
    const TextPosition p = text_position(text_, locate_json_value(text_, path));
    diags_.push_back(Diagnostic{file_, p.line, p.column, json_path_string(path), message});
  }
  bool empty() const { return diags_.empty(); }
  void throw_if_any() {
    if (!diags_.empty()) throw InputError(std::move(diags_));
  }

 private:
  const std::string& text_;
  const std::string& file_;
  std::vector<Diagnostic> diags_;
};

JsonPath child(JsonPath p, const std::string& key) {
  p.push_back(JsonPathItem::member(key));
  return p;
}
JsonPath child(JsonPath p, std::size_t index) {
  p.push_back(JsonPathItem::at(index));
  return p;
}

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "an object";
}

// Reads a number (int or float, not bool). Reports and returns false otherwise.
bool read_number(const json& obj, const std::string& key, const JsonPath& path, Errors& errors,
                 double& out) {
  const json& v = obj.at(key);
  if (!v.is_number()) {
    errors.add(child(path, key), std::string("must be a number, got ") + type_name(v));
    return false;
  }
  out = v.get<double>();
  return true;
}

// An optional `max`: absent or null means no cap (vLLM: conf.get("max", None)).
bool read_optional_max(const json& obj, const JsonPath& path, Errors& errors, Distribution& d) {
  if (!obj.contains("max") || obj.at("max").is_null()) return true;
  d.has_max = true;
  return read_number(obj, "max", path, errors, d.max);
}

// The field of a distribution that an error from distribution_error() is about.
std::string offending_key(const Distribution& d) {
  switch (d.kind) {
    case DistKind::kConstant:
      return "value";
    case DistKind::kUniform:
      return d.min > 0 ? "max" : "min";
    case DistKind::kLognormal:
      if (d.has_max && !std::isfinite(d.max)) return "max";
      if (d.has_average) return d.average < 1 ? "average" : "median_ratio";
      return d.mean > 0 ? "sigma" : "mean";
    case DistKind::kZipf:
    case DistKind::kPoisson:
      return "alpha";
  }
  return "distribution";
}

// bench_dataset.py get_random_distribution.
Distribution read_distribution(const json& conf, const std::string& section,
                               const std::string& subsection, bool optional, Errors& errors) {
  Distribution d;  // Constant[0]
  const JsonPath section_path{JsonPathItem::member(section)};
  const json& sec = conf.at(section);
  if (optional && !sec.contains(subsection)) return d;
  if (!sec.contains(subsection)) {
    errors.add(section_path, "Missing subsection " + subsection + " in section " + section);
    return d;
  }
  const JsonPath path = child(section_path, subsection);
  const json& obj = sec.at(subsection);
  if (!obj.is_object()) {
    errors.add(path,
               std::string("must be an object {\"distribution\": ...}, got ") + type_name(obj));
    return d;
  }
  if (!obj.contains("distribution") || obj.at("distribution").is_null()) {
    errors.add(path, "Missing field 'distribution' in section='" + section + "' and subsection='" +
                         subsection + "'");
    return d;
  }
  const json& name_v = obj.at("distribution");
  if (!name_v.is_string()) {
    errors.add(child(path, "distribution"),
               std::string("must be a string, got ") + type_name(name_v));
    return d;
  }
  const std::string name = name_v.get<std::string>();
  const auto require = [&](const char* key) {
    if (obj.contains(key)) return true;
    errors.add(path, std::string("Missing field '") + key + "' in section='" + section +
                         "' and subsection='" + subsection + "'");
    return false;
  };
  bool ok = true;
  if (name == "constant") {
    d.kind = DistKind::kConstant;
    ok = require("value") && read_number(obj, "value", path, errors, d.value);
  } else if (name == "zipf" || name == "poisson") {
    d.kind = name == "zipf" ? DistKind::kZipf : DistKind::kPoisson;
    ok = require("alpha") && read_number(obj, "alpha", path, errors, d.alpha);
    ok = read_optional_max(obj, path, errors, d) && ok;
  } else if (name == "lognormal") {
    d.kind = DistKind::kLognormal;
    ok = read_optional_max(obj, path, errors, d);
    if (obj.contains("average") && !obj.at("average").is_null()) {
      // mean/sigma are not passed on in this form (vLLM ignores them).
      d.has_average = true;
      ok = read_number(obj, "average", path, errors, d.average) && ok;
      if (obj.contains("median_ratio") && !obj.at("median_ratio").is_null()) {
        ok = read_number(obj, "median_ratio", path, errors, d.median_ratio) && ok;
      }
    } else if (require("mean") && require("sigma")) {
      if (obj.at("mean").is_null() || obj.at("sigma").is_null()) {
        errors.add(path, "Must provide both mean and sigma if average is not used");
        ok = false;
      } else {
        ok = read_number(obj, "mean", path, errors, d.mean) && ok;
        ok = read_number(obj, "sigma", path, errors, d.sigma) && ok;
      }
    } else {
      ok = false;
    }
  } else if (name == "uniform") {
    d.kind = DistKind::kUniform;
    if (require("min") && require("max")) {
      ok = read_number(obj, "min", path, errors, d.min);
      ok = read_number(obj, "max", path, errors, d.max) && ok;
      d.integer_bounds = obj.at("min").is_number_integer() && obj.at("max").is_number_integer();
      d.has_max = true;
    } else {
      ok = false;
    }
  } else {
    errors.add(
        child(path, "distribution"),
        "Unknown distribution: " + name + " (valid: constant, uniform, lognormal, zipf, poisson)");
    return Distribution{};
  }
  if (ok) {
    const std::string msg = distribution_error(d);
    if (!msg.empty()) errors.add(child(path, offending_key(d)), msg);
  }
  return d;
}

// bench_dataset.py parse_input_json_file.
GenerationConfig read_generation_config(const json& conf, Errors& errors) {
  GenerationConfig g;
  const JsonPath root;
  bool complete = true;
  for (const char* field :
       {"filetype", "num_conversations", "text_files", "prompt_input", "prompt_output"}) {
    if (!conf.contains(field)) {
      errors.add(root, std::string("Missing field ") + field + " in the generation config");
      complete = false;
    }
  }
  if (conf.contains("filetype")) {
    const json& ft = conf.at("filetype");
    if (!ft.is_string() || ft.get<std::string>() != "generate_conversations") {
      errors.add(child(root, "filetype"),
                 std::string("filetype must be \"generate_conversations\", got ") +
                     (ft.is_string() ? "\"" + ft.get<std::string>() + "\"" : type_name(ft)));
    }
  }
  if (conf.contains("num_conversations")) {
    const json& n = conf.at("num_conversations");
    if (!n.is_number_integer()) {
      errors.add(child(root, "num_conversations"),
                 std::string("must be an integer, got ") + type_name(n));
    } else if (n.get<std::int64_t>() <= 0 || n.get<std::int64_t>() > 100'000'000) {
      errors.add(child(root, "num_conversations"),
                 n.get<std::int64_t>() <= 0 ? "num_conversations should be larger than zero"
                                            : "num_conversations is too large (at most 100000000)");
    } else {
      g.num_conversations = static_cast<int>(n.get<std::int64_t>());
    }
  }
  if (conf.contains("text_files")) {
    const json& tf = conf.at("text_files");
    if (!tf.is_array()) {
      errors.add(child(root, "text_files"), "Field 'text_files' should be a list");
    } else if (tf.empty()) {
      errors.add(child(root, "text_files"),
                 "Field 'text_files' should be a list with at least one file");
    } else {
      for (std::size_t i = 0; i < tf.size(); ++i) {
        if (tf[i].is_string()) {
          g.text_files.push_back(tf[i].get<std::string>());
        } else {
          errors.add(child(child(root, "text_files"), i),
                     std::string("must be a string, got ") + type_name(tf[i]));
        }
      }
    }
  }
  if (conf.contains("print_stats")) {
    const json& ps = conf.at("print_stats");
    if (!ps.is_boolean()) {
      errors.add(child(root, "print_stats"),
                 "Field 'print_stats' should be either 'true' or 'false'");
    } else {
      g.print_stats = ps.get<bool>();
    }
  }
  bool sections_ok = complete;
  for (const char* section : {"prompt_input", "prompt_output"}) {
    if (conf.contains(section) && !conf.at(section).is_object()) {
      errors.add(child(root, section),
                 std::string("must be an object, got ") + type_name(conf.at(section)));
      sections_ok = false;
    }
  }
  if (!sections_ok) return g;
  g.num_turns = read_distribution(conf, "prompt_input", "num_turns", false, errors);
  g.num_tokens = read_distribution(conf, "prompt_input", "num_tokens", false, errors);
  g.common_prefix_num_tokens =
      read_distribution(conf, "prompt_input", "common_prefix_num_tokens", true, errors);
  g.prefix_num_tokens = read_distribution(conf, "prompt_input", "prefix_num_tokens", false, errors);
  g.output_num_tokens = read_distribution(conf, "prompt_output", "num_tokens", false, errors);
  return g;
}

// bench_dataset.py conversations_list_to_dict, plus the client's checks on each message it
// sends (last message a user message with exactly the keys role and content, the next one an
// assistant answer) made here once for the whole file.
std::vector<Conversation> read_conversations(const json& list, Errors& errors) {
  std::vector<Conversation> out;
  out.reserve(list.size());
  std::set<std::string> seen;
  for (std::size_t ci = 0; ci < list.size(); ++ci) {
    const JsonPath path{JsonPathItem::at(ci)};
    const json& item = list[ci];
    if (!item.is_object()) {
      errors.add(path,
                 std::string("a conversation must be an object {\"id\", \"messages\"}, got ") +
                     type_name(item));
      continue;
    }
    if (!item.contains("id") || !item.at("id").is_string()) {
      errors.add(item.contains("id") ? child(path, "id") : path,
                 item.contains("id") ? std::string("conversation id must be a string, got ") +
                                           type_name(item.at("id"))
                                     : std::string("missing field 'id'"));
      continue;
    }
    Conversation conv;
    conv.id = item.at("id").get<std::string>();
    if (!seen.insert(conv.id).second) {
      errors.add(child(path, "id"),
                 "Conversation ID " + conv.id + " found more than once in the input");
      continue;
    }
    if (!item.contains("messages")) {
      errors.add(path, "missing field 'messages' (ID: " + conv.id + ")");
      continue;
    }
    const json& msgs = item.at("messages");
    const JsonPath mpath = child(path, "messages");
    if (!msgs.is_array()) {
      errors.add(mpath, "Conversation messages should be a list (ID: " + conv.id + ")");
      continue;
    }
    if (msgs.empty()) {
      errors.add(mpath, "Conversation with no messages (ID: " + conv.id + ")");
      continue;
    }
    if (msgs.size() % 2 != 0) {
      errors.add(mpath,
                 "conversation " + conv.id + " has " + std::to_string(msgs.size()) +
                     " messages; it must end with an assistant answer (vLLM's client asserts "
                     "that every user turn has one)");
      continue;
    }
    const std::uint64_t key = conversation_key(conv.id);
    bool ok = true;
    for (std::size_t mi = 0; mi < msgs.size(); ++mi) {
      const JsonPath p = child(mpath, mi);
      const json& m = msgs[mi];
      const Message::Role want = mi % 2 == 0 ? Message::Role::kUser : Message::Role::kAssistant;
      const char* want_name = want == Message::Role::kUser ? "user" : "assistant";
      if (!m.is_object()) {
        errors.add(p, std::string("a message must be an object {\"role\", \"content\"}, got ") +
                          type_name(m));
        ok = false;
        continue;
      }
      if (!m.contains("role") || !m.at("role").is_string()) {
        errors.add(m.contains("role") ? child(p, "role") : p,
                   "message role must be a string (\"user\" or \"assistant\")");
        ok = false;
        continue;
      }
      const std::string role = m.at("role").get<std::string>();
      if (role != want_name) {
        errors.add(child(p, "role"),
                   "message role should be " + std::string(want_name) + ", got \"" + role +
                       "\" (conversations start with user and alternate; ID: " + conv.id + ")");
        ok = false;
        continue;
      }
      if (!m.contains("content") || !m.at("content").is_string()) {
        errors.add(m.contains("content") ? child(p, "content") : p,
                   "message content must be a string");
        ok = false;
        continue;
      }
      if (want == Message::Role::kUser && m.size() != 2) {
        errors.add(p, "a user message must have exactly the keys \"role\" and \"content\" (ID: " +
                          conv.id + ")");
        ok = false;
        continue;
      }
      const std::int64_t tokens = estimate_tokens(m.at("content").get_ref<const std::string&>());
      conv.messages.push_back(make_message(want, key, mi, tokens));
    }
    if (ok) out.push_back(std::move(conv));
  }
  return out;
}

}  // namespace

VllmInput parse_vllm_input(const std::string& text, const std::string& display_name) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    const TextPosition p = text_position(text, offset);
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." ->
    // keep the part after the location.
    if (const auto c = msg.find("column"); c != std::string::npos) {
      if (const auto colon = msg.find(": ", c); colon != std::string::npos)
        msg = msg.substr(colon + 2);
    }
    throw InputError(Diagnostic{display_name, p.line, p.column, "", "invalid JSON: " + msg});
  } catch (const json::exception& e) {
    // A number past a double (1e400) is out_of_range 406, not a parse_error.
    throw InputError(Diagnostic{display_name, 0, 0, "", "invalid JSON: " + json_error_text(e)});
  }
  Errors errors(text, display_name);
  VllmInput out;
  if (doc.is_object()) {
    if (!doc.contains("filetype")) {
      errors.add({}, "Input file " + display_name + " is invalid (missing 'filetype')");
      errors.throw_if_any();
    }
    out.generation = read_generation_config(doc, errors);
  } else if (doc.is_array()) {
    out.conversations = read_conversations(doc, errors);
  } else {
    errors.add(
        {}, std::string("Input file is invalid: expected a generation config (object) or a list of "
                        "conversations, got ") +
                type_name(doc));
  }
  errors.throw_if_any();
  return out;
}

VllmInput read_vllm_input(const std::string& path) {
  return parse_vllm_input(read_input(path, "the vLLM input file"), input_display_name(path));
}

}  // namespace kvsim::workload
