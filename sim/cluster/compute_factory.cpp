#include "sim/cluster/compute_factory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <utility>

#include "hw/collective.hpp"
#include "models/fitted_model.hpp"
#include "models/profile_bundle.hpp"
#include "models/profile_model.hpp"
#include "models/step_overheads.hpp"
#include "models/tensor_parallel.hpp"
#include "models/tensor_parallel_model.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/deployment.hpp"
#include "sim/workload/make_driver.hpp"

namespace kvsim::cluster {
using scenario::Scenario;
namespace fs = std::filesystem;

namespace {

InputError scenario_error(const Scenario& sc, const std::string& path, const std::string& message) {
  return InputError(Diagnostic{sc.source_file, 0, 0, path, message});
}

bool is_sixteen_bit(const models::ModelSpec& m) {
  return (m.dtype == models::DType::kBf16 || m.dtype == models::DType::kFp16) &&
         (m.kv_dtype == models::DType::kBf16 || m.kv_dtype == models::DType::kFp16);
}

// Whether the GPU's compute figures are the profiled GPU's (each within 0.1 %).
bool same_gpu_figures(const models::FittedCoefficients& c, const hw::GpuSpec& gpu) {
  if (c.gpu_figures.size() != models::kGpuFigureFields)
    return true;  // not recorded: trust the name
  auto close = [](double a, double b) {
    return std::abs(a - b) <= 1e-3 * std::max(std::abs(a), std::abs(b));
  };
  return close(c.gpu_figures[0], gpu.memory_bandwidth.value) &&
         close(c.gpu_figures[1], gpu.bf16_dense.value);
}

struct Shipped {
  std::string path;
  models::FittedCoefficients coefficients;
};

// The shipped fitted profiles, in file-name order; unreadable ones are skipped with a note.
std::vector<Shipped> shipped_profiles(const std::string& dir, std::vector<std::string>& notes) {
  std::vector<Shipped> out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    try {
      out.push_back(Shipped{f.string(), models::load_fitted_yaml(f.string())});
    } catch (const InputError& e) {
      notes.push_back("skipped the shipped profile " + f.string() + ": " + e.what());
    }
  }
  return out;
}

// Why the shipped profile `c` does not fit the scenario, or empty when it does.
std::string mismatch(const models::FittedCoefficients& c, const Scenario& sc) {
  const auto& gpu = sc.hardware.servers.front().gpu;
  if (gpu.cuda_name.empty() || c.gpu != gpu.cuda_name) return "measured on " + c.gpu;
  std::string why;
  if (!models::shape_matches(c, sc.model, &why)) return "another model (" + why + ")";
  if (c.tensor_parallel_size != sc.engine.tensor_parallel_size) {
    return "tensor-parallel degree " + std::to_string(c.tensor_parallel_size);
  }
  if (sc.model.is_moe() && c.moe_layer_us.empty()) return "no MoE block";
  return "";
}

// How far apart two dense models' shapes are, for choosing the nearest measured model:
// the log ratios of hidden and intermediate size, and 1 for another head size.
double shape_distance(const models::ModelSpec& a, const models::ModelSpec& b) {
  const auto lr = [](double x, double y) { return std::abs(std::log(x / y)); };
  return lr(a.hidden_size, b.hidden_size) + lr(a.intermediate_size, b.intermediate_size) +
         (a.head_dim == b.head_dim ? 0.0 : 1.0);
}

// A dense BF16 fit with a recorded model shape and GPU: usable as the source of a rescale to
// another dense model of the same GPU.
bool dense_source(const models::FittedCoefficients& c) {
  return c.model_shape.size() == models::kModelShapeFields && c.model_shape[7] == 0 &&
         c.moe_layer_us.empty() && !c.gpu.empty();
}

// `from`'s fit rescaled to `to`'s model by the roofline's ratio per kernel component, on `gpu`
// at `to`'s degree (what compute.kind auto builds for a model without a fit of its own).
std::unique_ptr<models::ComputeModel> rescaled_fit(const models::FittedCoefficients& from,
                                                   const models::ModelSpec& to, int tp,
                                                   const hw::GpuSpec& gpu,
                                                   const models::RooflineParams& rp,
                                                   const models::ProfileParams& params) {
  const models::ModelSpec source = models::model_of_shape(from);
  auto inner = std::make_unique<models::FittedModel>(from, source, params);
  auto profiled = std::make_unique<models::RooflineModel>(
      source, device_figures(gpu, source), rp, from.tensor_parallel_size, models::MoeLayout{});
  auto target = std::make_unique<models::RooflineModel>(to, device_figures(gpu, to), rp, tp,
                                                        models::MoeLayout{});
  return std::make_unique<models::TensorParallelModel>(std::move(inner), to, tp, nullptr, nullptr,
                                                       std::move(profiled), std::move(target));
}

}  // namespace

