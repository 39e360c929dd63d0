// kvsim check: run the scenarios of a plan file and check their SLOs (sim/planner/check.hpp);
// exit 1 when any term is missed, 2 on bad input. --junit writes JUnit XML for CI systems.
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "sim/cli/command.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/planner/check.hpp"

namespace kvsim::cli {
namespace {

struct CheckOptions {
  std::string plan;
  std::string junit;
  int jobs = 0;
  bool quiet = false;
  std::string format = "table";
};

int cmd_check_plan(const CheckOptions& o, const CommonOptions& common) {
  const auto base = load_options(common);
  const auto plan = planner::load_plan_file(o.plan, base);
  const int jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  std::function<void(const std::string&)> progress;
  if (!o.quiet) progress = [](const std::string& line) { std::cerr << "check: " << line << '\n'; };
  const auto result = planner::run_check(plan, base, jobs, progress);
  if (o.format == "json") {
    io::write_json(std::cout, planner::check_json(plan, result), 3);
  } else {
    std::cout << planner::format_check(result);
  }
  if (!o.junit.empty()) {
    io::AtomicFile file(o.junit);
    planner::write_junit(file.stream(), plan, result);
    file.commit();
  }
  return result.pass() ? 0 : kExitCheckFailed;
}

Command add_check_plan(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand(
      "check", "Run a plan file's scenarios and check their SLOs (exit 1 when any is missed)");
  cmd->add_option("plan", o->plan, "Plan YAML file (scenarios and SLOs)")
      ->required()
      ->type_name("PLAN.yaml");
  cmd->add_option("--junit", o->junit,
                  "Write JUnit XML here (one testcase per scenario x SLO term)")
      ->type_name("FILE");
  cmd->add_option("-j,--jobs", o->jobs, "Simulations run at once (default: the machine's cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("-q,--quiet", o->quiet, "No progress lines on stderr");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"table", "json"}));
  add_common(cmd, common);
  return {cmd, [o, &common] { return cmd_check_plan(*o, common); }};
}

const CommandRegistrar check_plan_registrar(46, add_check_plan);

}  // namespace
}  // namespace kvsim::cli
