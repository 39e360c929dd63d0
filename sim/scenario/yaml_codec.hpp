#pragma once
// Internal to kvsim_scenario (it includes yaml-cpp, which only this module links): decodes a
// YAML tree into a struct through its field table, collecting every problem as a compiler-style
// diagnostic, and emits a struct back as YAML with every field in table order.
#include <yaml-cpp/yaml.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/scenario/field_table.hpp"

namespace kvsim::scenario::detail {

// The answer of a preset lookup: the catalog entry (of the table's type), or a problem.
// An empty message with no entry means "already reported elsewhere": say nothing more.
struct PresetLookup {
  const void* entry = nullptr;
  ProblemClass problem = ProblemClass::kUnknownPreset;
  std::string message;
};
using PresetResolver =
    std::function<PresetLookup(const std::string& catalog, const std::string& name)>;

// Decodes YAML trees through field tables, one source (file or text) per Decoder, and
// collects every problem as a Diagnostic (1-based line and column from the YAML marks).
class Decoder {
 public:
  // `file` names the text in diagnostics (line and column come from the YAML marks).
  explicit Decoder(std::string file) : file_(std::move(file)) {}

  // Diagnostics inside `node` (placed by a `--set` override) name `label` instead of a line.
  void mark_override(const YAML::Node& node, std::string label);
  // Without a resolver, `preset:` is an unknown key (as in catalog files).
  void set_preset_resolver(PresetResolver resolver) { resolver_ = std::move(resolver); }

  // Decodes `node` (a map) into `obj` of the table's type. `path` prefixes diagnostic paths.
  void decode(const YAML::Node& node, void* obj, const StructTable& table,
              const std::string& path = "");

  void add(Diagnostic d) { diagnostics_.push_back(std::move(d)); }
  // A diagnostic at `node` (its line and column, or its override's label).
  void report(const YAML::Node& node, const std::string* label, const std::string& path,
              const std::string& message);
  // A diagnostic at the node that the dotted `path` (sequence items by index) names in `root`,
  // or at the deepest node on the way that exists: a key left at its default or filled from a
  // preset is reported at the section that holds it.
  void report_at(const YAML::Node& root, const std::string& path, const std::string& message);
  std::vector<Diagnostic>& diagnostics() { return diagnostics_; }

 private:
  struct OverrideNode {
    YAML::Node node;
    std::string label;
  };
  const std::string* origin(const YAML::Node& node, const std::string* inherited) const;
  void decode_struct(const YAML::Node& node, void* obj, const StructTable& table,
                     const std::string& path, const std::string* label, bool satisfied);
  void decode_field(const YAML::Node& node, void* owner, const Field& field,
                    const std::string& path, const std::string* label, bool satisfied);
  // `limit`: the most the distribution may give (its max bounds value, min, max, average,
  // lam; its log bounds the lognormal mean).
  void decode_distribution(const YAML::Node& node, workload::Distribution& out,
                           const std::string& path, const std::string* label, const Range& limit);
  // Where the issue's relative path points in the tree, for a check hook's diagnostics.
  void report_issue(const YAML::Node& node, const std::string* label, const std::string& path,
                    const FieldIssue& issue);

  std::string file_;
  std::vector<OverrideNode> overrides_;
  PresetResolver resolver_;
  std::vector<Diagnostic> diagnostics_;
};

// Parses YAML text; a syntax error becomes a diagnostic and nullopt.
std::optional<YAML::Node> parse_yaml(const std::string& text, const std::string& file,
                                     std::vector<Diagnostic>& diagnostics);

// Every field of `obj` (of the table's type) as a block-style YAML document.
std::string emit_yaml(const StructTable& table, const void* obj);

// Orders diagnostics by source (first appearance), then line and column; stable otherwise.
void sort_diagnostics(std::vector<Diagnostic>& diagnostics);

}  // namespace kvsim::scenario::detail
