// compute.kind auto and the calibrations it chooses from (sim/cluster/compute_factory.hpp),
// GPUs and models beyond the RTX 4090 (presets, MoE, data and expert parallelism), vLLM's
// version-dependent defaults and the batch limits vllm serve picks for a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/core/error.hpp"
#include "sim/cluster/compute_factory.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

namespace fs = std::filesystem;
const std::string kCatalog = std::string(KVSIM_SOURCE_DIR) + "/scenarios/catalog";
const std::string kProfiles = std::string(KVSIM_SOURCE_DIR) + "/models/profiles";

LoadOptions options() {
  LoadOptions o;
  o.catalog_dir = kCatalog;
  return o;
}

// A scenario of `gpus` GPUs of a preset, a model preset and engine keys, with a short workload.
std::string scenario(const std::string& gpu, const std::string& model, const std::string& engine,
                     int gpus = 1, const std::string& extra = "") {
  std::ostringstream os;
  os << "name: t\nhardware:\n  servers: [{gpus_per_server: " << gpus << ", gpu: {preset: " << gpu << "}}]\n"
     << "model: " << model << "\nengine: {" << engine << "}\n" << extra
     << "workload:\n  kind: multi_turn\n  generation:\n    num_conversations: 8\n    text_files: [x.txt]\n"
     << "    prompt_input:\n      num_turns: {distribution: constant, value: 2}\n"
     << "      prefix_num_tokens: {distribution: constant, value: 300}\n"
     << "      num_tokens: {distribution: constant, value: 100}\n"
     << "    prompt_output:\n      num_tokens: {distribution: constant, value: 40}\n"
     << "  clients: {num_clients: 8, max_active_conversations: 8}\n";
  return os.str();
}

Scenario load(const std::string& yaml) { return load_scenario_text(yaml, "t.yaml", options()); }

// The shipped profile of each measured setup is chosen by GPU, model shape and TP degree.
TEST(CalibratedCompute, AutoPicksTheMatchingShippedProfile) {
  const Scenario a = load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192"));
  EXPECT_EQ(a.compute.kind, models::ComputeKind::kAuto);
  EXPECT_EQ(a.profiles_dir, fs::path(kProfiles).lexically_normal().string());
  const ComputeChoice ca = make_compute_model(a);
  EXPECT_EQ(ca.kind, models::ComputeKind::kFitted);
  EXPECT_EQ(fs::path(ca.source).filename(), "rtx4090-llama-3.1-8b-vllm0.19.yaml");
  EXPECT_TRUE(ca.notes.empty());

  const Scenario b = load(scenario("rtx-pro-6000-server", "{preset: qwen3-32b}", "tensor_parallel_size: 2", 2));
  const ComputeChoice cb = make_compute_model(b);
  EXPECT_EQ(fs::path(cb.source).filename(), "rtxpro6000-qwen3-32b-vllm0.19-tp2.yaml");
  EXPECT_NE(cb.description.find("tensor parallel x2"), std::string::npos);

  const Scenario c = load(scenario("rtx-pro-6000-server", "{preset: qwen3-30b-a3b}",
                                   "data_parallel_size: 2, enable_expert_parallel: true", 2));
  const ComputeChoice cc = make_compute_model(c);
  EXPECT_EQ(fs::path(cc.source).filename(), "rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19-tp1.yaml");
  EXPECT_NE(cc.description.find("data parallel x2"), std::string::npos);
}