namespace {

CrossModelError cross_model_error(const std::vector<Shipped>& all, const std::string& cuda_name,
                                  const models::RooflineParams& rp) {
  models::BatchShape decode;
  decode.decode_contexts.assign(128, 1024);
  models::BatchShape prefill;
  prefill.prefills.push_back({2048, 0});
  std::vector<double> errors;
  CrossModelError out;
  for (const auto& a : all) {
    for (const auto& b : all) {
      const auto& ca = a.coefficients;
      const auto& cb = b.coefficients;
      if (&a == &b || !dense_source(ca) || !dense_source(cb) || ca.gpu != cb.gpu ||
          ca.tensor_parallel_size != cb.tensor_parallel_size || ca.model_shape == cb.model_shape ||
          (!cuda_name.empty() && ca.gpu != cuda_name) ||
          ca.gpu_figures.size() != models::kGpuFigureFields) {
        continue;
      }
      // The profiled GPU as the fit records it (the roofline's ratio needs its rates only).
      hw::GpuSpec gpu;
      gpu.cuda_name = ca.gpu;
      gpu.memory_bandwidth = BytesPerSec{ca.gpu_figures[0]};
      gpu.bf16_dense = FlopsPerSec{ca.gpu_figures[1]};
      gpu.fp8_dense = FlopsPerSec{ca.gpu_figures[2]};
      const models::ModelSpec target = models::model_of_shape(cb);
      const auto split = rescaled_fit(ca, target, cb.tensor_parallel_size, gpu, rp, {});
      const models::FittedModel own(cb, target);
      for (const auto* batch : {&decode, &prefill}) {
        const double s = split->step_time(*batch).kernels_s();
        const double m = own.step_time(*batch).kernels_s();
        errors.push_back(std::abs(s - m) / m);
      }
      ++out.pairs;
    }
  }
  if (errors.empty()) return out;
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  out.median_abs = n % 2 == 1 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  out.max_abs = errors.back();
  return out;
}

}  // namespace

CrossModelError cross_model_error(const std::string& profiles_dir, const std::string& cuda_name,
                                  const models::RooflineParams& rp) {
  std::vector<std::string> ignored;
  return cross_model_error(shipped_profiles(profiles_dir, ignored), cuda_name, rp);
}

std::string scenario_dir(const Scenario& sc) {
  const std::string dir =
      sc.source_file.empty() ? std::string() : fs::path(sc.source_file).parent_path().string();
  return dir.empty() ? std::string(".") : dir;
}

std::string scenario_relative(const Scenario& sc, const std::string& path) {
  return workload::resolve_path(path, scenario_dir(sc));
}

models::DeviceFigures device_figures(const hw::GpuSpec& gpu, const models::ModelSpec& model) {
  models::DeviceFigures d;
  d.memory = gpu.memory;
  d.memory_bandwidth = gpu.memory_bandwidth;
  const bool fp8 = model.dtype == models::DType::kFp8 && gpu.fp8_dense.value > 0;
  d.tensor_flops = fp8 ? gpu.fp8_dense : gpu.bf16_dense;
  d.bf16_flops = gpu.bf16_dense;
  return d;
}

