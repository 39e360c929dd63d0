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

namespace kvsim::cli {
namespace {

struct CalibrateOptions {
  std::string profile;
  std::string out;
  std::string model = "llama-3.1-8b";
};

// Fits the compact step-time model to a profile bundle, prints the residuals and writes the
// coefficients with their provenance.
int cmd_calibrate(const CalibrateOptions& o, const CommonOptions& common) {
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
      ->required()
      ->type_name("DIR");
  calibrate->add_option("--out", cal->out, "Write the fitted coefficients (YAML) to FILE")->type_name("FILE");
  calibrate->add_option("--model", cal->model, "Catalog model the profile was measured on")->type_name("NAME");
  add_catalog_option(calibrate, common);
  return {calibrate, [cal, &common] { return cmd_calibrate(*cal, common); }};
}

const CommandRegistrar calibrate_registrar(40, add_calibrate);

}  // namespace
}  // namespace kvsim::cli
