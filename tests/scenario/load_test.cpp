#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::scenario {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(KVSIM_TEST_DATA_DIR) + "/fixtures/scenarios";
const std::string kCatalog = kFixtures + "/catalog";

// A valid scenario; line numbers below count from its first line.
const std::string kBase = R"(name: t
hardware:
  servers:
    - gpu: {preset: rtx4090}
model: {preset: llama-3.1-8b}
workload:
  generation:
    num_conversations: 2
    prompt_input:
      num_turns: {distribution: constant, value: 2}
      prefix_num_tokens: {distribution: constant, value: 10}
      num_tokens: {distribution: constant, value: 10}
    prompt_output:
      num_tokens: {distribution: constant, value: 10}
)";

// These tests are about decoding: their scenarios need not run (kBase's model keeps its 131072
// tokens of context, more than an RTX 4090's KV cache holds), so whole-scenario checks are off
// (deployment_test.cpp has those).
LoadOptions with_catalog(std::vector<std::string> sets = {}) {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  o.check_deployment = false;
  for (const auto& s : sets) o.overrides.push_back(parse_override(s));
  return o;
}

// The diagnostics of a load as text, "" when it loads.
std::string errors(const std::string& yaml, const LoadOptions& options = with_catalog()) {
  try {
    load_scenario_text(yaml, "t.yaml", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Scenario load(const std::string& yaml, const LoadOptions& options = with_catalog()) {
  return load_scenario_text(yaml, "t.yaml", options);
}

// Sets an environment variable for one scope and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A folder of its own under the system temp folder (named by test and process, so parallel
// runs do not meet), removed afterwards.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() /
              ("kvsim_scenario_test_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel) << text;
  }

 private:
  fs::path path_;
};

// Presets copy the catalog entry; sibling keys override it; unset sections keep defaults.
TEST(LoadScenario, PresetsAndSiblingOverrides) {
  const Scenario s = load_scenario(kFixtures + "/presets.yaml", with_catalog());
  EXPECT_EQ(s.name, "presets");
  EXPECT_EQ(s.seed, 7u);
  ASSERT_EQ(s.hardware.servers.size(), 1u);
  const auto& server = s.hardware.servers[0];
  EXPECT_EQ(server.name, "box");
  EXPECT_EQ(server.count, 1);
  EXPECT_EQ(server.gpu.name, "rtx4090");
  EXPECT_EQ(server.gpu.memory.value, 48LL << 30);  // the sibling key wins over 24564MiB
  EXPECT_EQ(server.gpu.memory_bandwidth.value, 1008e9);
  EXPECT_EQ(server.gpu.bf16_dense.value, 165.2e12);
  EXPECT_EQ(server.gpu.host_link.gen, hw::PcieGen::kGen4);
  EXPECT_EQ(server.gpu.host_link.h2d.value, 25e9);
  EXPECT_EQ(server.gpu.host_link.bidirectional_each.value, 13e9);
  EXPECT_FALSE(server.gpu.p2p);
  EXPECT_EQ(s.model.name, "llama-3.1-8b");
  EXPECT_EQ(s.model.num_layers, 32);
  EXPECT_EQ(s.model.num_kv_heads, 8);
  EXPECT_EQ(s.model.num_params, 8'030'261'248);
  EXPECT_EQ(s.model.dtype, models::DType::kBf16);
  EXPECT_EQ(s.model.kv_dtype, models::DType::kBf16);
  EXPECT_EQ(s.engine.max_model_len, 32768);
  EXPECT_EQ(s.engine.max_num_seqs, 256);
  EXPECT_EQ(s.engine.max_num_batched_tokens, 2048);
  EXPECT_EQ(s.workload.kind, workload::WorkloadSpec::Kind::kMultiTurn);
  ASSERT_TRUE(s.workload.generation.has_value());
  const auto& g = *s.workload.generation;
  EXPECT_EQ(g.num_conversations, 4);
  EXPECT_EQ(g.text_files, std::vector<std::string>{"pg1184.txt"});
  EXPECT_EQ(g.num_turns.kind, workload::DistKind::kUniform);
  EXPECT_EQ(g.num_turns.min, 12);
  EXPECT_EQ(g.num_turns.max, 18);
  EXPECT_TRUE(g.num_turns.integer_bounds);
  EXPECT_EQ(g.common_prefix_num_tokens.kind, workload::DistKind::kConstant);
  EXPECT_EQ(g.common_prefix_num_tokens.value, 500);
  EXPECT_EQ(g.prefix_num_tokens.kind, workload::DistKind::kLognormal);
  EXPECT_TRUE(g.prefix_num_tokens.has_average);
  EXPECT_EQ(g.prefix_num_tokens.average, 1000);
  EXPECT_EQ(g.prefix_num_tokens.median_ratio, 0.85);
  EXPECT_TRUE(g.prefix_num_tokens.has_max);
  EXPECT_EQ(g.prefix_num_tokens.max, 5000);
  EXPECT_FALSE(g.output_num_tokens.integer_bounds);  // min written as 80.0
  EXPECT_EQ(s.workload.clients.num_clients, 2);
  EXPECT_EQ(s.workload.warmup_percentages, std::vector<double>{0.0});
  EXPECT_EQ(s.output.format, OutputFormat::kTable);
}

// Every section written out by hand, with a spread of units.
TEST(LoadScenario, InlineSpecsWithUnits) {
  LoadOptions o;
  o.catalog_dir = "/nonexistent";  // no preset here, so the catalog is never read
  o.check_deployment = false;      // two different GPUs, priority scheduling: decodes, does not run
  const Scenario s = load_scenario(kFixtures + "/inline.yaml", o);
  EXPECT_EQ(s.description, "Two lines of\ndescription.\n");
  EXPECT_EQ(s.seed, 18446744073709551615ull);
  ASSERT_EQ(s.hardware.servers.size(), 2u);
  const auto& a = s.hardware.servers[0];
  EXPECT_EQ(a.count, 2);
  EXPECT_EQ(a.gpus_per_server, 4);
  EXPECT_EQ(a.gpu.name, "custom");
  EXPECT_EQ(a.gpu.memory.value, 1649267441664);   // 1.5 x 2^40
  EXPECT_EQ(a.gpu.memory_bandwidth.value, 1e11);  // 800 Gb/s / 8
  EXPECT_EQ(a.gpu.bf16_dense.value, 2e15);
  EXPECT_EQ(a.gpu.fp8_dense.value, 0.0);
  EXPECT_EQ(a.gpu.host_link.gen, hw::PcieGen::kGen5);
  EXPECT_EQ(a.gpu.host_link.lanes, 8);
  EXPECT_EQ(a.gpu.host_link.h2d.value, 13421772800.0);  // 12.5 x 2^30
  EXPECT_EQ(a.gpu.host_link.d2h.value, 12e9);
  EXPECT_EQ(a.gpu.host_link.bidirectional_each.value, 12.5e9);
  EXPECT_TRUE(a.gpu.p2p);
  const auto& b = s.hardware.servers[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(b.count, 1);
  EXPECT_EQ(b.gpu.memory.value, 1'000'000);
  EXPECT_EQ(b.gpu.host_link.h2d.value, 1024.0);
  EXPECT_EQ(b.gpu.host_link.bidirectional_each.value, 1e7);
  EXPECT_EQ(s.model.dtype, models::DType::kFp16);
  EXPECT_EQ(s.model.kv_dtype, models::DType::kFp16);  // follows dtype when not given
  EXPECT_EQ(s.engine.gpu_memory_utilization, 1.0);
  EXPECT_EQ(s.engine.scheduling_policy, engine::SchedulingPolicy::kPriority);
  EXPECT_EQ(s.engine.num_gpu_blocks_override, 1000);
  EXPECT_EQ(s.engine.output_latency, 1'500'000);
  EXPECT_EQ(s.compute.overheads.host_step_us, 12.5);
  EXPECT_EQ(s.compute.overheads.host_per_sequence_us, 3);
  EXPECT_EQ(s.compute.overheads.graph_kernel_gap_us, 0.25);
  EXPECT_EQ(s.compute.overheads.step_gap_us, models::StepOverheadParams{}.step_gap_us);  // not given
  EXPECT_EQ(s.workload.kind, workload::WorkloadSpec::Kind::kTrace);
  // Relative files are relative to the scenario's folder, made absolute.
  const fs::path dir = fs::absolute(kFixtures).lexically_normal();
  EXPECT_EQ(s.workload.trace.file, (dir / "traces/sample.jsonl").string());
  EXPECT_EQ(s.workload.input_file, (dir / "conversations.json").string());
  EXPECT_EQ(s.workload.trace.format, workload::TraceFormat::kMooncake);
  EXPECT_EQ(s.workload.trace.time_scale, 0.5);
  EXPECT_EQ(s.workload.clients.conversation_sampling, workload::ConversationSampling::kRandom);
  EXPECT_EQ(s.workload.clients.request_rate, 0.25);
  EXPECT_FALSE(s.workload.clients.early_stop);
  EXPECT_EQ(s.workload.chat_template.generation_prompt_tokens, 3);
  EXPECT_EQ(s.workload.warmup_percentages, (std::vector<double>{0, 10, 12.5}));
  EXPECT_EQ(s.output.timeseries_out, "steps.csv");
  EXPECT_EQ(s.source_file, kFixtures + "/inline.yaml");
}

// The resolved YAML holds every field; loading it (no catalog needed) gives an equal scenario.
TEST(LoadScenario, ResolvedYamlRoundTrips) {
  LoadOptions no_catalog;
  no_catalog.catalog_dir = "/nonexistent";
  for (const std::string file : {"presets.yaml", "inline.yaml"}) {
    const Scenario s = load_scenario(kFixtures + "/" + file, with_catalog());
    no_catalog.check_deployment = false;  // inline.yaml decodes but does not run
    const Scenario again = load_scenario_text(s.resolved_yaml, "resolved.yaml", no_catalog);
    EXPECT_TRUE(scenario_differences(s, again).empty()) << file << "\n" << s.resolved_yaml;
    EXPECT_EQ(again.resolved_yaml, s.resolved_yaml) << file;
    EXPECT_EQ(s.resolved_yaml.find("preset:"), std::string::npos);
  }
  const Scenario s = load_scenario(kFixtures + "/presets.yaml", with_catalog());
  // Spot checks of the spelling: units, distributions, a real uniform bound.
  EXPECT_NE(s.resolved_yaml.find("memory: 48GiB"), std::string::npos);
  EXPECT_NE(s.resolved_yaml.find("memory_bandwidth: 1008GB/s"), std::string::npos);
  EXPECT_NE(s.resolved_yaml.find("output_latency: 0ns"), std::string::npos);
  EXPECT_NE(s.resolved_yaml.find("{distribution: uniform, min: 12, max: 18}"), std::string::npos);
  EXPECT_NE(s.resolved_yaml.find("{distribution: uniform, min: 80.0, max: 120.0}"),
            std::string::npos);
  EXPECT_NE(s.resolved_yaml.find(
                "{distribution: lognormal, average: 1000, median_ratio: 0.85, max: 5000}"),
            std::string::npos);
}

TEST(LoadScenario, DifferencesNameTheField) {
  Scenario a = load(kBase);
  Scenario b = a;
  b.engine.max_num_seqs = 1;
  b.hardware.servers[0].gpu.memory = Bytes{1};
  EXPECT_EQ(scenario_differences(a, b),
            (std::vector<std::string>{"hardware.servers.0.gpu.memory", "engine.max_num_seqs"}));
}

// --set patches the tree before decoding: scalars, flow nodes, list indices, new maps.
TEST(Overrides, PatchTheTree) {
  const Scenario s = load(kBase, with_catalog({
                                     "engine.max_num_seqs=128",
                                     "engine.enable_prefix_caching=false",
                                     "workload.clients.num_clients=16",
                                     "hardware.servers.0.count=2",
                                     "hardware.servers.0.gpu.memory=80GiB",
                                     "model.preset=qwen2.5-7b",
                                     "compute.roofline.gemm_efficiency=0.7",
                                     "workload.generation.prompt_input.num_tokens={distribution: "
                                     "uniform, min: 1, max: 3}",
                                     "workload.warmup_percentages=[5, 10]",
                                     "description=",
                                 }));
  EXPECT_EQ(s.engine.max_num_seqs, 128);
  EXPECT_FALSE(s.engine.enable_prefix_caching);
  EXPECT_EQ(s.workload.clients.num_clients, 16);
  EXPECT_EQ(s.hardware.servers[0].count, 2);
  EXPECT_EQ(s.hardware.servers[0].gpu.memory.value, 80LL << 30);
  EXPECT_EQ(s.hardware.servers[0].gpu.name, "rtx4090");
  EXPECT_EQ(s.model.name, "qwen2.5-7b");
  EXPECT_EQ(s.model.num_layers, 28);
  EXPECT_EQ(s.compute.roofline.gemm_efficiency, 0.7);
  EXPECT_EQ(s.compute.roofline.memory_efficiency, models::RooflineParams{}.memory_efficiency);  // untouched default
  EXPECT_EQ(s.workload.generation->num_tokens.kind, workload::DistKind::kUniform);
  EXPECT_EQ(s.workload.generation->num_tokens.max, 3);
  EXPECT_EQ(s.workload.warmup_percentages, (std::vector<double>{5, 10}));
  EXPECT_EQ(s.description, "");
  // The resolved YAML shows the overrides.
  EXPECT_NE(s.resolved_yaml.find("max_num_seqs: 128"), std::string::npos);
}

// An empty section (`engine:`) is an empty map: an override fills it.
TEST(Overrides, IntoAnEmptySection) {
  const Scenario s = load(kBase + "engine:\n", with_catalog({"engine.max_num_seqs=8"}));
  EXPECT_EQ(s.engine.max_num_seqs, 8);
  EXPECT_EQ(s.engine.max_num_batched_tokens, 2048);
}

// `~` removes an optional section, e.g. to switch from generation to an input file.
TEST(Overrides, NullRemovesAnOptionalSection) {
  const Scenario s =
      load(kBase, with_catalog({"workload.generation=~", "workload.input_file=conv.json"}));
  EXPECT_FALSE(s.workload.generation.has_value());
  EXPECT_EQ(s.workload.input_file, (fs::current_path() / "conv.json").lexically_normal().string());
}

// Diagnostics about an override's value name the override instead of a line.
TEST(Overrides, DiagnosticsNameTheOverride) {
  EXPECT_EQ(errors(kBase, with_catalog({"engine.max_num_seqs=abc"})),
            "--set engine.max_num_seqs=abc: error: engine.max_num_seqs: expected an integer, got "
            "'abc'");
  EXPECT_EQ(errors(kBase, with_catalog({"engine.max_num_seq=1"})),
            "--set engine.max_num_seq=1: error: engine.max_num_seq: unknown key; did you mean "
            "'max_num_seqs'?");
  EXPECT_EQ(errors(kBase, with_catalog({"engin.max_num_seqs=1"})),
            "--set engin.max_num_seqs=1: error: engin: unknown key; did you mean 'engine'?");
  EXPECT_EQ(errors(kBase, with_catalog({"hardware.servers.3.count=2"})),
            "--set hardware.servers.3.count=2: error: hardware.servers.3: index 3 is out of "
            "range: the list has 1 entries");
  EXPECT_EQ(errors(kBase, with_catalog({"hardware.servers.x.count=2"})),
            "--set hardware.servers.x.count=2: error: hardware.servers.x: expected a list index "
            "(0, 1, ...), got 'x'");
  EXPECT_EQ(errors(kBase, with_catalog({"name.x=1"})),
            "--set name.x=1: error: name: is a single value, not a map");
  EXPECT_EQ(errors(kBase, with_catalog({"model.preset=llama-3.1-8x"})),
            "--set model.preset=llama-3.1-8x: error: model.preset: unknown preset "
            "'llama-3.1-8x'; did you mean 'llama-3.1-8b'? (valid: llama-3.1-8b, qwen2.5-7b)");
}

TEST(Overrides, ParseOverride) {
  const Override o = parse_override("engine.max_num_seqs=128");
  EXPECT_EQ(o.path, "engine.max_num_seqs");
  EXPECT_EQ(o.value, "128");
  EXPECT_EQ(parse_override("a=b=c").value, "b=c");
  EXPECT_EQ(parse_override("hardware.servers.0.count=2").path, "hardware.servers.0.count");
  try {
    parse_override("engine.max_num_seqs");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--set engine.max_num_seqs: error: expected path=value, e.g. "
                 "engine.max_num_seqs=128");
  }
  EXPECT_THROW(parse_override("=1"), InputError);
  EXPECT_THROW(parse_override("a..b=1"), InputError);
  EXPECT_THROW(parse_override("a b=1"), InputError);
}

// All problems are reported together, sorted by line.
TEST(Diagnostics, AllErrorsAtOnceInLineOrder) {
  const std::string yaml = kBase +
                           "engine:\n"                        // line 15
                           "  max_num_seqs: abc\n"            // 16
                           "  gpu_memory_utilization: 1.5\n"  // 17
                           "  blok_size: 16\n"                // 18
                           "  output_latency: 5\n"            // 19
                           "output: {format: yaml}\n";        // 20
  EXPECT_EQ(errors(yaml),
            "t.yaml:16:17: error: engine.max_num_seqs: expected an integer, got 'abc'\n"
            "t.yaml:17:27: error: engine.gpu_memory_utilization: must be in (0, 1], got 1.5\n"
            "t.yaml:18:3: error: engine.blok_size: unknown key; did you mean 'block_size'?\n"
            "t.yaml:19:19: error: engine.output_latency: missing unit in '5': expected a time "
            "such as 80us (units: ns, us, ms, s)\n"
            "t.yaml:20:18: error: output.format: expected one of table, json, csv, got 'yaml'");
}

TEST(Diagnostics, MissingRequiredAndWrongShapes) {
  EXPECT_EQ(errors("name: x\n"),
            "t.yaml:1:1: error: hardware: missing required field\n"
            "t.yaml:1:1: error: model: missing required field\n"
            "t.yaml:1:1: error: workload: missing required field");
  // A GPU without a preset needs its figures.
  EXPECT_EQ(
      errors(kBase, with_catalog({"hardware.servers.0.gpu={memory: 1GiB}"})),
      "--set hardware.servers.0.gpu={memory: 1GiB}: error: "
      "hardware.servers.0.gpu.memory_bandwidth: missing required field\n"
      "--set hardware.servers.0.gpu={memory: 1GiB}: error: hardware.servers.0.gpu.bf16_dense: "
      "missing required field\n"
      "--set hardware.servers.0.gpu={memory: 1GiB}: error: hardware.servers.0.gpu.host_link: "
      "missing required field");
  EXPECT_EQ(errors(kBase, with_catalog({"hardware.servers=[]"})),
            "--set hardware.servers=[]: error: hardware.servers: has 0 entries; the count must be "
            ">= 1");
  EXPECT_EQ(errors(kBase, with_catalog({"engine=5"})),
            "--set engine=5: error: engine: expected a map, got '5'");
  EXPECT_EQ(errors(kBase, with_catalog({"hardware.servers={a: 1}"})),
            "--set hardware.servers={a: 1}: error: hardware.servers: expected a list of maps, got "
            "a map");
  EXPECT_EQ(errors("- a\n- b\n"),
            "t.yaml:1:1: error: expected a map of sections (name, hardware, model, ...)");
}

TEST(Diagnostics, DuplicateKeysAndUnknownKeysWithoutSuggestion) {
  EXPECT_EQ(errors(kBase + "seed: 1\nseed: 2\n"),
            "t.yaml:16:1: error: seed: duplicate key (first given at line 15)");
  EXPECT_EQ(errors(kBase + "zzz: 1\n"),
            "t.yaml:15:1: error: zzz: unknown key; valid keys: name, description, seed, hardware, "
            "model, engine, kv_offload, routing, compute, workload, output");
}

// Distribution objects follow vLLM's bench_dataset.py rules.
TEST(Diagnostics, Distributions) {
  auto with_turns = [](const std::string& dist) {
    return with_catalog({"workload.generation.prompt_input.num_turns=" + dist});
  };
  auto first_error = [&](const std::string& dist) {
    std::string e = errors(kBase, with_turns(dist));
    const std::string prefix = "--set workload.generation.prompt_input.num_turns=" + dist +
                               ": error: workload.generation.prompt_input.num_turns";
    EXPECT_EQ(e.rfind(prefix, 0), 0u) << e;
    return e.substr(std::min(e.size(), prefix.size()));
  };
  EXPECT_EQ(first_error("{distribution: lognormal, average: 10, mean: 1, sigma: 1}"),
            ": lognormal needs either average or mean+sigma");
  EXPECT_EQ(first_error("{distribution: lognormal, mean: 1}"),
            ": lognormal needs either average or mean+sigma");
  EXPECT_EQ(first_error("{distribution: lognormal, average: 0.5}"),
            ".average: must be in [1, 100000], got 0.5");
  EXPECT_EQ(first_error("{distribution: lognormal, average: 100, median_ratio: 1}"),
            ".median_ratio: must be in (0, 1), got 1");
  EXPECT_EQ(first_error("{distribution: uniform, min: 5, max: 2}"),
            ": uniform needs min <= max, got min 5 and max 2");
  EXPECT_EQ(first_error("{distribution: uniform, min: 0, max: 2}"), ".min: must be in (0, 100000], got 0");
  EXPECT_EQ(first_error("{distribution: uniform, min: 1}"), ": uniform needs min and max");
  EXPECT_EQ(first_error("{distribution: unifrom, min: 1, max: 2}"),
            ".distribution: unknown distribution 'unifrom'; did you mean 'uniform'? (valid: "
            "constant, uniform, lognormal, zipf, poisson)");
  EXPECT_EQ(first_error("{distribution: uniform, min: 1, max: 2, alpha: 3}"),
            ".alpha: 'alpha' is not a parameter of uniform (it takes min, max)");
  EXPECT_EQ(first_error("{distribution: zipf, alpha: 1}"), ".alpha: must be > 1, got 1");
  EXPECT_EQ(first_error("{distribution: poisson}"), ": poisson needs alpha");
  EXPECT_EQ(first_error("{min: 1}"),
            ": missing 'distribution' (one of constant, uniform, lognormal, zipf, poisson)");
  EXPECT_EQ(first_error("{distribution: constant, value: 1, valu: 1}"),
            ".valu: unknown key; did you mean 'value'?");
  EXPECT_EQ(first_error("3"),
            ": expected a distribution map such as {distribution: uniform, min: 1, max: 10}, got "
            "'3'");
  // Valid forms.
  EXPECT_EQ(errors(kBase, with_turns("{distribution: lognormal, mean: 6, sigma: 4, max: 1500}")),
            "");
  EXPECT_EQ(errors(kBase, with_turns("{distribution: zipf, alpha: 1.5, max: 20}")), "");
  EXPECT_EQ(errors(kBase, with_turns("{distribution: poisson, alpha: 4}")), "");
}

// Cross-field rules: the workload's input, the client limits, and vLLM's start-up checks.
TEST(Diagnostics, CrossFieldChecks) {
  EXPECT_EQ(errors(kBase, with_catalog({"workload.input_file=x.json"})),
            "--set workload.input_file=x.json: error: workload.input_file: give either "
            "generation or input_file, not both");
  EXPECT_EQ(errors(kBase, with_catalog({"workload.generation=~"})),
            "--set workload.generation=~: error: workload.generation: missing required field: "
            "multi_turn needs generation or input_file");
  EXPECT_EQ(errors(kBase, with_catalog({"workload.kind=trace"})),
            "t.yaml:7:3: error: workload.trace.file: missing required field: kind trace needs "
            "trace.file");
  EXPECT_EQ(errors(kBase, with_catalog({"workload.clients={num_clients: 4, "
                                        "max_active_conversations: 2}"})),
            "--set workload.clients={num_clients: 4, max_active_conversations: 2}: error: "
            "workload.clients.max_active_conversations: must be 0 or >= num_clients (4), got 2");
  EXPECT_EQ(errors(kBase, with_catalog({"workload.clients.limit_min_tokens=5"})),
            "--set workload.clients.limit_min_tokens=5: error: workload.clients.limit_min_tokens: "
            "limit_min_tokens and limit_max_tokens must both be > 0 when one is");
  // A max_num_seqs left to its default follows the budget down (vLLM: min(default, budget));
  // one given above the budget is refused.
  EXPECT_EQ(errors(kBase, with_catalog({"engine.max_num_batched_tokens=128"})), "");
  EXPECT_EQ(errors(kBase, with_catalog({"engine.max_num_seqs=256", "engine.max_num_batched_tokens=128"})),
            "--set engine.max_num_batched_tokens=128: error: engine.max_num_batched_tokens: must "
            "be >= max_num_seqs (256), got 128");
  EXPECT_EQ(errors(kBase, with_catalog({"engine.max_model_len=200000"})),
            "--set engine.max_model_len=200000: error: engine.max_model_len: must be <= the "
            "model's max_position_embeddings (131072), got 200000");
  EXPECT_EQ(errors(kBase + "engine: {enable_chunked_prefill: false, max_model_len: 4096}\n"),
            "t.yaml:15:9: error: engine.max_num_batched_tokens: must be >= max_model_len (4096) "
            "when enable_chunked_prefill is false, got 2048");
  EXPECT_EQ(errors(kBase, with_catalog({"model.num_kv_heads=5"})),
            "--set model.num_kv_heads=5: error: model.num_kv_heads: must divide "
            "num_attention_heads (32), got 5");
}

// A measured NCCL sweep (gpu.nccl_pair) needs increasing sizes and one time per size of each
// collective; the errors name the keys.
TEST(Diagnostics, NcclPairSweepChecks) {
  EXPECT_EQ(errors(kBase, with_catalog({"hardware.servers.0.gpu.nccl_pair={bytes: [4096, 8192], "
                                        "all_reduce_us: [12, 13], all_gather_us: [10, 11], "
                                        "reduce_scatter_us: [9, 10]}"})),
            "");
  const std::string bad =
      errors(kBase, with_catalog({"hardware.servers.0.gpu.nccl_pair={bytes: [8192, 4096], "
                                  "all_reduce_us: [12], all_gather_us: [10, 11], "
                                  "reduce_scatter_us: [9, 10]}"}));
  EXPECT_NE(bad.find("hardware.servers.0.gpu.nccl_pair.bytes: sizes must increase (entry 1)"),
            std::string::npos)
      << bad;
  EXPECT_NE(
      bad.find(
          "hardware.servers.0.gpu.nccl_pair.all_reduce_us: needs one time per size: 1 for 2 sizes"),
      std::string::npos)
      << bad;
  EXPECT_NE(
      errors(kBase,
             with_catalog({"hardware.servers.0.gpu.nccl_pair={bytes: [4096], all_reduce_us: [-1], "
                           "all_gather_us: [1], reduce_scatter_us: [1]}"}))
          .find("all_reduce_us"),
      std::string::npos);
}

// vLLM's kv_cache_dtype "auto" is the model's activation dtype: fp16 for an fp16 model, bf16 for
// FP8 and int4 checkpoints (their activations are 16-bit); fp8 KV only when asked.
TEST(Diagnostics, KvDtypeFollowsDtypeUnlessGiven) {
  EXPECT_EQ(load(kBase, with_catalog({"model.dtype=fp8"})).model.kv_dtype, models::DType::kBf16);
  EXPECT_EQ(load(kBase, with_catalog({"model.dtype=int4"})).model.kv_dtype, models::DType::kBf16);
  EXPECT_EQ(load(kBase, with_catalog({"model.dtype=fp16"})).model.kv_dtype, models::DType::kFp16);
  const Scenario s = load(kBase, with_catalog({"model.dtype=fp16", "model.kv_dtype=fp8"}));
  EXPECT_EQ(s.model.dtype, models::DType::kFp16);
  EXPECT_EQ(s.model.kv_dtype, models::DType::kFp8);
}

TEST(Diagnostics, MissingFile) {
  try {
    load_scenario(kFixtures + "/no_such.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), kFixtures + "/no_such.yaml: error: no such file");
  }
  EXPECT_THROW(load_scenario(kFixtures), InputError);  // a folder
}

TEST(Diagnostics, SyntaxErrorHasItsMark) {
  // yaml-cpp stops at the first syntax error; its mark is 0-based, ours 1-based.
  const std::string e = errors("name: x\nengine: {max_num_seqs: 1\n");
  EXPECT_EQ(e.rfind("t.yaml:3:1: error: YAML syntax: ", 0), 0u) << e;
}

// The catalog folder: the option first, then scenarios/catalog above the scenario file. The
// library reads no environment: KVSIM_CATALOG_DIR is the programs' to read and pass as the
// option (sim/cli/command.cpp apply_environment), so setting it here changes nothing.
TEST(Catalog, SearchOrder) {
  TempDir tmp("search");
  const std::string gpu_entry =
      "  memory: 1GiB\n  memory_bandwidth: 1GB/s\n  bf16_dense: 1TFLOPS\n"
      "  host_link: {h2d: 1GB/s, d2h: 1GB/s, bidirectional_each: 1GB/s}\n";
  tmp.write("project/scenarios/catalog/gpus.yaml", "walkup-gpu:\n" + gpu_entry);
  tmp.write("env-catalog/gpus.yaml", "env-gpu:\n" + gpu_entry);
  tmp.write("project/scenarios/examples/s.yaml",
            "hardware: {servers: [{gpu: {preset: walkup-gpu}}]}\n");
  const std::string scenario_file = (tmp.path() / "project/scenarios/examples/s.yaml").string();
  EXPECT_EQ(find_catalog_dir(scenario_file), (tmp.path() / "project/scenarios/catalog").string());
  EXPECT_EQ(find_catalog_dir((tmp.path() / "project").string()),
            (tmp.path() / "project/scenarios/catalog").string());
  EXPECT_EQ(find_catalog_dir((tmp.path() / "env-catalog").string()), "");

  auto gpu_error = [&](const LoadOptions& o) {
    try {
      load_scenario(scenario_file, o);
    } catch (const InputError& e) {
      for (const auto& d : e.diagnostics()) {
        if (d.path == "hardware.servers.0.gpu.preset") return d.message;
      }
    }
    return std::string("found");
  };
  {
    ScopedEnv env("KVSIM_CATALOG_DIR", nullptr);
    EXPECT_EQ(gpu_error({}), "found");  // walking up finds project/scenarios/catalog
  }
  {
    ScopedEnv env("KVSIM_CATALOG_DIR", (tmp.path() / "env-catalog").c_str());
    EXPECT_EQ(gpu_error({}), "found");  // the environment is not read
    LoadOptions o;
    o.catalog_dir = (tmp.path() / "env-catalog").string();  // as a program passes it
    EXPECT_EQ(gpu_error(o), "unknown preset 'walkup-gpu' (valid: env-gpu)");
    o.catalog_dir = kCatalog;
    EXPECT_EQ(gpu_error(o), "unknown preset 'walkup-gpu' (valid: h100-sxm, rtx4090)");
  }
}

// The catalog is the one source of drive and storage-node figures (no preset is defined in
// C++): a store from storage.yaml that names no `drive:` of its own gets its entry's drive,
// the figures of drives.yaml's samsung_pm9a3; a local drive by preset gets the same; a key
// beside the preset overrides one figure and keeps the others.
TEST(Catalog, StorageFiguresComeFromTheCatalog) {
  const std::string real = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";
  const Catalog cat = load_catalog(real);
  const hw::NvmeDriveSpec& pm9a3 = cat.drives.at("samsung_pm9a3");
  auto expect_pm9a3 = [&](const hw::NvmeDriveSpec& d) {
    EXPECT_EQ(d.name, "samsung_pm9a3");
    EXPECT_EQ(d.read, pm9a3.read);
    EXPECT_EQ(d.write, pm9a3.write);
    EXPECT_EQ(d.read_latency, pm9a3.read_latency);
    EXPECT_EQ(d.write_latency, pm9a3.write_latency);
    EXPECT_EQ(d.read_iops, pm9a3.read_iops);
    EXPECT_EQ(d.write_iops, pm9a3.write_iops);
    EXPECT_EQ(d.queue_depth, pm9a3.queue_depth);
  };
  // drives.yaml's figures (docs/sources.md A6).
  EXPECT_EQ(pm9a3.read.value, 6.5e9);
  EXPECT_EQ(pm9a3.read_latency, 80 * kMicrosecond);
  EXPECT_EQ(pm9a3.queue_depth, 128);

  LoadOptions o;
  o.catalog_dir = real;
  o.check_deployment = false;  // kBase keeps the model's 131072-token context: decodes, does not run
  o.overrides = {parse_override("hardware.remote_store={preset: pliops-xdp-lightningai}"),
                 parse_override("hardware.servers.0.local_nvme={drive: {preset: samsung_pm9a3}}")};
  const Scenario s = load(kBase, o);
  ASSERT_TRUE(s.hardware.remote_store.has_value());
  const hw::StorageNodeSpec& store = *s.hardware.remote_store;
  const hw::StorageNodeSpec& entry = cat.storage.at("pliops-xdp-lightningai");
  EXPECT_EQ(store.nic, entry.nic);
  EXPECT_EQ(store.nic.value, 23e9);
  EXPECT_EQ(store.controller, entry.controller);
  EXPECT_EQ(store.num_drives, 8);
  EXPECT_EQ(store.software_latency, 20 * kMicrosecond);
  expect_pm9a3(store.drive);
  ASSERT_TRUE(s.hardware.servers[0].local_nvme.has_value());
  expect_pm9a3(s.hardware.servers[0].local_nvme->drive);

  o.overrides.push_back(parse_override("hardware.remote_store.drive.read=5GB/s"));
  const Scenario faster = load(kBase, o);
  EXPECT_EQ(faster.hardware.remote_store->drive.read.value, 5e9);
  EXPECT_EQ(faster.hardware.remote_store->drive.write, pm9a3.write);
}

// The catalog files are decoded with the same tables: their problems carry their own file.
TEST(Catalog, ErrorsInTheCatalogNameTheCatalogFile) {
  TempDir tmp("bad_catalog");
  tmp.write("gpus.yaml",
            "g:\n"
            "  memory: 24\n"
            "  memory_bandwidth: 1GB/s\n"
            "  bf16_dense: 1TFLOPS\n"
            "  host_link: {h2d: 1GB/s, d2h: 1GB/s, bidirectional_each: 1GB/s}\n"
            "  preset: x\n");
  const std::string file = (tmp.path() / "gpus.yaml").string();
  try {
    load_catalog(tmp.path().string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              file +
                  ":2:11: error: g.memory: missing unit in '24': expected a byte size such as "
                  "24GiB (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)\n" +
                  file +
                  ":6:3: error: g.preset: unknown key; valid keys: name, memory, memory_max, "
                  "memory_bandwidth, bf16_dense, fp8_dense, host_link, p2p, nvlink, gpudirect, "
                  "num_sms, cuda_name, nccl_pair, source");
  }
  // A scenario using that catalog reports the catalog's problems, once.
  LoadOptions o;
  o.catalog_dir = tmp.path().string();
  const std::string e = errors(kBase, o);
  EXPECT_EQ(e.rfind(file + ":2:11: error: g.memory: missing unit", 0), 0u) << e;
  EXPECT_THROW(load_catalog((tmp.path() / "missing").string()), InputError);
}

TEST(Catalog, LoadsTheTestCatalog) {
  const Catalog c = load_catalog(kCatalog);
  ASSERT_EQ(c.gpus.size(), 2u);
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.gpus.at("rtx4090").name, "rtx4090");
  EXPECT_EQ(c.gpus.at("rtx4090").memory.value, 24564LL << 20);
  EXPECT_EQ(c.gpus.at("h100-sxm").host_link.gen, hw::PcieGen::kGen5);
  EXPECT_EQ(c.models.at("qwen2.5-7b").num_kv_heads, 4);
  // 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131072 bytes per token.
  EXPECT_EQ(c.models.at("llama-3.1-8b").kv_bytes_per_token().value, 131072);
  EXPECT_EQ(c.dir, kCatalog);
}

}  // namespace
}  // namespace kvsim::scenario
