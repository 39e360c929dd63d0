// compute.kind auto and the calibrations it chooses from (sim/cluster/compute_factory.hpp),
// GPUs and models beyond the RTX 4090 (presets, MoE, data and expert parallelism), vLLM's
// version-dependent defaults and the batch limits vllm serve picks for a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/cluster/compute_factory.hpp"
#include "sim/cluster/simulation.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/deployment.hpp"
#include "sim/scenario/scenario.hpp"

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

// A dense model without a fit of its own on a GPU that has one (Qwen3-8B on the RTX 4090) runs on
// the GPU's measured fit of another model, rescaled by the roofline's ratio of the two models,
// not on the bare roofline; the note names the fit and the rescale's leave-one-model-out error
// (measured on the RTX PRO 6000, the only GPU with two dense models: Llama-3.1-8B and Qwen3-32B
// at TP 1 and 2, each rescaled to the other: 4 pairs). An MoE model gets no such rescale.
TEST(CalibratedCompute, AnotherModelsFitOnTheSameGpu) {
  const Scenario q = load(scenario("rtx4090", "{preset: qwen3-8b}", "max_model_len: 8192"));
  const ComputeChoice c = make_compute_model(q);
  EXPECT_EQ(c.kind, models::ComputeKind::kFitted);
  EXPECT_EQ(fs::path(c.source).filename(), "rtx4090-llama-3.1-8b-vllm0.19.yaml");
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n.find("leave-one-model-out over another GPU's") != std::string::npos;
  EXPECT_TRUE(noted);
  // The rescale keeps the measured kernels' shape: its 2,048-token prefill differs from the
  // roofline's, and lands within 15 % of the Llama fit's (the two models' FLOPs per token are
  // within 2 %).
  Scenario roof = q;
  roof.compute.kind = models::ComputeKind::kRoofline;
  models::BatchShape prefill;
  prefill.prefills.push_back({2048, 0});
  const double rescaled = c.model->step_time(prefill).kernels_s();
  const double roofline = make_compute_model(roof).model->step_time(prefill).kernels_s();
  const double llama =
      make_compute_model(load(scenario("rtx4090", "{preset: llama-3.1-8b}", "max_model_len: 8192")))
          .model->step_time(prefill)
          .kernels_s();
  EXPECT_GT(std::abs(rescaled - roofline) / roofline, 0.01);
  EXPECT_NEAR(rescaled / llama, 1.0, 0.15);
  const CrossModelError loo =
      cross_model_error(kProfiles, "NVIDIA RTX PRO 6000 Blackwell Server Edition", {});
  EXPECT_EQ(loo.pairs, 4);
  EXPECT_LE(loo.median_abs, loo.max_abs);
  EXPECT_LT(loo.max_abs, 0.15);
  EXPECT_EQ(cross_model_error(kProfiles, "NVIDIA GeForce RTX 4090", {}).pairs, 0);
  // An MoE model without its own fit keeps the roofline.
  LoadOptions unchecked = options();
  unchecked.check_deployment = false;  // 57 GiB of weights: only the compute model is asked for
  const Scenario moe = load_scenario_text(
      scenario("rtx4090", "{preset: qwen3-30b-a3b}", "max_model_len: 4096"), "t.yaml", unchecked);
  EXPECT_EQ(make_compute_model(moe).kind, models::ComputeKind::kRoofline);
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

// vLLM 0.10.1.1's sizing of `vllm serve Qwen/Qwen3-8B` on an RTX 4090 (max_model_len 40,960, one
// request needs 40,960 x 144 KiB = 5.625 GiB): weights 15.27 GiB, the FlashInfer profile sampler
// 256 x 151,936 x 14 B = 0.51 GiB (+ hidden states), non-torch 0.13 GiB leave
// 0.9 x 23.52 - 15.92 = 5.24 GiB at the catalog's total (refused) and 0.9 x 23.99 - 15.92 =
// 5.66 GiB at the most CUDA reports for the card (starts). kvsim sizes it at the least that
// starts, with a note; without memory_max, or where even memory_max is short, it refuses.
TEST(CalibratedCompute, SizingThatDependsOnTheCardIsNotRefused) {
  const Scenario s = load(scenario("rtx4090", "{preset: qwen3-8b}", "vllm_version: \"0.10\""));
  EXPECT_FALSE(check_deployment(s).has_value());
  const EngineSizing sizing = size_engines(s);
  EXPECT_EQ(sizing.max_model_len, 40960);
  EXPECT_EQ(sizing.kv.kv_tokens, 40960);
  EXPECT_TRUE(sizing.kv.fits_max_model_len);
  ASSERT_EQ(sizing.notes.size(), 1U);
  EXPECT_NE(sizing.notes[0].find("23.99 GiB"), std::string::npos) << sizing.notes[0];
  Simulation sim(s);
  EXPECT_EQ(sim.info().gpu_kv_cache_tokens, 40960);
  bool noted = false;
  for (const auto& n : sim.info().notes)
    noted = noted || n.find("the least that starts") != std::string::npos;
  EXPECT_TRUE(noted);
  // At a card that reports 23.52 GiB and no more, vLLM refuses: so does kvsim, at the key.
  const Scenario fixed = load_scenario_text(
      scenario("rtx4090", "{preset: qwen3-8b}", "vllm_version: \"0.10\""), "t.yaml", [] {
        LoadOptions o = options();
        o.check_deployment = false;
        o.overrides.push_back(parse_override("hardware.servers.0.gpu.memory_max=0B"));
        return o;
      }());
  const auto refused = check_deployment(fixed);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->path, "engine.max_model_len");
  // vLLM 0.19 on the same card: its heavier non-torch term (0.6 GiB) leaves 5.19 GiB even at
  // 23.99 GiB: refused.
  try {
    load(scenario("rtx4090", "{preset: qwen3-8b}", ""));
    ADD_FAILURE() << "Qwen3-8B at 40,960 tokens under vLLM 0.19 on a 4090 was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().path, "engine.max_model_len");
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

// Steps of two ranks that overlap in time without starting and ending together (none when the
// ranks step in lockstep).
int unaligned_overlaps(const Scenario& s) {
  std::vector<io::StepRecord> steps[2];
  Simulation sim(s);
  const StepCallback on_step = [&](const io::StepRecord& r) { steps[r.server].push_back(r); };
  const RunResult r = sim.run(on_step);
  EXPECT_EQ(r.info.failed_requests, 0);
  EXPECT_FALSE(steps[0].empty() || steps[1].empty());
  int unaligned = 0;
  for (const auto& a : steps[0]) {
    for (const auto& b : steps[1]) {
      const double a_end = a.time_s + a.duration_ms * 1e-3;
      const double b_end = b.time_s + b.duration_ms * 1e-3;
      // Steps that touch (one ends as the next begins) do not overlap; 1 ns of rounding.
      const bool overlap = a.time_s < b_end - 1e-9 && b.time_s < a_end - 1e-9;
      const bool together = a.time_s == b.time_s && a.duration_ms == b.duration_ms;
      if (overlap && !together) ++unaligned;
    }
  }
  return unaligned;
}

// vLLM's data-parallel ranks of an MoE model step in lockstep (DPEngineCoreProc: the MoE layers'
// collectives join them in every forward pass; an idle rank runs a dummy batch): every step of
// one rank that overlaps a step of the other starts and ends with it, lasting as long as the
// slower. The ranks of a dense model are independent engines and step alone.
TEST(CalibratedCompute, MoeDataParallelRanksStepInLockstep) {
  // Prompts and answers of varied lengths, so that the ranks' batches differ.
  const auto varied = [](std::string yaml) {
    const auto swap = [&](const std::string& from, const std::string& to) {
      yaml.replace(yaml.find(from), from.size(), to);
    };
    swap("num_tokens: {distribution: constant, value: 100}",
         "num_tokens: {distribution: uniform, min: 20, max: 400}");
    swap("num_tokens: {distribution: constant, value: 40}",
         "num_tokens: {distribution: uniform, min: 5, max: 80}");
    return load(yaml);
  };
  const Scenario moe = varied(
      scenario("rtx-pro-6000-server", "{preset: qwen3-30b-a3b}",
               "data_parallel_size: 2, enable_expert_parallel: true, max_model_len: 8192", 2));
  EXPECT_EQ(unaligned_overlaps(moe), 0);
  const Scenario dense = varied(scenario("rtx-pro-6000-server", "{preset: llama-3.1-8b}",
                                         "data_parallel_size: 2, max_model_len: 8192", 2));
  EXPECT_GT(unaligned_overlaps(dense), 0);
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
