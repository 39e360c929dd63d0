// Every field that takes one of a few names (an enumeration in its spec): each spelling decodes
// to its own enumerator and comes back through the resolved YAML unchanged, and a wrong spelling
// is reported at its file:line:col with the valid names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/scenario/field_table.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/tables.hpp"
#include "tests/scenario/fixture_text.hpp"

namespace kvsim::scenario {
namespace {

const std::string& kCatalog = testing::kFixtureCatalog;

// The deployment tests' scenario (two RTX 4090s with a DRAM tier; its last section is
// `workload:`), with the files that workload.kind trace and compute.kind profile / fitted
// require named (decoding does not read them).
const std::string kBase = testing::fixture_scenario_text("deployment.yaml") +
                          "  trace: {file: trace.jsonl}\n"
                          "compute:\n"
                          "  profile: {bundle_dir: bundle, fitted_path: fitted.yaml}\n";

struct EnumField {
  std::string path;  // dotted, as --set writes it
  // The field written with the value `bogus`: `with` replaces `replace` in kBase, or is
  // appended to it when `replace` is empty.
  std::string replace;
  std::string with;
  std::vector<std::string> names;  // its spellings, in the reference's order
};

// The spellings are part of the scenario format: this list pins them.
const std::vector<EnumField>& enum_fields() {
  static const std::vector<EnumField> fields{
      {"hardware.servers.0.gpu.host_link.gen",
       "- gpu: {preset: rtx4090}",
       "- gpu: {preset: rtx4090, host_link: {gen: bogus}}",
       {"3", "4", "5"}},
      {"model.dtype",
       "model: {preset: llama-3.1-8b}",
       "model: {preset: llama-3.1-8b, dtype: bogus}",
       {"bf16", "fp16", "fp8", "int8", "int4"}},
      {"engine.scheduling_policy",
       "scheduling_policy: fcfs",
       "scheduling_policy: bogus",
       {"fcfs", "priority"}},
      {"compute.kind",
       "compute:\n",
       "compute:\n  kind: bogus\n",
       {"auto", "roofline", "profile", "fitted"}},
      {"kv_offload.connector",
       "connector: native",
       "connector: bogus",
       {"none", "native", "lmcache"}},
      {"kv_offload.tiers.0.kind",
       "kind: host_dram",
       "kind: bogus",
       {"host_dram", "local_nvme", "remote"}},
      {"kv_offload.tiers.0.eviction",
       "capacity: 16GiB",
       "capacity: 16GiB\n      eviction: bogus",
       {"lru", "arc"}},
      {"routing.policy",
       "",
       "routing: {policy: bogus}\n",
       {"session_affinity", "round_robin", "least_loaded", "prefix_aware"}},
      {"workload.kind", "workload:\n", "workload:\n  kind: bogus\n", {"multi_turn", "trace"}},
      {"workload.clients.conversation_sampling",
       "workload:\n",
       "workload:\n  clients: {conversation_sampling: bogus}\n",
       {"round_robin", "random"}},
      {"workload.trace.format",
       "trace: {file: trace.jsonl}",
       "trace: {file: trace.jsonl, format: bogus}",
       {"auto", "mooncake", "bailian", "azure", "burstgpt", "sharegpt", "openai"}},
      {"workload.trace.mode",
       "trace: {file: trace.jsonl}",
       "trace: {file: trace.jsonl, mode: bogus}",
       {"open", "closed"}},
      {"output.format", "", "output:\n  format: bogus\n", {"table", "json", "csv"}},
  };
  return fields;
}

LoadOptions options(std::vector<Override> overrides = {}) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  o.check_deployment = false;  // decoding only: the files named above need not exist
  o.overrides = std::move(overrides);
  return o;
}

// The index (in enum_names) of every enumeration field's value in `owner`, by dotted path; list
// elements by their index.
void collect(const StructTable& table, const void* owner, const std::string& prefix,
             std::map<std::string, std::size_t>& out) {
  for (const Field& f : table.fields) {
    const std::string path = prefix.empty() ? f.key : prefix + "." + f.key;
    const void* member = f.kind == FieldKind::kGroup ? owner : f.get(owner);
    switch (f.kind) {
      case FieldKind::kEnum:
        out[path] = f.get_enum(member);
        break;
      case FieldKind::kStruct:
        collect(*f.nested, member, path, out);
        break;
      case FieldKind::kGroup:
        collect(*f.nested, owner, prefix, out);
        break;
      case FieldKind::kOptionalStruct:
        if (f.has_value(member)) {
          collect(*f.nested, f.value(const_cast<void*>(member)), path, out);
        }
        break;
      case FieldKind::kStructList:
        for (std::size_t i = 0; i < f.size(member); ++i) {
          collect(*f.nested, f.at(const_cast<void*>(member), i), path + "." + std::to_string(i),
                  out);
        }
        break;
      default:
        break;
    }
  }
}

std::map<std::string, std::size_t> enum_values(const Scenario& sc) {
  std::map<std::string, std::size_t> out;
  collect(scenario_table(), &sc, "", out);
  return out;
}

// The list above names every enumeration field of the scenario, with the table's spellings.
TEST(ScenarioEnumFields, ListCoversEveryEnumerationField) {
  const Scenario sc = load_scenario_text(kBase, "t.yaml", options());
  const auto values = enum_values(sc);
  std::set<std::string> listed;
  for (const auto& f : enum_fields()) {
    listed.insert(f.path);
    EXPECT_TRUE(values.count(f.path)) << f.path;
  }
  // model.kv_dtype shares model.dtype's names, of which it refuses int8 and int4
  // (load_test.cpp), so not every spelling can round-trip.
  listed.insert("model.kv_dtype");
  for (const auto& [path, index] : values) EXPECT_TRUE(listed.count(path)) << path;
}

// Each spelling decodes to its own enumerator, and the resolved YAML decodes to the same one.
TEST(ScenarioEnumFields, EverySpellingRoundTrips) {
  for (const auto& f : enum_fields()) {
    for (std::size_t i = 0; i < f.names.size(); ++i) {
      SCOPED_TRACE(f.path + "=" + f.names[i]);
      const Scenario sc = load_scenario_text(kBase, "t.yaml", options({{f.path, f.names[i]}}));
      const auto values = enum_values(sc);
      ASSERT_TRUE(values.count(f.path));
      EXPECT_EQ(values.at(f.path), i);
      const std::string yaml = emit_scenario_yaml(sc);
      const Scenario again = load_scenario_text(yaml, "resolved.yaml", options());
      EXPECT_EQ(enum_values(again), values);
      EXPECT_TRUE(scenario_differences(sc, again).empty());
    }
  }
}

// The table's names, in order, are the spellings listed above (so the reference and the
// "expected one of" messages keep them).
TEST(ScenarioEnumFields, TablesKeepTheSpellings) {
  const Scenario sc = load_scenario_text(kBase, "t.yaml", options());
  for (const auto& f : enum_fields()) {
    const StructTable* table = &scenario_table();
    const void* owner = &sc;
    const Field* field = nullptr;
    std::string rest = f.path;
    while (!rest.empty()) {
      const auto dot = rest.find('.');
      const std::string key = rest.substr(0, dot);
      rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
      field = table->find(key);
      ASSERT_NE(field, nullptr) << f.path;
      if (field->kind == FieldKind::kStructList) {
        const auto dot2 = rest.find('.');
        const auto i = static_cast<std::size_t>(std::stoul(rest.substr(0, dot2)));
        rest = rest.substr(dot2 + 1);
        owner = field->at(const_cast<void*>(field->get(owner)), i);
        table = field->nested;
      } else if (field->nested != nullptr) {
        owner = field->get(owner);
        table = field->nested;
      }
    }
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(field->enum_names, f.names) << f.path;
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A misspelt name is reported where it is written, with the valid names.
TEST(ScenarioEnumFields, WrongSpellingNamesItsPlaceAndTheValidNames) {
  for (const auto& f : enum_fields()) {
    SCOPED_TRACE(f.path);
    std::string yaml = kBase;
    if (f.replace.empty()) {
      yaml += f.with;
    } else {
      ASSERT_NE(yaml.find(f.replace), std::string::npos);
      yaml.replace(yaml.find(f.replace), f.replace.size(), f.with);
    }
    const auto at = yaml.find("bogus");
    ASSERT_NE(at, std::string::npos);
    const auto line_start = yaml.rfind('\n', at) + 1;
    const int line = 1 + static_cast<int>(std::count(
                             yaml.begin(), yaml.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    const int col = 1 + static_cast<int>(at - line_start);
    std::string message;
    try {
      load_scenario_text(yaml, "t.yaml", options());
    } catch (const InputError& e) {
      message = e.what();
    }
    EXPECT_EQ(message, "t.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": error: " +
                           f.path + ": expected one of " + joined(f.names) + ", got 'bogus'");
  }
}

}  // namespace
}  // namespace kvsim::scenario