models::GraphPolicy graph_policy(const engine::EngineConfig& e) {
  models::GraphPolicy p;
  p.mode = e.enforce_eager      ? models::GraphMode::kEager
           : e.full_cuda_graphs ? models::GraphMode::kFullAndPiecewise
                                : models::GraphMode::kPiecewise;
  // vllm/config/vllm.py: max_cudagraph_capture_size = min(2 x max_num_seqs, 512) tokens.
  p.max_capture_tokens = std::min<std::int64_t>(2 * static_cast<std::int64_t>(e.max_num_seqs), 512);
  p.async_scheduling = e.async_scheduling;
  return p;
}

std::vector<std::string> describe_step_times(const models::ComputeModel& model, const engine::EngineConfig& e) {
  const models::GraphPolicy policy = graph_policy(e);
  const int n = std::min(128, e.max_num_seqs);
  models::BatchShape decode;
  decode.decode_contexts.assign(static_cast<std::size_t>(n), 1024);
  models::BatchShape prefill;
  prefill.prefills.push_back({2048, 0});
  std::vector<std::string> out;
  const auto line = [&](const std::string& what, const models::BatchShape& batch) {
    const models::StepBreakdown b = model.step_time(batch);
    const models::StepLaunches launches = models::step_launches(policy, batch, b);
    const double step = b.step_s(policy.async_scheduling);
    char buf[640];
    std::snprintf(buf, sizeof buf,
                  "%s: %.2f ms = kernels %.2f (dense %.2f, attention %.2f, MoE %.2f, lm_head+sampler %.2f) "
                  "+ collectives %.2f + GPU overheads %.2f (%.0f launches in CUDA graphs, %.0f eager, step gap) "
                  "%s host %.2f; %.0f tokens/s",
                  what.c_str(), step * 1e3, (b.kernels_s() - b.communication_s) * 1e3, b.dense_s * 1e3,
                  b.attention_s * 1e3, b.moe_s * 1e3, b.lm_head_s * 1e3, b.communication_s * 1e3,
                  b.gpu_overhead_s * 1e3, launches.graph, launches.eager,
                  policy.async_scheduling ? "| overlapped:" : "+", b.overhead_s * 1e3,
                  step > 0 ? static_cast<double>(batch.num_tokens()) / step : 0.0);
    out.emplace_back(buf);
  };
  line(std::to_string(n) + "-sequence decode at 1,024 tokens of context", decode);
  line("2,048-token prefill, nothing cached", prefill);
  return out;
}