// Without a matching profile the roofline runs and a note says why: another GPU, or another
// dtype. An MoE model at a degree whose tables lack the MoE block takes its TP-1 fit instead.
TEST(CalibratedCompute, AutoFallsBackToTheRooflineWithAReason) {
  const ComputeChoice h = make_compute_model(load(scenario("h100-sxm", "{preset: llama-3.1-8b}", "max_model_len: 8192")));
  EXPECT_EQ(h.kind, models::ComputeKind::kRoofline);
  ASSERT_FALSE(h.notes.empty());
  EXPECT_NE(h.notes.front().find("no shipped profile"), std::string::npos);
  // Qwen3-30B-A3B at TP 2: the TP-2 fit has no MoE block, so auto takes the TP-1 fit with its
  // measured MoE block, rescaled to TP 2, and says so.
  const ComputeChoice m = make_compute_model(
      load(scenario("rtx-pro-6000-server", "{preset: qwen3-30b-a3b}", "tensor_parallel_size: 2", 2)));
  EXPECT_EQ(m.kind, models::ComputeKind::kFitted);
  EXPECT_NE(m.source.find("qwen3-30b-a3b-instruct-2507-vllm0.19-tp1.yaml"), std::string::npos);
  bool noted = false;
  for (const auto& n : m.notes) noted = noted || n.find("measured MoE block") != std::string::npos;
  EXPECT_TRUE(noted);
  const ComputeChoice q = make_compute_model(
      load(scenario("rtx-pro-6000-server", "{preset: llama-3.1-8b, dtype: fp8}", "max_model_len: 8192")));
  EXPECT_EQ(q.kind, models::ComputeKind::kRoofline);
}

// A fit pinned in a scenario whose GPU or model is another is refused, naming the key and the way
// out (compute.kind auto), instead of being rescaled by the roofline with a note; on its own GPU
// and model it is used as it is.
TEST(CalibratedCompute, ForeignFitIsRefused) {
  const std::string fitted = "compute: {kind: fitted, profile: {fitted_path: " + kProfiles +
                             "/rtx4090-llama-3.1-8b-vllm0.19.yaml}}\n";
  for (const auto& [gpu, model] : {std::pair<std::string, std::string>{"rtx-pro-6000-server", "{preset: llama-3.1-8b}"},
                                   {"rtx4090", "{preset: qwen3-8b}"}}) {
    try {
      make_compute_model(load(scenario(gpu, model, "max_model_len: 8192", 1, fitted)));
      FAIL() << gpu << " " << model << ": no error";
    } catch (const InputError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1U);
      EXPECT_EQ(e.diagnostics()[0].path, "compute.profile.fitted_path");
      EXPECT_NE(e.diagnostics()[0].message.find("compute.kind auto"), std::string::npos);
    }
  }
  const ComputeChoice native = make_compute_model(load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192", 1, fitted)));
  EXPECT_TRUE(native.notes.empty());
}

