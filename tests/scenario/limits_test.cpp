// Every count, size, rate and time a scenario can give has a maximum (docs/limits.md), so the
// engine's arithmetic stays in range whatever the input; the few keys without one are named.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/field_table.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/tables.hpp"

namespace kvsim::scenario {
namespace {

void walk(const StructTable& table, const std::string& prefix, std::set<const StructTable*>& seen,
          std::vector<std::string>& unbounded) {
  if (!seen.insert(&table).second) return;
  for (const Field& f : table.fields) {
    const std::string path = prefix.empty() ? f.key : prefix + "." + f.key;
    switch (f.kind) {
      case FieldKind::kInt:
      case FieldKind::kInt64:
      case FieldKind::kTime:
      case FieldKind::kBytes:
      case FieldKind::kByteRate:
      case FieldKind::kFlopRate:
      case FieldKind::kDistribution:
        if (!f.range.max) unbounded.push_back(path);
        break;
      default:
        break;
    }
    if (f.nested != nullptr) walk(*f.nested, path, seen, unbounded);
  }
}

TEST(StatedLimits, EveryCountSizeRateAndTimeHasAMaximum) {
  std::set<const StructTable*> seen;
  std::vector<std::string> unbounded;
  walk(scenario_table(), "", seen, unbounded);
  // A seed and the ShareGPT filter's character counts only compare or seed: any value is safe.
  const std::set<std::string> allowed = {"sharegpt.seed", "sharegpt.min_content_len",
                                         "sharegpt.max_content_len"};
  for (const std::string& path : unbounded) {
    const auto dot = path.rfind('.', path.rfind('.') - 1);
    EXPECT_TRUE(allowed.count(path.substr(dot + 1)) != 0) << path << " has no maximum";
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(StatedLimits, AValuePastALimitIsALocatedError) {
  const std::string yaml =
      "name: t\n"
      "hardware:\n"
      "  servers: [{gpu: {preset: rtx4090}}]\n"
      "  switch_latency: 9000000000s\n"
      "model: {preset: llama-3.1-8b}\n";
  try {
    load_scenario_text(yaml, "t.yaml", LoadOptions{});
    ADD_FAILURE() << "a switch latency of 9e9 s was accepted";
  } catch (const InputError& e) {
    bool found = false;
    for (const Diagnostic& d : e.diagnostics()) {
      if (d.path != "hardware.switch_latency") continue;
      found = true;
      EXPECT_EQ(d.file, "t.yaml");
      EXPECT_EQ(d.line, 4);
      EXPECT_NE(d.message.find("must be in [0ns, 100000000s]"), std::string::npos) << d.message;
    }
    EXPECT_TRUE(found) << e.what();
  }
}

// A small valid scenario (its name line comes first among the keys the tests add to).
std::string golden_text() {
  std::ifstream in(std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/golden/small-multiturn.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Found by fuzzing. A lone ',' made yaml-cpp's LoadAll read documents forever; it is now a
// second document, refused (in a file and in a --set value).
TEST(YamlInput, ALoneCommaIsAnErrorNotAHang) {
  EXPECT_THROW(load_scenario_text(",\n", "t.yaml", LoadOptions{}), InputError);
  EXPECT_THROW(load_scenario_text("# a comment\n,\n", "t.yaml", LoadOptions{}), InputError);
  LoadOptions set;
  set.overrides.push_back({"name", ","});
  try {
    load_scenario_text(golden_text(), "t.yaml", set);
    ADD_FAILURE() << "--set name=, was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a second YAML document"), std::string::npos) << e.what();
  }
}

// The resolved YAML loads back to the same scenario (scenario.hpp), also for a string with line
// breaks (a literal block added a final one); a string that is not UTF-8 is refused, since it
// could not be written back unchanged.
TEST(YamlInput, ResolvedYamlOfStringsReadsBackEqual) {
  const std::string base = golden_text();
  for (const std::string description : {"\"a\\nb\"", "\"a\\n\\n\"", "\"\\na\"", "\"a\\r\\nb\""}) {
    const Scenario s = load_scenario_text("description: " + description + "\n" + base, "t.yaml",
                                          LoadOptions{});
    const Scenario again = load_scenario_text(s.resolved_yaml, "t.yaml", LoadOptions{});
    EXPECT_EQ(again.description, s.description) << description;
    EXPECT_TRUE(scenario_differences(s, again).empty()) << description;
  }
  EXPECT_THROW(load_scenario_text("description: \"a\xC0\xAF" "b\"\n" + base, "t.yaml", LoadOptions{}),
               InputError);
  EXPECT_THROW(load_scenario_text("description: \"a\xFF\"\n" + base, "t.yaml", LoadOptions{}),
               InputError);
  EXPECT_NO_THROW(load_scenario_text("description: \"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"\n" + base,
                                     "t.yaml", LoadOptions{}));
}

}  // namespace
}  // namespace kvsim::scenario
