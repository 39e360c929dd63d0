// Runs every config-error fixture: tests/fixtures/config_errors/<class>.yaml must fail to load
// with exactly the diagnostics in <class>.expected (paths there are relative to that folder).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::scenario {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(KVSIM_TEST_DATA_DIR) / "fixtures" / "config_errors";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Loads one fixture against the test catalog; returns its diagnostics with the folder removed.
std::string diagnostics_of(const fs::path& yaml) {
  LoadOptions o;
  o.catalog_dir = (fs::path(KVSIM_TEST_DATA_DIR) / "fixtures" / "scenarios" / "catalog").string();
  try {
    load_scenario(yaml.string(), o);
  } catch (const InputError& e) {
    std::string text = e.what();
    const std::string prefix = kDir.string() + "/";
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
      text.erase(at, prefix.size());
    }
    return text + "\n";
  }
  return "(loaded without error)\n";
}

// One fixture per error class, each present.
TEST(ConfigErrors, OneFixturePerErrorClass) {
  const std::set<std::string> classes = {"syntax",         "unknown_key",     "wrong_type",
                                         "missing_unit",   "out_of_range",    "missing_required",
                                         "unknown_preset", "bad_distribution"};
  for (const auto& c : classes) {
    EXPECT_TRUE(fs::exists(kDir / (c + ".yaml"))) << c;
    EXPECT_TRUE(fs::exists(kDir / (c + ".expected"))) << c;
  }
}

// Every fixture in the folder gives exactly its expected diagnostics.
TEST(ConfigErrors, EachFixtureGivesItsExpectedDiagnostics) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() != ".yaml") continue;
    fs::path expected = entry.path();
    expected.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected)) << expected;
    EXPECT_EQ(diagnostics_of(entry.path()), read(expected)) << entry.path().filename();
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

}  // namespace
}  // namespace kvsim::scenario