// A fitted profile that does not record its GPU's figures cannot be rescaled to another GPU.
TEST(CalibratedCompute, ProfileWithoutGpuFiguresIsRefusedElsewhere) {
  const fs::path dir = fs::temp_directory_path() / "kvsim_calibrated_compute_test";
  fs::create_directories(dir);
  std::ifstream in(kProfiles + "/rtx4090-llama-3.1-8b-vllm0.19.yaml");
  std::ofstream out(dir / "old.yaml");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("gpu_figures", 0) != 0 && line.rfind("gpu_preset", 0) != 0) out << line << '\n';
  }
  out.close();
  const std::string fitted = "compute: {kind: fitted, profile: {fitted_path: " + (dir / "old.yaml").string() + "}}\n";
  EXPECT_THROW(make_compute_model(load(scenario("rtx-pro-6000-server", "{preset: llama-3.1-8b}", "max_model_len: 8192", 1, fitted))),
               InputError);
  // On its own GPU it is used as it is.
  EXPECT_TRUE(make_compute_model(load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192", 1, fitted))).notes.empty());
  fs::remove_all(dir);
}

// vllm serve's batch limits: 8,192 tokens and 1,024 sequences on a 96 GB RTX PRO 6000, 2,048 and
// 256 on a 24 GB RTX 4090 and on an A100 (excluded by name); given values are kept.
TEST(CalibratedCompute, BatchDefaultsFollowTheGpu) {
  const Scenario pro = load(scenario("rtx-pro-6000-server", "{preset: llama-3.1-8b}", "max_model_len: 8192"));
  EXPECT_EQ(pro.engine.max_num_batched_tokens, 8192);
  EXPECT_EQ(pro.engine.max_num_seqs, 1024);
  const Scenario g = load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192"));
  EXPECT_EQ(g.engine.max_num_batched_tokens, 2048);
  EXPECT_EQ(g.engine.max_num_seqs, 256);
  const Scenario a100 = load(scenario("a100-80g-sxm", "{preset: llama-3.1-8b}", "max_model_len: 8192"));
  EXPECT_EQ(a100.engine.max_num_batched_tokens, 2048);
  const Scenario given = load(scenario("rtx-pro-6000-server", "{preset: llama-3.1-8b}",
                                       "max_model_len: 8192, max_num_seqs: 128, max_num_batched_tokens: 2048"));
  EXPECT_EQ(given.engine.max_num_seqs, 128);
  EXPECT_EQ(given.engine.max_num_batched_tokens, 2048);
  // The resolved scenario carries the values, and loads back the same.
  const Scenario again = load_scenario_text(pro.resolved_yaml, "resolved.yaml", options());
  EXPECT_EQ(again.engine.max_num_seqs, 1024);
}

// vLLM 0.10 defaults: no async scheduling, no full-ISL admission gate, piecewise CUDA graphs;
// 0.19: all three on. A malformed version names its key.
TEST(CalibratedCompute, VersionDefaults) {
  const Scenario v10 = load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192, vllm_version: \"0.10.1.1\""));
  EXPECT_FALSE(v10.engine.async_scheduling);
  EXPECT_FALSE(v10.engine.scheduler_reserve_full_isl);
  EXPECT_FALSE(v10.engine.full_cuda_graphs);
  const Scenario v19 = load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192"));
  EXPECT_TRUE(v19.engine.async_scheduling);
  EXPECT_TRUE(v19.engine.scheduler_reserve_full_isl);
  EXPECT_TRUE(v19.engine.full_cuda_graphs);
  const Scenario kept = load(scenario("rtx4090", "{preset: llama-3.1-8b}",
                                      "max_model_len: 8192, vllm_version: \"0.10\", async_scheduling: true"));
  EXPECT_TRUE(kept.engine.async_scheduling);
  try {
    load(scenario("rtx4090", "{preset: llama-3.1-8b}", "vllm_version: \"latest\""));
    ADD_FAILURE() << "a malformed version was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().path, "engine.vllm_version");
    EXPECT_GT(e.diagnostics().front().line, 0);
  }
}

