#pragma once
// The kvsim command line is a set of subcommands, one per file (cmd_*.cpp). Each file registers
// itself with a static CommandRegistrar: its `add` function creates the subcommand on the
// application, binds its options, and returns the action main() runs after parsing.
// Exit codes: 0 success, 2 bad input (scenario, trace, CLI, server), 3 internal error; an action
// may also return 1 for "ran, but a check failed" (an SLO missed, a tolerance exceeded).
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "sim/scenario/catalog.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::cli {

constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

// Options several commands share: --set overrides and --catalog, and what main() reads from
// the environment once: KVSIM_CATALOG_DIR (into catalog_dir when --catalog is not given) and
// KVSIM_PLAIN_STEPS=1 (fast_paths off).
struct CommonOptions {
  std::vector<std::string> sets;
  std::string catalog_dir;
  bool fast_paths = true;
};

// Applies the environment to `o` after parsing: KVSIM_CATALOG_DIR, when set and --catalog is
// not, becomes catalog_dir; KVSIM_PLAIN_STEPS=1 turns fast_paths off. main() passes
// std::getenv.
void apply_environment(CommonOptions& o, const std::function<const char*(const char*)>& getenv);

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// `order` sorts the subcommands in --help.
using AddCommand = Command (*)(CLI::App& app, CommonOptions& common);

struct CommandRegistrar {
  CommandRegistrar(int order, AddCommand add);
};

struct RegisteredCommand {
  int order;
  AddCommand add;
};
std::vector<RegisteredCommand>& registered_commands();

// --set / --catalog on a subcommand (both) or --catalog only.
void add_common(CLI::App* cmd, CommonOptions& o);
void add_catalog_option(CLI::App* cmd, CommonOptions& o);
scenario::LoadOptions load_options(const CommonOptions& o);
// The catalog named by --catalog, or the one found next to the working folder or built in.
scenario::Catalog load_catalog(const CommonOptions& o);
models::ModelSpec catalog_model(const scenario::Catalog& cat, const std::string& name);

}  // namespace kvsim::cli
