// kvsim command line: thin commands over the scenario façade (kvsim::cluster::Simulation), one
// file per subcommand (cmd_*.cpp, registered through command.hpp).
// Exit codes: 0 success, 1 a check failed (SLO, tolerance), 2 bad input (scenario, trace, CLI,
// server), 3 internal error.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/version.hpp"
#include "sim/scenario/suggest.hpp"

int main(int argc, char** argv) {
  using namespace kvsim::cli;
  CLI::App app{"kvsim: simulate LLM serving with KV-cache offload (vLLM V1) and plan capacity"};
  app.set_version_flag("--version", std::string("kvsim ") + kvsim::kVersion);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 success, 1 a check failed, 2 bad input, 3 internal error.\nDocs: docs/README.md");

  CommonOptions common;
  auto registry = registered_commands();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const RegisteredCommand& a, const RegisteredCommand& b) { return a.order < b.order; });
  std::vector<Command> commands;
  commands.reserve(registry.size());
  for (const auto& r : registry) commands.push_back(r.add(app, common));

  // The first word that is not an option must name a command (CLI11 would only say that one
  // is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
    }
    const std::string word = argv[1];
    if (word == "help") {
      std::cout << app.help();
      return 0;
    }
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      const std::string near = kvsim::scenario::closest_name(word, names);
      std::cerr << "kvsim: error: unknown command '" << word << "'"
                << (near.empty() ? std::string() : "; did you mean '" + near + "'?")
                << "\ncommands: " << kvsim::scenario::join_names(names)
                << " (kvsim --help describes them)\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  // The environment, read here once: the libraries take it as arguments.
  apply_environment(common, [](const char* name) { return std::getenv(name); });

  try {
    for (const auto& c : commands) {
      if (c.app->parsed()) return c.run();
    }
  } catch (const kvsim::InputError& e) {
    std::cerr << e.what() << '\n';
    return kExitBadInput;
  } catch (const kvsim::InternalError& e) {
    std::cerr << "kvsim: internal error: " << e.what() << '\n';
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "kvsim: error: " << e.what() << '\n';
    return kExitInternal;
  }
  return 0;
}
