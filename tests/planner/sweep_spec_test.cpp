// Sweep files: expansion order, ranges computed by hand, and errors with file:line:col.
#include "sim/planner/sweep_spec.hpp"

#include <gtest/gtest.h>

#include <string>

#include "sim/core/error.hpp"

namespace kvsim::planner {
namespace {

const std::string kBase = std::string(KVSIM_SOURCE_DIR) + "/scenarios/examples";
const std::string kScenario = "rtx4090-llama3.1-8b-multiturn.yaml";

SweepSpec parse(const std::string& body) { return load_sweep_text(body, "s.yaml", kBase); }

std::string values_of(const SweepPoint& p) {
  std::string s;
  for (const auto& o : p.overrides) s += o.path + "=" + o.value + ";";
  return s + "r" + std::to_string(p.repetition);
}

std::string error_of(const std::string& body) {
  try {
    parse(body);
  } catch (const InputError& e) {
    return e.diagnostics().front().to_string();
  }
  return "no error";
}

TEST(SweepSpec, CrossesAxesFirstSlowestWithZipAndRepetitionsInnermost) {
  // 2 (zip) x 2 (crossed) x 2 repetitions = 8 points; the zip advances both paths together.
  const auto spec =
      parse("name: t\nscenarios: [" + kScenario +
            "]\nset: {seed: 5}\naxes:\n"
            "  - zip:\n      - {path: a, values: [1, 2]}\n      - {path: b, values: [x, y]}\n"
            "  - {path: c, values: [p, q]}\nrepetitions: 2\n");
  const auto pts = expand(spec);
  ASSERT_EQ(pts.size(), 8U);
  EXPECT_EQ(count_points(spec), 8);
  EXPECT_EQ(values_of(pts[0]), "seed=5;a=1;b=x;c=p;r0");
  EXPECT_EQ(values_of(pts[1]), "seed=5;a=1;b=x;c=p;r1");
  EXPECT_EQ(values_of(pts[2]), "seed=5;a=1;b=x;c=q;r0");
  EXPECT_EQ(values_of(pts[4]), "seed=5;a=2;b=y;c=p;r0");
  EXPECT_EQ(values_of(pts[7]), "seed=5;a=2;b=y;c=q;r1");
  for (std::size_t i = 0; i < pts.size(); ++i)
    EXPECT_EQ(pts[i].index, static_cast<std::int64_t>(i));
}

TEST(SweepSpec, ScenarioAxesFollowTheGlobalOnesAndOnlyForThatScenario) {
  const auto spec = parse("name: t\nscenarios:\n  - " + kScenario + "\n  - file: " + kScenario +
                          "\n    set: {z: 1}\n    axes: [{path: d, values: [8, 9]}]\naxes: [{path: "
                          "a, values: [1, 2]}]\n");
  const auto pts = expand(spec);
  ASSERT_EQ(pts.size(), 2U + 4U);
  EXPECT_EQ(values_of(pts[1]), "a=2;r0");
  EXPECT_EQ(pts[2].scenario, 1U);
  EXPECT_EQ(values_of(pts[2]), "z=1;a=1;d=8;r0");
  EXPECT_EQ(values_of(pts[3]), "z=1;a=1;d=9;r0");
  EXPECT_EQ(values_of(pts[5]), "z=1;a=2;d=9;r0");
}

TEST(SweepSpec, RangesByStepAndByLogCount) {
  // step: 0.5, 1, ..., 2.5 (to included); integers stay integers with the unit appended.
  const auto spec = parse("name: t\nscenarios: [" + kScenario +
                          "]\naxes:\n  - {path: a, range: {from: 0.5, to: 2.5, step: 0.5}}\n"
                          "  - {path: b, range: {from: 8, to: 32, step: 8}, unit: GiB}\n"
                          "  - {path: c, range: {from: 1, to: 100, count: 3, log: true}}\n"
                          "  - {path: d, range: {from: 0.5, to: 1.5, count: 3}}\n");
  ASSERT_EQ(spec.axes.size(), 4U);
  const auto flat = [](const Axis& a) {
    std::string s;
    for (const auto& v : a.values) s += v.front() + " ";
    return s;
  };
  EXPECT_EQ(flat(spec.axes[0]), "0.5 1 1.5 2 2.5 ");
  EXPECT_EQ(flat(spec.axes[1]), "8GiB 16GiB 24GiB 32GiB ");
  // 1 x 100^(i/2): 1, 10, 100.
  EXPECT_EQ(flat(spec.axes[2]), "1 10 100 ");
  // Linear count with non-integer endpoints: 0.5, 1, 1.5.
  EXPECT_EQ(flat(spec.axes[3]), "0.5 1 1.5 ");
}

TEST(SweepSpec, IntegerLogRangesRoundAndRefuseRepeats) {
  // 2 x (64/2)^(i/5) for i = 0..5: 2, 4, 8, 16, 32, 64 exactly.
  auto spec = parse("name: t\nscenarios: [" + kScenario +
                    "]\naxes: [{path: a, range: {from: 2, to: 64, count: 6, log: true}}]\n");
  std::string s;
  for (const auto& v : spec.axes[0].values) s += v.front() + " ";
  EXPECT_EQ(s, "2 4 8 16 32 64 ");
  EXPECT_NE(error_of("name: t\nscenarios: [" + kScenario +
                     "]\naxes: [{path: a, range: {from: 1, to: 2, count: 4}}]\n")
                .find("repeat"),
            std::string::npos);
}

TEST(SweepSpec, ListValuesBecomeFlowYaml) {
  const auto spec = parse("name: t\nscenarios: [" + kScenario +
                          "]\naxes: [{path: a, values: [[1, 2], {k: v}]}]\n");
  EXPECT_EQ(spec.axes[0].values[0].front(), "[1, 2]");
  EXPECT_EQ(spec.axes[0].values[1].front(), "{k: v}");
}

TEST(SweepSpec, ErrorsNameFileLineAndColumn) {
  // Line 3, column 1: the unknown key.
  EXPECT_EQ(error_of("name: t\nscenarios: [" + kScenario + "]\nrepetition: 2\n").substr(0, 29),
            "s.yaml:3:1: error: repetition");
  // The second zipped axis (line 6, column 9) has 3 values against 2.
  const std::string zip = error_of("name: t\nscenarios: [" + kScenario +
                                   "]\naxes:\n  - zip:\n      - {path: a, values: [1, 2]}\n"
                                   "      - {path: b, values: [1, 2, 3]}\n");
  EXPECT_EQ(zip.substr(0, 11), "s.yaml:6:9:") << zip;
  EXPECT_NE(zip.find("same number of values"), std::string::npos);
  EXPECT_EQ(error_of("name: t\nscenarios: [missing.yaml]\n").substr(0, 12), "s.yaml:2:13:");
  EXPECT_EQ(
      error_of("scenarios: [" + kScenario + "]\n").find("missing 'name'") != std::string::npos,
      true);
  // The step that leads away from 'to' is marked at the step value: "axes: [{path: a, range:
  // {from: 1, to: 0, step: 1}}]" has it at column 48.
  EXPECT_EQ(error_of("name: t\nscenarios: [" + kScenario +
                     "]\naxes: [{path: a, range: {from: 1, to: 0, step: 1}}]\n")
                .substr(0, 12),
            "s.yaml:3:48:");
  EXPECT_EQ(error_of("name: [\n").substr(0, 7), "s.yaml:");  // YAML syntax error
}

}  // namespace
}  // namespace kvsim::planner
