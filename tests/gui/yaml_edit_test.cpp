// In-place YAML edits: the value at a path is replaced where it is written, comments and layout
// stay; a missing key goes into its nearest existing map. Expected texts are written by hand.
#include "gui/models/yaml_edit.hpp"

#include <gtest/gtest.h>

namespace kvsim::gui {
namespace {

TEST(YamlEdit, ReplacesPlainScalarKeepingTheComment) {
  EXPECT_EQ(set_yaml_value("a: 1  # one\nb: 2\n", "a", "5"),
            std::optional<std::string>("a: 5  # one\nb: 2\n"));
}

TEST(YamlEdit, FollowsListIndexes) {
  const std::string in = "# servers\nservers:\n  - name: x\n    count: 1 # boxes\n";
  EXPECT_EQ(set_yaml_value(in, "servers.0.count", "4"),
            std::optional<std::string>("# servers\nservers:\n  - name: x\n    count: 4 # boxes\n"));
  EXPECT_EQ(set_yaml_value(in, "servers.1.count", "4"), std::nullopt);
}

TEST(YamlEdit, ReplacesQuotedScalarsAndFlowCollections) {
  EXPECT_EQ(set_yaml_value("name: \"a b\"  # c\n", "name", "z"),
            std::optional<std::string>("name: z  # c\n"));
  EXPECT_EQ(set_yaml_value("tiers: [] # none\n", "tiers", "[{kind: remote}]"),
            std::optional<std::string>("tiers: [{kind: remote}] # none\n"));
  EXPECT_EQ(set_yaml_value("gpu: {preset: rtx4090, memory: 24GiB}\n", "gpu.memory", "48GiB"),
            std::optional<std::string>("gpu: {preset: rtx4090, memory: 48GiB}\n"));
}

TEST(YamlEdit, InsertsMissingKeysIntoTheirMap) {
  EXPECT_EQ(set_yaml_value("gpu: {preset: rtx4090}\n", "gpu.memory", "48GiB"),
            std::optional<std::string>("gpu: {memory: 48GiB, preset: rtx4090}\n"));
  EXPECT_EQ(set_yaml_value("engine:\n  max_num_seqs: 256\n", "engine.block_size", "32"),
            std::optional<std::string>("engine:\n  block_size: 32\n  max_num_seqs: 256\n"));
  EXPECT_EQ(set_yaml_value("a: 1", "routing.policy", "least_loaded"),
            std::optional<std::string>("a: 1\nrouting: {policy: least_loaded}\n"));
}

TEST(YamlEdit, RefusesWhatItCannotEditInPlace) {
  EXPECT_EQ(set_yaml_value("d: >\n  folded\n  text\n", "d", "x"), std::nullopt);
  EXPECT_EQ(set_yaml_value("l:\n  - 1\n  - 2\n", "l", "[3]"), std::nullopt);
  EXPECT_EQ(set_yaml_value("a: [1, 2", "a", "3"), std::nullopt);
}

}  // namespace
}  // namespace kvsim::gui
