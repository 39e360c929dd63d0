// kvsim calibrate: fit the compact step-time model to a measured profile bundle.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "models/fitted_model.hpp"
#include "models/profile_bundle.hpp"
#include "models/roofline_anchor.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/json_writer.hpp"
#ifdef KVSIM_HAVE_VALIDATION  // set by sim/cli/CMakeLists.txt when validation/ is built
#include "validation/src/probe.hpp"
#endif

namespace kvsim::cli {
namespace {

struct CalibrateOptions {
  std::string profile;
  std::string measured;  // a kvsim probe file instead of a profile bundle
  int layers = 0;        // layers of the probed model (0: from --model)
  // KV bytes per token of the probed model for the offload-tier fit (0: from --model)
  std::int64_t kv_bytes_per_token = 0;
  std::string out;
  std::string model;     // catalog model (default: the bundle's, by its Hugging Face id)
  std::string gpu;       // catalog GPU (default: the bundle's, by its CUDA name)
  int tp = 0;            // tensor-parallel degree of a bundle's tables (0: every degree)
  std::vector<std::string> roofline;   // fitted profiles to anchor the roofline on
  std::vector<std::string> residuals;  // fitted profiles to check against their bundles
  std::string format = "table";        // table | json
};

// Where the text goes: stdout, or nowhere when the result is printed as JSON instead.
struct Output {
  explicit Output(const CalibrateOptions& o)
      : json(o.format == "json"), doc(io::json_document("calibrate")), text(json ? discard : std::cout) {}
  void finish() {
    if (json) io::write_json(std::cout, doc, 1);
  }
  bool json;
  io::Json doc;
  std::ostringstream discard;
  std::ostream& text;
};

io::Json residuals_json(const std::vector<models::ComponentResidual>& residuals) {
  io::Json rows = io::Json::array();
  for (const auto& r : residuals) {
    rows.push_back({{"component", r.component},
                    {"points", r.points},
                    {"median_abs_rel_error", io::json_number_or_null(r.median_abs_rel_error)},
                    {"max_abs_rel_error", io::json_number_or_null(r.max_abs_rel_error)}});
  }
  return rows;
}

// Fits the compact step-time model to a profile bundle, prints the residuals and writes the
// coefficients with their provenance.
#ifdef KVSIM_HAVE_VALIDATION
// The scenario keys through which a measured tier load path (latency + bytes / rate) enters a
// simulation, for each tier kind (docs/offload.md: a load's time is the route's latencies plus
// the bytes at its bottleneck rate), ready to paste.
std::string tier_scenario_lines(double bytes_per_s, double latency_us) {
  std::ostringstream rate;
  std::ostringstream lat;
  rate << std::setprecision(4) << bytes_per_s / 1e9 << "GB/s";
  lat << std::setprecision(4) << latency_us << "us";
  std::ostringstream s;
  s << "scenario keys for this tier, as kvsim run --set flags for the tier kind you measured (the rate must be\n"
    << "the route's bottleneck; kvsim adds the latency of every device on the route, so set the others to 0;\n"
    << "docs/calibration.md):\n"
    << "  host_dram:  --set hardware.servers.0.gpu.host_link.h2d=" << rate.str()
    << "   (no latency key for host DRAM; the fitted " << lat.str() << " is left out)\n"
    << "  local_nvme: --set hardware.servers.0.local_nvme.drive.read=" << rate.str()
    << " --set hardware.servers.0.local_nvme.drive.read_latency=" << lat.str() << "\n"
    << "  remote:     --set hardware.remote_store.nic=" << rate.str() << " --set hardware.remote_store.nic_latency="
    << lat.str() << " --set hardware.remote_store.software_latency=0us\n";
  return s.str();
}

// Fits the step-time model to `kvsim probe` measurements of a live deployment.
int cmd_calibrate_measured(const CalibrateOptions& o, const CommonOptions& common) {
  Output out(o);
  std::ostream& text = out.text;
  const std::string model_name = o.model.empty() ? std::string("llama-3.1-8b") : o.model;
  const int layers = o.layers > 0 ? o.layers : catalog_model(load_catalog(common), model_name).num_layers;
  const auto probe = validation::load_probe(o.measured);
  const auto fit = validation::fit_probe(probe);
  text << "Fitted " << o.measured << " (" << probe.url << ", model " << probe.model << ", " << layers
            << " layers)\n";
  text << std::fixed << std::setprecision(3) << "per step s = " << fit.s_us
       << " us, per token t = " << fit.t_us << " us, per prefill pair q = " << fit.q_us
       << " us, per cached token r = " << fit.r_us
       << " us, per decode context token d = " << fit.d_us << " us, per sequence u = " << fit.u_us
       << " us\n";
  text << std::left << std::setw(16) << "probe" << std::right << std::setw(8) << "tokens" << std::setw(7)
            << "batch" << std::setw(12) << "median" << std::setw(12) << "fitted" << std::setw(9) << "error" << '\n';
  for (const auto& r : fit.residuals) {
    text << std::left << std::setw(16) << r.kind << std::right << std::setw(8) << r.prompt_tokens << std::setw(7)
              << r.batch << std::setw(9) << std::setprecision(2) << r.measured_ms << " ms" << std::setw(9)
              << r.fitted_ms << " ms" << std::setw(8) << std::setprecision(1)
              << 100.0 * (r.fitted_ms - r.measured_ms) / r.measured_ms << "%\n";
  }
  text.unsetf(std::ios::floatfield);
  // The offload tier's load path, when the probe measured it (kvsim probe --offload): written into
  // the profile's optional offload_tier section, and as the scenario keys that carry it.
  auto coefficients = validation::probe_coefficients(fit, probe, layers, o.measured);
  bool tier_rate_resolved = true;
  if (validation::has_tier_points(probe)) {
    const double kv_bytes =
        o.kv_bytes_per_token > 0
            ? static_cast<double>(o.kv_bytes_per_token)
            : catalog_model(load_catalog(common), model_name).kv_bytes_per_token().as_double();
    const auto tier = validation::fit_tier(probe, kv_bytes);
    coefficients.offload_tier = models::MeasuredTier{tier.bytes_per_s, tier.latency_us};
    tier_rate_resolved = tier.rate_resolved;
    std::ostringstream t;
    t << std::setprecision(4) << "offload tier (" << probe.tier_eviction << ", " << model_name
      << ": " << kv_bytes << " KV bytes per token): latency " << tier.latency_us
      << " us, load rate " << tier.bytes_per_s / 1e9 << " GB/s"
      << (tier.rate_resolved ? ""
                             : " (the slowest rate the points allow: their extra TTFT did not grow "
                               "with the bytes)")
      << "; rms error " << tier.rms_error_ms << " ms\n";
    text << t.str();
    text << std::left << std::setw(8) << "tokens" << std::right << std::setw(14) << "bytes" << std::setw(16)
              << "measured extra" << std::setw(14) << "fitted extra" << '\n';
    for (const auto& p : tier.points) {
      text << std::left << std::setw(8) << p.prompt_tokens << std::right << std::setw(14)
                << static_cast<std::int64_t>(p.bytes) << std::fixed << std::setprecision(2) << std::setw(13)
                << p.measured_extra_ms << " ms" << std::setw(11) << p.fitted_extra_ms << " ms\n";
    }
    text.unsetf(std::ios::floatfield);
    text << tier_scenario_lines(tier.bytes_per_s, tier.latency_us);
  }
  // Whether loads wait for the engine to be nearly idle (probe --offload's tier_hit_busy points).
  std::optional<validation::LoadGate> gate;
  if (validation::has_busy_tier_points(probe)) {
    gate = validation::fit_load_gate(probe);
    text << "loads while others decode (tier_hit_busy):\n";
    text << std::left << std::setw(8) << "others" << std::right << std::setw(8) << "points"
         << std::setw(8) << "waited" << std::setw(14) << "median TTFT" << std::setw(22)
         << "first other done at\n";
    for (const auto& r : gate->rows) {
      text << std::left << std::setw(8) << r.others << std::right << std::setw(8) << r.points
           << std::setw(8) << r.waited << std::fixed << std::setprecision(1) << std::setw(11)
           << r.median_ttft_ms << " ms" << std::setw(18) << r.median_others_done_ms << " ms\n";
    }
    text.unsetf(std::ios::floatfield);
    if (gate->prepare_max_running >= 0) {
      text << "a load waited while " << gate->prepare_max_running + 1
           << " or more others ran: scenario key engine.prepare_max_running: "
           << gate->prepare_max_running << "\n";
    } else {
      text << "no load waited for the others: engine.prepare_max_running: -1 (the default)\n";
    }
  }
  out.doc["mode"] = "measured";
  out.doc["probe"] = o.measured;
  out.doc["url"] = probe.url;
  out.doc["model"] = probe.model;
  out.doc["layers"] = layers;
  out.doc["step_model_us"] = {{"per_step", fit.s_us},
                              {"per_token", fit.t_us},
                              {"per_prefill_pair", fit.q_us},
                              {"per_cached_token", fit.r_us},
                              {"per_decode_context_token", fit.d_us},
                              {"per_sequence", fit.u_us}};
  io::Json rows = io::Json::array();
  for (const auto& r : fit.residuals) {
    rows.push_back({{"kind", r.kind}, {"prompt_tokens", r.prompt_tokens}, {"batch", r.batch},
                    {"measured_ms", io::json_number_or_null(r.measured_ms)},
                    {"fitted_ms", io::json_number_or_null(r.fitted_ms)}});
  }
  out.doc["residuals"] = std::move(rows);
  if (coefficients.offload_tier) {
    out.doc["offload_tier"] = {
        {"latency_us", io::json_number_or_null(coefficients.offload_tier->latency_us)},
        {"bytes_per_s", io::json_number_or_null(coefficients.offload_tier->load_bytes_per_s)},
        {"rate_resolved", tier_rate_resolved}};
  }
  if (gate) {
    io::Json rows_gate = io::Json::array();
    for (const auto& r : gate->rows) {
      rows_gate.push_back(
          {{"others", r.others},
           {"points", r.points},
           {"waited", r.waited},
           {"median_ttft_ms", io::json_number_or_null(r.median_ttft_ms)},
           {"median_others_done_ms", io::json_number_or_null(r.median_others_done_ms)}});
    }
    out.doc["load_gate"] = {{"prepare_max_running", gate->prepare_max_running},
                            {"rows", std::move(rows_gate)}};
  }
  if (!o.out.empty()) {
    out.doc["wrote"] = o.out;
    io::AtomicFile f(o.out);
    f.stream() << models::write_fitted_yaml(coefficients);
    f.commit();
    text << "wrote " << o.out
              << " (use it with compute: {kind: fitted, profile: {fitted_path: ...}, overheads: {enabled: false}})\n";
  }
  out.finish();
  return 0;
}
#endif

// The catalog entry a bundle was measured on: --model / --gpu when given, else the entry whose
// Hugging Face id (without an -Instruct suffix) or CUDA name is the bundle's.
std::string strip_instruct(std::string id) {
  for (const char* suffix : {"-Instruct", "-instruct"}) {
    const std::string s = suffix;
    if (id.size() > s.size() && id.compare(id.size() - s.size(), s.size(), s) == 0) id.resize(id.size() - s.size());
  }
  return id;
}

std::string bundle_model_name(const scenario::Catalog& cat, const models::ProfileBundle& b, const std::string& given) {
  if (!given.empty()) return given;
  for (const auto& [name, m] : cat.models) {
    if (!m.hf_id.empty() && (m.hf_id == b.meta.model || strip_instruct(m.hf_id) == strip_instruct(b.meta.model))) {
      return name;
    }
  }
  throw InputError(b.dir + "/meta.yaml", 0, 0,
                   "no catalog model has the Hugging Face id '" + b.meta.model + "'; name it with --model");
}

std::string bundle_gpu_name(const scenario::Catalog& cat, const models::ProfileBundle& b, const std::string& given) {
  if (!given.empty()) {
    if (!cat.gpus.count(given)) throw InputError("", 0, 0, "--gpu: no catalog GPU named '" + given + "'");
    return given;
  }
  for (const auto& [name, g] : cat.gpus) {
    if (!g.cuda_name.empty() && g.cuda_name == b.meta.gpu) return name;
  }
  return {};  // the fit records no GPU figures: it can be used on its own GPU only
}

void print_residuals(std::ostream& text, const models::FitReport& report) {
  text << std::left << std::setw(18) << "component" << std::right << std::setw(8) << "points" << std::setw(16)
            << "median |error|" << std::setw(14) << "max |error|" << '\n';
  for (const auto& r : report.residuals) {
    text << std::left << std::setw(18) << r.component << std::right << std::setw(8) << r.points
              << std::setw(15) << std::fixed << std::setprecision(2) << 100.0 * r.median_abs_rel_error << "%"
              << std::setw(13) << 100.0 * r.max_abs_rel_error << "%\n";
  }
  text.unsetf(std::ios::floatfield);
}

// The roofline's efficiencies anchored on each fitted profile (its GPU from the catalog by
// gpu_preset, its model from its recorded shape), their mean, and how well each GPU's anchors
// predict every other GPU's profile (models/roofline_anchor.hpp).
int cmd_calibrate_roofline(const CalibrateOptions& o, const CommonOptions& common) {
  Output out(o);
  std::ostream& text = out.text;
  out.doc["mode"] = "roofline";
  const auto catalog = load_catalog(common);
  struct Anchored {
    std::string file;
    models::FittedCoefficients profile;
    models::ModelSpec model;
    models::DeviceFigures gpu;
    std::string gpu_name;
    models::Efficiencies e;
  };
  std::vector<Anchored> all;
  for (const auto& file : o.roofline) {
    Anchored a;
    a.file = file;
    a.profile = models::load_fitted_yaml(file);
    if (a.profile.gpu_preset.empty() || !catalog.gpus.count(a.profile.gpu_preset)) {
      throw InputError(file, 0, 0, "the profile names no catalog GPU (gpu_preset); fit it again with kvsim calibrate");
    }
    if (a.profile.tensor_parallel_size != 1 || !a.profile.moe_layer_us.empty()) {
      throw InputError(file, 0, 0, "the roofline is anchored on dense models' tensor-parallel degree 1 tables");
    }
    a.gpu_name = a.profile.gpu_preset;
    a.model = models::model_of_shape(a.profile);
    a.model.name = a.profile.model;
    const auto& g = catalog.gpus.at(a.gpu_name);
    a.gpu.memory = g.memory;
    a.gpu.memory_bandwidth = g.memory_bandwidth;
    a.gpu.tensor_flops = g.bf16_dense;
    a.gpu.bf16_flops = g.bf16_dense;
    a.e = models::anchor_efficiencies(a.profile, a.model, a.gpu);
    all.push_back(std::move(a));
  }
  text << std::fixed << std::setprecision(3);
  text << "anchored roofline efficiencies (models/roofline_anchor.hpp)\n"
            << std::left << std::setw(24) << "gpu" << std::setw(36) << "model" << std::right << std::setw(8)
            << "memory" << std::setw(8) << "gemm" << std::setw(11) << "attention" << '\n';
  models::Efficiencies mean;
  io::Json anchors = io::Json::array();
  for (const auto& a : all) {
    anchors.push_back({{"profile", a.file}, {"gpu", a.gpu_name}, {"model", a.profile.model},
                       {"memory", a.e.memory}, {"gemm", a.e.gemm}, {"attention", a.e.attention}});
    text << std::left << std::setw(24) << a.gpu_name << std::setw(36) << a.profile.model << std::right
              << std::setw(8) << a.e.memory << std::setw(8) << a.e.gemm << std::setw(11) << a.e.attention << '\n';
    mean.memory += a.e.memory / static_cast<double>(all.size());
    mean.gemm += a.e.gemm / static_cast<double>(all.size());
    mean.attention += a.e.attention / static_cast<double>(all.size());
  }
  text << std::left << std::setw(60) << "mean (the roofline's defaults)" << std::right << std::setw(8)
            << mean.memory << std::setw(8) << mean.gemm << std::setw(11) << mean.attention << '\n';
  out.doc["anchors"] = std::move(anchors);
  out.doc["mean"] = {{"memory", mean.memory}, {"gemm", mean.gemm}, {"attention", mean.attention}};
  io::Json cross = io::Json::array();
  if (all.size() >= 2) {
    text << "\nleave-one-GPU-out: one GPU's efficiencies, the other GPU's figures, against the other GPU's "
                 "profile\n(median |error| and median signed error over the comparison batches)\n"
              << std::left << std::setw(24) << "efficiencies of" << std::setw(24) << "predicting" << std::right
              << std::setw(16) << "dense" << std::setw(16) << "attention" << std::setw(16) << "lm_head"
              << std::setw(16) << "all kernels" << '\n';
    text << std::setprecision(1);
    for (const auto& from : all) {
      for (const auto& to : all) {
        if (&from == &to) continue;
        const auto errors = models::roofline_against_profile(from.e, to.profile, to.model, to.gpu);
        text << std::left << std::setw(24) << from.gpu_name << std::setw(24) << to.gpu_name << std::right;
        io::Json components = io::Json::object();
        for (const auto& e : errors) {
          components[e.component] = {{"median_abs_rel_error", io::json_number_or_null(e.median_abs_rel_error)},
                                     {"median_signed_rel_error", io::json_number_or_null(e.median_signed_rel_error)}};
          std::ostringstream cell;
          cell << std::fixed << std::setprecision(1) << 100.0 * e.median_abs_rel_error << "% (" << std::showpos
               << 100.0 * e.median_signed_rel_error << "%)";
          text << std::setw(16) << cell.str();
        }
        text << '\n';
        cross.push_back({{"efficiencies_of", from.gpu_name}, {"predicting", to.gpu_name},
                         {"errors", std::move(components)}});
      }
    }
  }
  text.unsetf(std::ios::floatfield);
  out.doc["leave_one_gpu_out"] = std::move(cross);
  out.finish();
  return 0;
}

// Each fitted profile against the bundle tables it names (source_dir, relative to the current
// folder or to the profile's folder), without fitting again.
int cmd_calibrate_residuals(const CalibrateOptions& o) {
  namespace fs = std::filesystem;
  Output out(o);
  std::ostream& text = out.text;
  out.doc["mode"] = "residuals";
  io::Json profiles = io::Json::array();
  for (const auto& file : o.residuals) {
    const auto c = models::load_fitted_yaml(file);
    std::string dir = c.source_dir;
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      // A source_dir written relative to the repository root: try beside the profile.
      const fs::path beside = fs::path(file).parent_path() / fs::path(dir).filename();
      if (fs::exists(beside, ec)) dir = beside.string();
    }
    const auto bundle = models::load_profile_bundle(dir, c.tensor_parallel_size);
    text << "Residuals of " << file << " against " << bundle.tables_dir << " (" << c.gpu << ", " << c.model
              << ", tensor-parallel degree " << c.tensor_parallel_size << ")\n";
    models::FitReport r;
    r.residuals = models::evaluate_fit(c, bundle);
    print_residuals(text, r);
    profiles.push_back({{"profile", file}, {"tables", bundle.tables_dir}, {"gpu", c.gpu}, {"model", c.model},
                        {"tensor_parallel_size", c.tensor_parallel_size}, {"residuals", residuals_json(r.residuals)}});
  }
  out.doc["profiles"] = std::move(profiles);
  out.finish();
  return 0;
}

int cmd_calibrate(const CalibrateOptions& o, const CommonOptions& common) {
  if (!o.roofline.empty()) return cmd_calibrate_roofline(o, common);
  if (!o.residuals.empty()) return cmd_calibrate_residuals(o);
  if (o.profile.empty() == o.measured.empty()) {
    throw InputError("", 0, 0, "calibrate: give exactly one of --profile DIR and --measured PROBE.json");
  }
#ifdef KVSIM_HAVE_VALIDATION
  if (!o.measured.empty()) return cmd_calibrate_measured(o, common);
#endif
  const auto catalog = load_catalog(common);
  Output out(o);
  std::ostream& text = out.text;
  out.doc["mode"] = "profile";
  io::Json fits = io::Json::array();
  std::vector<int> degrees;
  if (o.tp > 0) {
    degrees.push_back(o.tp);
  } else {
    const auto found = models::profile_bundle_degrees(o.profile);
    degrees = found.empty() ? std::vector<int>{0} : found;
  }
  // With several degrees --out names a folder: one file per degree.
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool out_folder = !o.out.empty() && (fs::is_directory(o.out, ec) || o.out.back() == '/' || degrees.size() > 1);
  if (out_folder) fs::create_directories(o.out, ec);
  for (const int tp : degrees) {
    const auto bundle = models::load_profile_bundle(o.profile, tp);
    const std::string model_name = bundle_model_name(catalog, bundle, o.model);
    const auto model = catalog_model(catalog, model_name);
    auto report = models::fit_profile(bundle, model);
    const std::string gpu_name = bundle_gpu_name(catalog, bundle, o.gpu);
    if (!gpu_name.empty()) {
      const auto& g = catalog.gpus.at(gpu_name);
      report.coefficients.gpu_preset = gpu_name;
      report.coefficients.gpu_figures = {g.memory_bandwidth.value, g.bf16_dense.value, g.fp8_dense.value};
    }
    text << "Fitted " << bundle.tables_dir << " (" << bundle.meta.gpu << (gpu_name.empty() ? "" : " = " + gpu_name)
              << ", " << bundle.meta.model << " = " << model_name << ", tensor-parallel degree "
              << bundle.tensor_parallel_size << ", vLLM " << bundle.meta.vllm_version << ", profiled "
              << bundle.meta.profiled_at << ")\n";
    print_residuals(text, report);
    io::Json fit = {{"tables", bundle.tables_dir},      {"gpu", bundle.meta.gpu},
                    {"gpu_preset", gpu_name},            {"model", bundle.meta.model},
                    {"model_preset", model_name},        {"tensor_parallel_size", bundle.tensor_parallel_size},
                    {"vllm_version", bundle.meta.vllm_version}, {"profiled_at", bundle.meta.profiled_at},
                    {"residuals", residuals_json(report.residuals)}};
    if (o.out.empty()) {
      fits.push_back(std::move(fit));
      continue;
    }
    std::string path = o.out;
    if (out_folder) {
      std::string stem = fs::path(bundle.dir).filename().string();
      if (bundle.tables_dir != bundle.dir) stem += "-tp" + std::to_string(bundle.tensor_parallel_size);
      path = (fs::path(o.out) / (stem + ".yaml")).string();
    }
    io::AtomicFile f(path);
    f.stream() << models::write_fitted_yaml(report.coefficients);
    f.commit();
    text << "wrote " << path << '\n';
    fit["wrote"] = path;
    fits.push_back(std::move(fit));
  }
  out.doc["fits"] = std::move(fits);
  out.finish();
  return 0;
}

Command add_calibrate(CLI::App& app, CommonOptions& common) {
  auto cal = std::make_shared<CalibrateOptions>();
  auto* calibrate = app.add_subcommand(
      "calibrate", "Fit the step-time model to a measured profile bundle and write its coefficients");
  calibrate->add_option("--profile", cal->profile, "Profile bundle folder (dense.csv, attention.csv, ...)")
      ->type_name("DIR");
#ifdef KVSIM_HAVE_VALIDATION
  calibrate->add_option("--measured", cal->measured, "A kvsim probe file: fit the step-time model to it instead")
      ->type_name("FILE");
  calibrate->add_option("--layers", cal->layers, "Layers of the probed model (default: those of --model)");
  calibrate->add_option("--kv-bytes-per-token", cal->kv_bytes_per_token,
                        "KV bytes per token of the probed model, for the offload-tier fit of --measured "
                        "(default: that of --model)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
#endif
  calibrate->add_option("--out", cal->out,
                        "Write the fitted coefficients (YAML) to FILE; for a bundle with several "
                        "tensor-parallel degrees (tp1/, tp2/, ...) a folder, one <bundle>-tpN.yaml each")
      ->type_name("PATH");
  calibrate->add_option("--roofline", cal->roofline,
                        "Fitted profiles (models/profiles/*.yaml, dense models, TP 1) to anchor the roofline's "
                        "efficiencies on; prints each GPU's, their mean and the leave-one-GPU-out errors")
      ->type_name("FILE...");
  calibrate->add_option("--residuals", cal->residuals,
                        "Fitted profiles to check against the bundle tables they were fitted to (no refit): "
                        "each component's median and largest error")
      ->type_name("FILE...");
  calibrate->add_option("--tp", cal->tp, "Fit only the tables of this tensor-parallel degree")->check(CLI::Range(1, 64));
  calibrate->add_option("--model", cal->model,
                        "Catalog model the profile was measured on (default: the bundle's, by its Hugging Face id; "
                        "with --measured: llama-3.1-8b)")
      ->type_name("NAME");
  calibrate->add_option("--gpu", cal->gpu,
                        "Catalog GPU the profile was measured on (default: the bundle's, by its CUDA name); its figures "
                        "travel with the fit so that it can be rescaled to another GPU")
      ->type_name("NAME");
  calibrate->add_option("--format", cal->format, "Output format (json: one document, docs/results.md)")
      ->check(CLI::IsMember({"table", "json"}));
  add_catalog_option(calibrate, common);
  return {calibrate, [cal, &common] { return cmd_calibrate(*cal, common); }};
}

const CommandRegistrar calibrate_registrar(40, add_calibrate);

}  // namespace
}  // namespace kvsim::cli
