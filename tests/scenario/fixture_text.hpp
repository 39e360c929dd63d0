#pragma once
// Scenario test fixtures read as text (tests/fixtures/scenarios/), for tests that edit them
// before decoding.
#include <fstream>
#include <sstream>
#include <string>

namespace kvsim::scenario::testing {

// The test catalog (tests/fixtures/scenarios/catalog).
inline const std::string kFixtureCatalog =
    std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/scenarios/catalog";

// The text of tests/fixtures/scenarios/NAME.
inline std::string fixture_scenario_text(const std::string& name) {
  std::ifstream in(std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/scenarios/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kvsim::scenario::testing
