// kvsim calibrate: fit the compact step-time model to a measured profile bundle.
#include <memory>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command.hpp"
#include "kvsim/core/error.hpp"
#include "kvsim/io/atomic_file.hpp"
#include "kvsim/models/fitted_model.hpp"
#include "kvsim/models/profile_bundle.hpp"
#if __has_include("kvsim/validation/probe.hpp")
#include "kvsim/validation/probe.hpp"
#define KVSIM_HAVE_VALIDATION 1
#endif

namespace kvsim::cli {
namespace {

struct CalibrateOptions {
  std::string profile;
  std::string measured;  // a kvsim probe file instead of a profile bundle
  int layers = 0;        // layers of the probed model (0: from --model)
  std::string out;
  std::string model = "llama-3.1-8b";
};

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
  const int layers = o.layers > 0 ? o.layers : catalog_model(load_catalog(common), o.model).num_layers;
  const auto probe = validation::load_probe(o.measured);
  const auto fit = validation::fit_probe(probe);
  std::cout << "Fitted " << o.measured << " (" << probe.url << ", model " << probe.model << ", " << layers
            << " layers)\n";
  std::cout << std::fixed << std::setprecision(3) << "per step s = " << fit.s_us << " us, per token t = " << fit.t_us
            << " us, per prefill pair q = " << fit.q_us << " us, per cached token r = " << fit.r_us
            << " us, per decode context token d = " << fit.d_us << " us\n";
  std::cout << std::left << std::setw(16) << "probe" << std::right << std::setw(8) << "tokens" << std::setw(7)
            << "batch" << std::setw(12) << "median" << std::setw(12) << "fitted" << std::setw(9) << "error" << '\n';
  for (const auto& r : fit.residuals) {
    std::cout << std::left << std::setw(16) << r.kind << std::right << std::setw(8) << r.prompt_tokens << std::setw(7)
              << r.batch << std::setw(9) << std::setprecision(2) << r.measured_ms << " ms" << std::setw(9)
              << r.fitted_ms << " ms" << std::setw(8) << std::setprecision(1)
              << 100.0 * (r.fitted_ms - r.measured_ms) / r.measured_ms << "%\n";
  }
  std::cout.unsetf(std::ios::floatfield);
  // The offload tier's load path, when the probe measured it (kvsim probe --offload): written into
  // the profile's optional offload_tier section, and as the scenario keys that carry it.
  auto coefficients = validation::probe_coefficients(fit, probe, layers, o.measured);
  if (validation::has_tier_points(probe)) {
    const double kv_bytes =
        catalog_model(load_catalog(common), o.model).kv_bytes_per_token().as_double();
    const auto tier = validation::fit_tier(probe, kv_bytes);
    coefficients.offload_tier = models::MeasuredTier{tier.bytes_per_s, tier.latency_us};
    std::ostringstream t;
    t << std::setprecision(4) << "offload tier (" << probe.tier_eviction << ", " << o.model << ": " << kv_bytes
      << " KV bytes per token): latency " << tier.latency_us << " us, load rate " << tier.bytes_per_s / 1e9
      << " GB/s; rms error " << tier.rms_error_ms << " ms\n";
    std::cout << t.str();
    std::cout << std::left << std::setw(8) << "tokens" << std::right << std::setw(14) << "bytes" << std::setw(16)
              << "measured extra" << std::setw(14) << "fitted extra" << '\n';
    for (const auto& p : tier.points) {
      std::cout << std::left << std::setw(8) << p.prompt_tokens << std::right << std::setw(14)
                << static_cast<std::int64_t>(p.bytes) << std::fixed << std::setprecision(2) << std::setw(13)
                << p.measured_extra_ms << " ms" << std::setw(11) << p.fitted_extra_ms << " ms\n";
    }
    std::cout.unsetf(std::ios::floatfield);
    std::cout << tier_scenario_lines(tier.bytes_per_s, tier.latency_us);
  }
  if (!o.out.empty()) {
    io::AtomicFile f(o.out);
    f.stream() << models::write_fitted_yaml(coefficients);
    f.commit();
    std::cout << "wrote " << o.out
              << " (use it with compute: {kind: fitted, profile: {fitted_path: ..., cuda_graph_decode_factor: 0, "
                 "gpu_step_overhead_us: 0, step_overhead_us: 0}})\n";
  }
  return 0;
}
#endif

int cmd_calibrate(const CalibrateOptions& o, const CommonOptions& common) {
  if (o.profile.empty() == o.measured.empty()) {
    throw InputError("", 0, 0, "calibrate: give exactly one of --profile DIR and --measured PROBE.json");
  }
#ifdef KVSIM_HAVE_VALIDATION
  if (!o.measured.empty()) return cmd_calibrate_measured(o, common);
#endif
  const auto model = catalog_model(load_catalog(common), o.model);
  const auto bundle = models::load_profile_bundle(o.profile);
  const auto report = models::fit_profile(bundle, model);
  std::cout << "Fitted " << o.profile << " (" << bundle.meta.gpu << ", " << bundle.meta.model << ", vLLM "
            << bundle.meta.vllm_version << ", profiled " << bundle.meta.profiled_at << ")\n";
  std::cout << std::left << std::setw(18) << "component" << std::right << std::setw(8) << "points" << std::setw(16)
            << "median |error|" << std::setw(14) << "max |error|" << '\n';
  for (const auto& r : report.residuals) {
    std::cout << std::left << std::setw(18) << r.component << std::right << std::setw(8) << r.points
              << std::setw(15) << std::fixed << std::setprecision(2) << 100.0 * r.median_abs_rel_error << "%"
              << std::setw(13) << 100.0 * r.max_abs_rel_error << "%\n";
  }
  std::cout.unsetf(std::ios::floatfield);
  if (!o.out.empty()) {
    io::AtomicFile f(o.out);
    f.stream() << models::write_fitted_yaml(report.coefficients);
    f.commit();
    std::cout << "wrote " << o.out << '\n';
  }
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
#endif
  calibrate->add_option("--out", cal->out, "Write the fitted coefficients (YAML) to FILE")->type_name("FILE");
  calibrate->add_option("--model", cal->model, "Catalog model the profile was measured on")->type_name("NAME");
  add_catalog_option(calibrate, common);
  return {calibrate, [cal, &common] { return cmd_calibrate(*cal, common); }};
}

const CommandRegistrar calibrate_registrar(40, add_calibrate);

}  // namespace
}  // namespace kvsim::cli