// Parameters follow from the shape: a num_params that disagrees is refused with its location,
// one left out is derived.
TEST(CalibratedCompute, ParametersDeriveFromTheShape) {
  const Scenario ok = load(scenario("rtx4090", "{preset: qwen3-8b}", "max_model_len: 8192"));
  EXPECT_EQ(ok.model.num_params, 8'190'735'360);
  const Scenario derived = load(scenario("rtx4090", "{preset: llama-3.1-8b, num_layers: 16}", "max_model_len: 8192"));
  EXPECT_LT(derived.model.num_params, 8'030'261'248);
  try {
    load(scenario("rtx4090", "{preset: llama-3.1-8b, num_params: 9000000000}", "max_model_len: 8192"));
    ADD_FAILURE() << "a num_params that disagrees with the shape was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().path, "model.num_params");
    EXPECT_NE(std::string(e.what()).find("8030261248"), std::string::npos);
  }
}

// A Hugging Face config.json stands in for a preset: Qwen3-32B's gives the catalog entry's shape.
TEST(CalibratedCompute, HfConfigIsAModel) {
  const std::string config = std::string(KVSIM_SOURCE_DIR) + "/tests/fixtures/hf_configs/qwen3-32b.json";
  const Scenario s = load(scenario("rtx-pro-6000-server", "{hf_config: " + config + "}", "max_model_len: 8192"));
  const Scenario p = load(scenario("rtx-pro-6000-server", "{preset: qwen3-32b}", "max_model_len: 8192"));
  EXPECT_EQ(s.model.num_params, p.model.num_params);
  EXPECT_EQ(s.model.num_layers, 64);
  EXPECT_TRUE(s.model.qk_norm);
  // It picks the same shipped profile.
  EXPECT_EQ(make_compute_model(s).source, make_compute_model(p).source);
  // A missing file is an error at the key.
  try {
    load(scenario("rtx4090", "{hf_config: no-such-config.json}", ""));
    ADD_FAILURE() << "a missing config.json was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().path, "model.hf_config");
  }
}

// Two data-parallel ranks of an MoE deployment: each holds half the experts, the API server
// spreads requests over both, and every request finishes.
TEST(CalibratedCompute, DataParallelMoeDeploymentRuns) {
  const Scenario s = load(scenario("rtx-pro-6000-server", "{preset: qwen3-30b-a3b}",
                                   "data_parallel_size: 2, enable_expert_parallel: true, max_model_len: 32768", 2));
  Simulation sim(s);
  EXPECT_EQ(sim.info().num_engines, 2);
  bool mentions = false;
  for (const auto& line : sim.info().memory_breakdown) mentions |= line.find("64 of the 128 experts") != std::string::npos;
  EXPECT_TRUE(mentions);
  const RunResult r = sim.run();
  std::set<int> servers;
  for (const auto& q : r.requests) servers.insert(q.server);
  EXPECT_EQ(servers.size(), 2U);
  EXPECT_GT(r.requests.size(), 0U);
  EXPECT_EQ(r.info.failed_requests, 0);
}

// The acceptance scenario: naming only the GPU and model presets and the engine arguments, a
// server holds one deployment (tensor_parallel_size x data_parallel_size GPUs) and it runs.
TEST(CalibratedCompute, PresetsAndEngineArgumentsAloneRun) {
  const std::string yaml = R"(name: moe
hardware:
  servers: [{gpu: {preset: rtx-pro-6000-server}}]
model: {preset: qwen3-30b-a3b}
engine: {data_parallel_size: 2, enable_expert_parallel: true}
workload:
  kind: multi_turn
  generation:
    num_conversations: 4
    text_files: [x.txt]
    prompt_input:
      num_turns: {distribution: constant, value: 2}
      prefix_num_tokens: {distribution: constant, value: 200}
      num_tokens: {distribution: constant, value: 50}
    prompt_output:
      num_tokens: {distribution: constant, value: 20}
  clients: {num_clients: 4, max_active_conversations: 4}
)";
  const Scenario s = load(yaml);
  EXPECT_EQ(s.hardware.servers.front().gpus_per_server, 2);
  Simulation sim(s);
  EXPECT_EQ(sim.info().num_engines, 2);
  EXPECT_NE(sim.info().compute_model.find("rtxpro6000-qwen3-30b-a3b-instruct-2507-vllm0.19-tp1.yaml"), std::string::npos);
  EXPECT_GT(sim.run().requests.size(), 0U);
  // Tensor parallelism alike: TP 2 of Qwen3-32B takes two GPUs; a given count is kept.
  std::string tp2 = scenario("rtx-pro-6000-server", "{preset: qwen3-32b}", "tensor_parallel_size: 2, max_model_len: 8192", 4);
  EXPECT_EQ(load(tp2).hardware.servers.front().gpus_per_server, 4);
  tp2.replace(tp2.find("gpus_per_server: 4, "), 20, "");
  const Scenario t = load(tp2);
  EXPECT_EQ(t.hardware.servers.front().gpus_per_server, 2);
  EXPECT_NE(make_compute_model(t).source.find("qwen3-32b-vllm0.19-tp2.yaml"), std::string::npos);
}

// Expert parallelism needs experts; data parallel ranks must fit a server's GPUs.
TEST(CalibratedCompute, ParallelLayoutErrors) {
  EXPECT_THROW(Simulation(load(scenario("rtx-pro-6000-server", "{preset: llama-3.1-8b}",
                                        "enable_expert_parallel: true, max_model_len: 8192"))),
               InputError);
  EXPECT_THROW(Simulation(load(scenario("rtx-pro-6000-server", "{preset: qwen3-30b-a3b}",
                                        "data_parallel_size: 2, max_model_len: 8192", 1))),
               InputError);
}

}  // namespace
}  // namespace kvsim::cluster
