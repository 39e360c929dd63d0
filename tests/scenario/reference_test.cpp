// docs/scenario-reference.md is generated from the field tables; this test keeps the committed
// file equal to the generated text. To rewrite it after changing a table:
//   KVSIM_WRITE_REFERENCE=1 kvsim_scenario_tests --gtest_filter='Reference.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/scenario/tables.hpp"

namespace kvsim::scenario {
namespace {

const std::string kDoc = std::string(KVSIM_SOURCE_DIR) + "/docs/scenario-reference.md";

TEST(Reference, CommittedDocMatchesTheTables) {
  const std::string generated = scenario_reference_markdown();
  if (const char* write = std::getenv("KVSIM_WRITE_REFERENCE"); write != nullptr && *write == '1') {
    std::ofstream(kDoc) << generated;
  }
  std::ifstream in(kDoc);
  ASSERT_TRUE(in) << kDoc << " is missing";
  std::ostringstream committed;
  committed << in.rdbuf();
  // Report the first differing line rather than both whole texts.
  std::istringstream a(committed.str());
  std::istringstream b(generated);
  std::string line_a;
  std::string line_b;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) break;
    ASSERT_TRUE(more_a && more_b && line_a == line_b)
        << "docs/scenario-reference.md is stale from line " << line
        << " (regenerate it with KVSIM_WRITE_REFERENCE=1)\n  committed: " << line_a
        << "\n  generated: " << line_b;
  }
  EXPECT_EQ(committed.str(), generated);
}

// Every key of every table has a row, under a section named by its dotted path.
TEST(Reference, EveryKeyIsDocumented) {
  const std::string doc = scenario_reference_markdown();
  for (const StructTable* t :
       {&scenario_table(), &hardware_table(), &server_table(), &gpu_table(), &host_link_table(),
        &model_table(), &engine_table(), &compute_table(), &roofline_table(), &workload_table(),
        &generation_table(), &prompt_input_table(), &prompt_output_table(), &clients_table(),
        &chat_template_table(), &trace_table(), &output_table()}) {
    for (const auto& f : t->fields) {
      EXPECT_NE(doc.find("| `" + f.key + "` |"), std::string::npos) << t->type_name << "." << f.key;
    }
  }
  EXPECT_NE(doc.find("## `hardware.servers[].gpu.host_link` (HostLinkSpec)"), std::string::npos);
  EXPECT_NE(doc.find("## `workload.generation.prompt_input` (prompt_input)"), std::string::npos);
  // A row spelled out: key, kind, default, allowed range, meaning.
  EXPECT_NE(doc.find("| `gpu_memory_utilization` | number | `0.9` | in (0, 1] |"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsim::scenario