ComputeChoice make_compute_model(const Scenario& sc) {
  const auto& server = sc.hardware.servers.front();
  const auto& gpu = server.gpu;
  const auto& c = sc.compute;
  const int tp = sc.engine.tensor_parallel_size;
  const int dp = sc.engine.data_parallel_size;
  const models::MoeLayout layout = scenario::moe_layout(sc);
  models::ProfileParams params = c.profile;

  ComputeChoice out;
  std::optional<Shipped> fitted;
  bool cross_model = false;  // auto chose another model's fit on this GPU
  std::vector<Shipped> all;  // the shipped fits auto chose from (whole unless a match was taken)
  out.kind = c.kind;
  switch (c.kind) {
    case models::ComputeKind::kAuto: {
      std::string reasons;
      if (!is_sixteen_bit(sc.model)) {
        reasons = std::string("the shipped profiles are of BF16 weights and KV, the model is ") +
                  models::dtype_name(sc.model.dtype) + " / KV " +
                  models::dtype_name(sc.model.kv_dtype);
      } else {
        all = shipped_profiles(sc.profiles_dir, out.notes);
        for (auto& s : all) {
          const std::string why = mismatch(s.coefficients, sc);
          if (why.empty()) {
            fitted = std::move(s);
            break;
          }
        }
        // An MoE model at a degree whose tables hold no MoE block (the bundles measure moe.csv
        // at TP 1 only): the same GPU's and model's fit with a measured MoE block, rescaled to
        // the degree by the roofline, keeps the measured experts, which dominate its steps.
        if (!fitted && sc.model.is_moe()) {
          for (auto& s : all) {
            const auto& co = s.coefficients;
            if (!co.moe_layer_us.empty() && !gpu.cuda_name.empty() && co.gpu == gpu.cuda_name &&
                models::shape_matches(co, sc.model, nullptr)) {
              out.notes.push_back("compute.kind auto: no shipped fit of " + sc.model.name + " at tensor-parallel degree " +
                                  std::to_string(tp) + " has an MoE block; using " + s.path +
                                  " (degree " + std::to_string(co.tensor_parallel_size) + ", measured MoE block)");
              fitted = std::move(s);
              break;
            }
          }
        }
        // A dense model without a fit of its own on a GPU that has fits of other dense models:
        // the nearest model's fit (same degree first), rescaled to this model's shape by the
        // roofline's ratio per kernel component, keeps the GPU's measured kernel efficiencies.
        if (!fitted && !sc.model.is_moe() && !gpu.cuda_name.empty()) {
          const Shipped* best = nullptr;
          double best_score = 0;
          for (const auto& s : all) {
            const auto& co = s.coefficients;
            if (!dense_source(co) || co.gpu != gpu.cuda_name || !same_gpu_figures(co, gpu))
              continue;
            const double score = shape_distance(models::model_of_shape(co), sc.model) +
                                 (co.tensor_parallel_size == tp ? 0.0 : 10.0);
            if (best == nullptr || score < best_score) {
              best = &s;
              best_score = score;
            }
          }
          if (best != nullptr) {
            fitted = *best;
            cross_model = true;
          }
        }
        if (!fitted) {
          reasons =
              "no shipped profile of " + (gpu.cuda_name.empty() ? gpu.name : gpu.cuda_name) +
              " with " + sc.model.name + " at tensor-parallel degree " + std::to_string(tp) +
              (sc.model.is_moe() ? " with an MoE block" : "") + " in " +
              (sc.profiles_dir.empty() ? std::string("(no profile folder)") : sc.profiles_dir);
        }
      }
      out.kind = fitted ? models::ComputeKind::kFitted : models::ComputeKind::kRoofline;
      if (!fitted) out.notes.push_back("compute.kind auto: roofline, because " + reasons);
      break;
    }
    case models::ComputeKind::kFitted: {
      const std::string path = scenario_relative(sc, c.profile.fitted_path);
      fitted = Shipped{path, models::load_fitted_yaml(path)};
      break;
    }
    case models::ComputeKind::kRoofline:
    case models::ComputeKind::kProfile:
      break;
  }

  std::unique_ptr<models::ComputeModel> inner;
  std::unique_ptr<models::RooflineModel> profiled;
  std::unique_ptr<models::RooflineModel> target;
  std::string rescale_note;
  auto target_roofline = [&] {
    return std::make_unique<models::RooflineModel>(sc.model, device_figures(gpu, sc.model),
                                                   c.roofline, tp, layout);
  };

  switch (out.kind) {
    case models::ComputeKind::kFitted: {
      const auto& co = fitted->coefficients;
      out.source = fitted->path;
      // A profile that records neither its GPU's figures nor its model's shape was fitted to
      // measurements of a live deployment (kvsim calibrate --measured): it describes that
      // deployment as it is.
      const bool deployment_fit = co.model_shape.empty() && co.gpu_figures.empty();
      const bool other_gpu =
          !deployment_fit && (gpu.cuda_name != co.gpu || !same_gpu_figures(co, gpu));
      const bool other_model = !deployment_fit && !models::shape_matches(co, sc.model, nullptr);
      if (cross_model) {
        inner = rescaled_fit(co, sc.model, tp, gpu, c.roofline, params);
        CrossModelError loo = cross_model_error(all, gpu.cuda_name, c.roofline);
        const bool this_gpu = loo.pairs > 0;
        if (!this_gpu) loo = cross_model_error(all, "", c.roofline);
        char buf[320];
        if (loo.pairs > 0) {
          std::snprintf(buf, sizeof buf,
                        "; leave-one-model-out over %s%d pairs of shipped fits: median |error| "
                        "%.1f %%, max %.1f %% in "
                        "the kernel time of a 128-sequence decode and a 2,048-token prefill",
                        this_gpu ? "this GPU's " : "another GPU's (none fitted on this one) ",
                        loo.pairs, 100.0 * loo.median_abs, 100.0 * loo.max_abs);
        } else {
          std::snprintf(buf, sizeof buf,
                        "; no two models are fitted on one GPU to measure the rescale's error");
        }
        out.notes.push_back(
            "compute.kind auto: no shipped fit of " + sc.model.name + " on " + gpu.cuda_name +
            "; using " + fitted->path + " (" + co.model + ", tensor-parallel degree " +
            std::to_string(co.tensor_parallel_size) +
            ") rescaled to this model by the roofline's ratio per kernel component" + buf);
        rescale_note = "another model's fit (" + co.model + ")";
        profiled.reset();
        target.reset();
        break;
      }
      if (other_gpu || other_model) {
        // A fit carries its GPU's and model's kernels; the roofline's ratio to another GPU or
        // model misses by a median 9-15 % leaving one GPU out (docs/validation.md), more for
        // another model's shape: refused rather than silently rescaled.
        throw scenario_error(
            sc, "compute.profile.fitted_path",
            fitted->path + " was fitted to " + co.model + " on " + co.gpu + "; this scenario runs " +
                sc.model.name + " on " + (gpu.cuda_name.empty() ? gpu.name : gpu.cuda_name) +
                ". kvsim does not rescale a fit to another GPU or model: use compute.kind auto (the "
                "shipped calibration of this GPU and model, else the roofline, with a note) or a fit of "
                "this GPU and model (kvsim calibrate, docs/calibration.md)");
      }
      // What differs from the profiled configuration on this GPU and model, each a reason to
      // rescale.
      std::vector<std::string> diffs;
      if (!deployment_fit && co.tensor_parallel_size != tp) {
        diffs.push_back("tensor-parallel degree " + std::to_string(tp) + " instead of " +
                        std::to_string(co.tensor_parallel_size));
      }
      if (!deployment_fit && !is_sixteen_bit(sc.model))
        diffs.push_back(std::string("weights ") + models::dtype_name(sc.model.dtype) + " / KV " +
                        models::dtype_name(sc.model.kv_dtype) + " instead of BF16");
      if (diffs.empty()) {
        inner = std::make_unique<models::FittedModel>(co, sc.model, params, layout);
      } else {
        models::ModelSpec as_profiled = sc.model;
        as_profiled.dtype = models::DType::kBf16;
        as_profiled.kv_dtype = models::DType::kBf16;
        if (as_profiled.is_moe() && co.moe_layer_us.empty()) {
          throw scenario_error(
              sc, "compute.profile.fitted_path",
              fitted->path + " has no MoE block for the mixture-of-experts model " + sc.model.name);
        }
        const models::DeviceFigures profiled_gpu = device_figures(gpu, as_profiled);
        const models::MoeLayout profiled_layout{};
        inner = std::make_unique<models::FittedModel>(co, as_profiled, params, profiled_layout);
        profiled = std::make_unique<models::RooflineModel>(
            as_profiled, profiled_gpu, c.roofline, co.tensor_parallel_size, profiled_layout);
        target = target_roofline();
        for (const auto& d : diffs) rescale_note += (rescale_note.empty() ? "" : "; ") + d;
        out.notes.push_back(
            "the fitted profile " + fitted->path + " is rescaled: " + rescale_note +
            "; each kernel component (dense, MoE, attention, lm_head) is multiplied by the "
            "roofline's ratio of this configuration to the profiled one");
      }
      break;
    }
    case models::ComputeKind::kProfile: {
      const std::string dir = scenario_relative(sc, c.profile.bundle_dir);
      const auto degrees = models::profile_bundle_degrees(dir);
      const bool has_tp = std::find(degrees.begin(), degrees.end(), tp) != degrees.end();
      const auto bundle =
          models::load_profile_bundle(dir, has_tp ? tp : (degrees.size() == 1 ? 0 : 1));
      out.source = bundle.tables_dir;
      if (!gpu.cuda_name.empty() && !bundle.meta.gpu.empty() && bundle.meta.gpu != gpu.cuda_name) {
        throw scenario_error(
            sc, "compute.profile.bundle_dir",
            bundle.dir + " was measured on " + bundle.meta.gpu + ", not on " + gpu.cuda_name +
                "; a bundle's tables are used only on their own GPU (fit it with kvsim calibrate "
                "to rescale it to another GPU: docs/calibration.md)");
      }
      inner = std::make_unique<models::ProfileModel>(bundle, sc.model, params, layout);
      if (bundle.tensor_parallel_size != tp || !is_sixteen_bit(sc.model)) {
        models::ModelSpec as_profiled = sc.model;
        as_profiled.dtype = models::DType::kBf16;
        as_profiled.kv_dtype = models::DType::kBf16;
        profiled = std::make_unique<models::RooflineModel>(
            as_profiled, device_figures(gpu, as_profiled), c.roofline, bundle.tensor_parallel_size,
            layout);
        target = target_roofline();
        rescale_note = "tables of tensor-parallel degree " +
                       std::to_string(bundle.tensor_parallel_size) + ", BF16";
        out.notes.push_back("the profile " + bundle.tables_dir +
                            " is rescaled to tensor-parallel degree " + std::to_string(tp) +
                            " and " + models::dtype_name(sc.model.dtype) +
                            " by the roofline's ratio per kernel component");
      }
      break;
    }
    case models::ComputeKind::kAuto:  // resolved to kFitted or kRoofline above
    case models::ComputeKind::kRoofline:
      inner = target_roofline();
      break;
  }

  const bool moe_dp = sc.model.is_moe() && dp > 1;
  std::unique_ptr<models::ComputeModel> kernels;
  if (tp == 1 && profiled == nullptr && !moe_dp) {
    kernels = std::move(inner);
  } else {
    models::CollectiveTime all_reduce;
    models::CollectiveTime all_gather;
    if (tp > 1) {
      const hw::CollectiveLink link = hw::collective_link(gpu, tp, server.host.dram_bandwidth);
      all_reduce = [link](double bytes) { return hw::vllm_all_reduce_s(bytes, link); };
      all_gather = [link](double bytes) { return hw::nccl_all_gather_s(bytes, link); };
    }
    models::ExpertCollectives experts;
    if (moe_dp) {
      const hw::CollectiveLink link = hw::collective_link(gpu, dp, server.host.dram_bandwidth);
      experts.data_parallel_size = dp;
      experts.all_gather = [link](double bytes) { return hw::nccl_all_gather_s(bytes, link); };
      experts.reduce_scatter = [link](double bytes) {
        return hw::nccl_reduce_scatter_s(bytes, link);
      };
    }
    kernels = std::make_unique<models::TensorParallelModel>(
        std::move(inner), sc.model, tp, std::move(all_reduce), std::move(all_gather),
        std::move(profiled), std::move(target), std::move(experts), rescale_note);
  }
  out.model = std::make_unique<models::ServedStepModel>(std::move(kernels), c.overheads, graph_policy(sc.engine));
  std::string what = models::compute_kind_name(out.kind);
  if (!out.source.empty()) what += " " + out.source;
  if (c.kind == models::ComputeKind::kAuto) what = "auto: " + what;
  out.description = what + " -- " + out.model->describe();
  return out;
}

}  // namespace kvsim::cluster
