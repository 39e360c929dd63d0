#include "sim/scenario/scenario.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include "models/hf_config.hpp"
#include "sim/scenario/deployment.hpp"
#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/scenario/suggest.hpp"
#include "sim/scenario/tables.hpp"
#include "sim/scenario/yaml_codec.hpp"

namespace kvsim::scenario {
namespace {

namespace fs = std::filesystem;

std::string override_label(const Override& o) { return "--set " + o.path + "=" + o.value; }

bool valid_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = path.find('.', begin);
    parts.push_back(path.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return parts;
}

std::string join_parts(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += '.';
    out += parts[i];
  }
  return out;
}

std::optional<std::size_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return v;
}

// Patches `root` (a map) with one override: walks the dotted path, creating maps where keys are
// missing, indexing lists by number, and puts the value (parsed as YAML) at the end. The
// placed nodes are marked so diagnostics inside them name the override.
void apply_override(YAML::Node& root, const Override& o, detail::Decoder& decoder) {
  const std::string label = override_label(o);
  auto fail = [&](const std::string& path, const std::string& message) {
    decoder.add(Diagnostic{label, 0, 0, path, message});
  };
  YAML::Node value;
  if (o.value.empty()) {
    value = YAML::Node(std::string());
  } else {
    std::vector<Diagnostic> syntax;
    const auto parsed = detail::parse_yaml(o.value, label, syntax);
    if (!parsed) {
      for (auto& d : syntax) {
        d.line = 0;
        d.column = 0;
        d.path = o.path;
        decoder.add(std::move(d));
      }
      return;
    }
    value = *parsed;
  }

  const std::vector<std::string> parts = split_path(o.path);
  YAML::Node cur = root;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const std::string here = join_parts(parts, i + 1);
    const bool last = i + 1 == parts.size();
    if (cur.IsSequence()) {
      const auto index = parse_index(part);
      if (!index) {
        fail(here, "expected a list index (0, 1, ...), got '" + part + "'");
        return;
      }
      if (*index >= cur.size()) {
        fail(here, "index " + part + " is out of range: the list has " +
                       std::to_string(cur.size()) + " entries");
        return;
      }
      if (last) {
        cur[*index] = value;
        decoder.mark_override(value, label);
        return;
      }
      YAML::Node next = cur[*index];
      cur.reset(next);
      continue;
    }
    if (cur.IsNull()) cur = YAML::Node(YAML::NodeType::Map);
    if (!cur.IsMap()) {
      fail(join_parts(parts, i), "is a single value, not a map");
      return;
    }
    if (last) {
      cur[part] = value;
      decoder.mark_override(value, label);
      return;
    }
    const YAML::Node& const_cur = cur;
    if (!const_cur[part].IsDefined()) {
      YAML::Node created(YAML::NodeType::Map);
      cur[part] = created;
      decoder.mark_override(created, label);
      cur.reset(created);
    } else {
      YAML::Node next = cur[part];
      cur.reset(next);
    }
  }
}

// The folder of shipped fitted profiles (compute.kind auto): the option, else beside the
// catalog (a source tree's models/profiles two folders up from scenarios/catalog, an
// installation's profiles/ beside catalog/), else the source tree's.
std::string choose_profiles_dir(const LoadOptions& options, const std::string& catalog_dir) {
  if (!options.profiles_dir.empty()) return options.profiles_dir;
  std::error_code ec;
  if (!catalog_dir.empty()) {
    const fs::path c(catalog_dir);
    for (const fs::path& p : {c / ".." / ".." / "models" / "profiles", c / ".." / "profiles"}) {
      if (fs::is_directory(p, ec)) return p.lexically_normal().string();
    }
  }
#ifdef KVSIM_DEFAULT_PROFILES_DIR
  if (fs::is_directory(KVSIM_DEFAULT_PROFILES_DIR, ec)) return KVSIM_DEFAULT_PROFILES_DIR;
#endif
  return {};
}

// Looks presets up in a catalog loaded on first use; catalog problems are reported once.
class PresetSource {
 public:
  PresetSource(std::string dir, fs::path base, detail::Decoder& decoder)
      : dir_(std::move(dir)), base_(std::move(base)), decoder_(decoder) {}

  detail::PresetLookup operator()(const std::string& catalog, const std::string& name) {
    if (catalog == "file:hf_config") return hf_config(name);
    if (!tried_) {
      tried_ = true;
      if (!dir_.empty()) {
        try {
          catalog_ = load_catalog(dir_);
        } catch (const InputError& e) {
          for (const auto& d : e.diagnostics()) decoder_.add(d);
          failed_ = true;
        }
      }
    }
    if (failed_) return {};
    if (!catalog_) {
      return {
          nullptr, ProblemClass::kUnknownPreset,
          "preset '" + name +
              "' needs the catalog, but no catalog folder was found (set "
              "KVSIM_CATALOG_DIR or keep the scenario under a folder holding scenarios/catalog)"};
    }
    std::vector<std::string> names;
    const void* entry = nullptr;
    auto scan = [&](const auto& entries) {
      for (const auto& [n, spec] : entries) {
        names.push_back(n);
        if (n == name) entry = &spec;
      }
    };
    if (catalog == "gpus") scan(catalog_->gpus);
    else if (catalog == "models") scan(catalog_->models);
    else if (catalog == "drives") scan(catalog_->drives);
    else scan(catalog_->storage);
    if (entry != nullptr) return {entry, ProblemClass::kUnknownPreset, ""};
    std::string message = "unknown preset '" + name + "'";
    const std::string hint = closest_name(name, names);
    if (!hint.empty()) message += "; did you mean '" + hint + "'?";
    message += names.empty() ? " (" + catalog + ".yaml in " + dir_ + " has no entries)"
                             : " (valid: " + join_names(names) + ")";
    return {nullptr, ProblemClass::kUnknownPreset, message};
  }

