#include "sim/cli/command.hpp"

#include <string>

#include "sim/core/error.hpp"

namespace kvsim::cli {

std::vector<RegisteredCommand>& registered_commands() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

CommandRegistrar::CommandRegistrar(int order, AddCommand add) { registered_commands().push_back({order, add}); }

void add_catalog_option(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--catalog", o.catalog_dir,
                  "Folder of the GPU and model catalog (default: found next to the scenario, then the "
                  "built-in one)")
      ->type_name("DIR");
}

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--set", o.sets,
                  "Override a scenario value before decoding, e.g. --set engine.max_num_seqs=128 "
                  "(repeatable)")
      ->type_name("PATH=VALUE");
  add_catalog_option(cmd, o);
}

scenario::LoadOptions load_options(const CommonOptions& o) {
  scenario::LoadOptions lo;
  for (const auto& s : o.sets) lo.overrides.push_back(scenario::parse_override(s));
  lo.catalog_dir = o.catalog_dir;
  lo.fast_paths = o.fast_paths;
  return lo;
}

void apply_environment(CommonOptions& o, const std::function<const char*(const char*)>& getenv) {
  const char* catalog = getenv("KVSIM_CATALOG_DIR");
  if (o.catalog_dir.empty() && catalog != nullptr) o.catalog_dir = catalog;
  const char* plain = getenv("KVSIM_PLAIN_STEPS");
  o.fast_paths = plain == nullptr || std::string(plain) != "1";
}

scenario::Catalog load_catalog(const CommonOptions& o) {
  return scenario::load_catalog_for(o.catalog_dir, "");
}

models::ModelSpec catalog_model(const scenario::Catalog& cat, const std::string& name) {
  auto it = cat.models.find(name);
  if (it == cat.models.end()) throw InputError("", 0, 0, "--model: no model '" + name + "' in the catalog");
  return it->second;
}

}  // namespace kvsim::cli