 private:
  // A Hugging Face config.json, relative to the scenario's folder; its own problems keep its
  // file:line:col.
  detail::PresetLookup hf_config(const std::string& name) {
    fs::path p(name);
    if (p.is_relative()) p = base_ / p;
    const std::string path = p.lexically_normal().string();
    auto it = hf_configs_.find(path);
    if (it == hf_configs_.end()) {
      std::error_code ec;
      if (!fs::exists(path, ec)) return {nullptr, ProblemClass::kBadValue, "no such file: " + path};
      try {
        it = hf_configs_.emplace(path, models::load_hf_config(path)).first;
      } catch (const InputError& e) {
        for (const auto& d : e.diagnostics()) decoder_.add(d);
        return {};
      }
    }
    return {&it->second, ProblemClass::kBadValue, ""};
  }

  std::string dir_;
  fs::path base_;
  detail::Decoder& decoder_;
  bool tried_ = false;
  bool failed_ = false;
  std::optional<Catalog> catalog_;
  std::map<std::string, models::ModelSpec> hf_configs_;
};

// A relative path made absolute against the base folder.
void resolve_path(std::string& path, const fs::path& base) {
  if (path.empty() || is_stdin_path(path)) return;
  const fs::path p(path);
  if (p.is_absolute()) return;
  path = (base / p).lexically_normal().string();
}

}  // namespace

Override parse_override(const std::string& text) {
  const std::string label = "--set " + text;
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw InputError(
        Diagnostic{label, 0, 0, "", "expected path=value, e.g. engine.max_num_seqs=128"});
  }
  Override o{text.substr(0, eq), text.substr(eq + 1)};
  bool ok = !o.path.empty();
  for (const auto& part : split_path(o.path)) {
    if (part.empty()) ok = false;
    for (char c : part) {
      if (!valid_key_char(c)) ok = false;
    }
  }
  if (!ok) {
    throw InputError(Diagnostic{label, 0, 0, "",
                                "bad path '" + o.path +
                                    "': expected dotted keys such as engine.max_num_seqs or "
                                    "hardware.servers.0.count"});
  }
  return o;
}

Scenario load_scenario(const std::string& path, const LoadOptions& options) {
  if (is_stdin_path(path)) {  // "-": the scenario's YAML on standard input; paths from here
    LoadOptions with_base = options;
    if (with_base.base_dir.empty()) with_base.base_dir = ".";
    return load_scenario_text(read_input(path, "the scenario"), input_display_name(path), with_base);
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw InputError(
        Diagnostic{path, 0, 0, "", fs::exists(path, ec) ? "not a file" : "no such file"});
  }
  std::ifstream in(path);
  if (!in) throw InputError(Diagnostic{path, 0, 0, "", "cannot read the file"});
  std::ostringstream text;
  text << in.rdbuf();
  LoadOptions with_base = options;
  if (with_base.base_dir.empty()) {
    with_base.base_dir = fs::path(path).parent_path().string();
    if (with_base.base_dir.empty()) with_base.base_dir = ".";
  }
  return load_scenario_text(text.str(), path, with_base);
}

Scenario load_scenario_text(const std::string& yaml_text, const std::string& display_name,
                            const LoadOptions& options) {
  std::string base_dir = options.base_dir;
  if (base_dir.empty()) base_dir = fs::path(display_name).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  std::error_code ec;
  const fs::path base = fs::absolute(base_dir, ec).lexically_normal();

  std::vector<Diagnostic> syntax;
  auto root = detail::parse_yaml(yaml_text, display_name, syntax);
  if (!root) throw InputError(std::move(syntax));

  detail::Decoder decoder(display_name);
  if (root->IsNull()) *root = YAML::Node(YAML::NodeType::Map);
  if (!root->IsMap()) {
    decoder.report(*root, nullptr, "", "expected a map of sections (name, hardware, model, ...)");
    throw InputError(std::move(decoder.diagnostics()));
  }
  for (const auto& o : options.overrides) apply_override(*root, o, decoder);

  const std::string catalog_dir = resolve_catalog_dir(options.catalog_dir, base.string());
  PresetSource presets(catalog_dir, base, decoder);
  decoder.set_preset_resolver([&presets](const std::string& catalog, const std::string& name) {
    return presets(catalog, name);
  });

  Scenario scenario;
  decoder.decode(*root, &scenario, scenario_table());
  if (!decoder.diagnostics().empty()) {
    auto diagnostics = std::move(decoder.diagnostics());
    detail::sort_diagnostics(diagnostics);
    throw InputError(std::move(diagnostics));
  }
  // Checks of the scenario as a whole (deployment.hpp), at the key each is about.
  if (const auto problem = options.check_deployment ? check_deployment(scenario) : std::nullopt) {
    decoder.report_at(*root, problem->path, problem->message);
    throw InputError(std::move(decoder.diagnostics()));
  }
  scenario.engine.fast_paths = options.fast_paths;
  scenario.profiles_dir = choose_profiles_dir(options, catalog_dir);
  resolve_path(scenario.workload.input_file, base);
  resolve_path(scenario.workload.trace.file, base);
  scenario.source_file = display_name;
  scenario.resolved_yaml = emit_scenario_yaml(scenario);
  return scenario;
}

std::string emit_scenario_yaml(const Scenario& scenario) {
  return detail::emit_yaml(scenario_table(), &scenario);
}

std::vector<std::string> scenario_differences(const Scenario& a, const Scenario& b) {
  return differences(scenario_table(), &a, &b);
}

}  // namespace kvsim::scenario
