// kvsim replay: drive a scenario's workload against a live OpenAI-compatible server and record
// what it measures (validation/src/replay.hpp).
#include <algorithm>
#include <atomic>
#include <csignal>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/sinks.hpp"
#include "validation/src/replay.hpp"
#include "validation/src/replay_db.hpp"
#include "validation/src/report.hpp"

namespace kvsim::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int /*signal*/) { g_stop.store(true); }

struct ReplayCliOptions {
  std::string scenario;
  std::string url;
  std::string model;
  std::string out = "replay.json";
  std::string requests_out;
  bool tokenize = false;
  bool no_tokenize = false;
  validation::HttpTimeouts timeouts;
  validation::RetryPolicy retry;
  double max_duration_s = 0;
  std::string db;
};

int cmd_replay(const ReplayCliOptions& o, const CommonOptions& common) {
  if (o.tokenize && o.no_tokenize)
    throw InputError("", 0, 0, "--tokenize and --no-tokenize exclude each other");
  const auto sc = scenario::load_scenario(o.scenario, load_options(common));
  validation::ReplayOptions ro;
  ro.url = o.url;
  ro.model = o.model;
  ro.tokenize = o.tokenize      ? validation::TokenizeMode::kServer
                : o.no_tokenize ? validation::TokenizeMode::kEstimate
                                : validation::TokenizeMode::kAuto;
  ro.timeouts = o.timeouts;
  ro.retry = o.retry;
  ro.max_duration_s = o.max_duration_s;
  ro.journal_path = o.out + ".partial.jsonl";
  ro.stop = &g_stop;
  ro.progress = [](const std::string& line) { std::cerr << "replay: " << line << std::endl; };

  // --db: the run is claimed now and each request committed as it ends, so a replay that is
  // killed keeps what it measured in the database too.
  std::unique_ptr<validation::MeasuredRunWriter> db;
  std::string db_error;
  std::string run_key;
  if (!o.db.empty()) {
    run_key = validation::new_measured_run_key(sc, o.url, o.model);
    db = std::make_unique<validation::MeasuredRunWriter>(o.db, sc, run_key);
    ro.on_record = [&db, &db_error](const validation::ReplayRecord& r) {
      if (!db_error.empty()) return;
      try {
        db->add(r);
      } catch (const std::exception& e) {
        db_error = e.what();
      }
    };
  }

  g_stop.store(false);
  const auto previous = std::signal(SIGINT, on_sigint);
  validation::ReplayRun run;
  try {
    run = validation::run_replay(sc, ro);
  } catch (...) {
    std::signal(SIGINT, previous);
    throw;
  }
  std::signal(SIGINT, previous);

  run.run_key = run_key;
  if (db && db_error.empty()) {
    try {
      db->finish(run);
    } catch (const std::exception& e) {
      db_error = e.what();
    }
  }
  {
    io::AtomicFile f(o.out);
    f.stream() << validation::replay_json(run);
    f.commit();
  }
  std::error_code ec;
  std::filesystem::remove(ro.journal_path, ec);
  if (!o.requests_out.empty()) {
    io::AtomicFile f(o.requests_out);
    io::write_requests_json(f.stream(), validation::measured_records(run));
    f.commit();
  }
  std::cout << validation::replay_summary_text(run);
  std::cout << "wrote " << o.out << (o.requests_out.empty() ? "" : " and " + o.requests_out)
            << '\n';
  if (db) {
    if (db_error.empty()) {
      std::cout << "recorded run " << run_key << " (" << db->written() << " requests) in " << o.db
                << '\n';
    } else {
      std::cerr << "kvsim: error: " << o.db << ": " << db_error
                << " (the measured run is complete in " << o.out << ")\n";
      return kExitBadInput;
    }
  }
  // A server that answered no request is unusable (exit 2); what it returned is kept in --out.
  const bool any_ok = std::any_of(run.records.begin(), run.records.end(),
                                  [](const validation::ReplayRecord& r) { return r.error.empty(); });
  if (!run.records.empty() && !any_ok) {
    std::cerr << "kvsim: error: --url " << o.url << ": the server answered none of the "
              << run.records.size() << " requests (first error: " << run.records.front().error
              << "); every error is in " << o.out << '\n';
    return kExitBadInput;
  }
  return run.interrupted ? kExitCheckFailed : 0;
}

Command add_replay(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<ReplayCliOptions>();
  auto* cmd = app.add_subcommand("replay",
                                 "Replay a scenario's workload against a live OpenAI-compatible "
                                 "server and record what it measures");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file (its workload and seed)")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--url", o->url, "Server base URL, e.g. http://127.0.0.1:8000")
      ->required()
      ->type_name("URL");
  cmd->add_option("--model", o->model, "Model name the server serves (the request's \"model\")")
      ->required()
      ->type_name("NAME");
  cmd->add_option("--out", o->out,
                  "Write the measured run (JSON) to FILE; records are journaled to "
                  "FILE.partial.jsonl while it runs")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->add_option("--requests-out", o->requests_out,
                  "Also write the successful requests in the format of kvsim run --requests-out")
      ->type_name("FILE");
  cmd->add_flag("--tokenize", o->tokenize,
                "Size texts with the server's /tokenize (fail if it has none)");
  cmd->add_flag(
      "--no-tokenize", o->no_tokenize,
      "Size texts with kvsim's Llama-3 token estimate (default: /tokenize when the server has it)");
  cmd->add_option("--connect-timeout", o->timeouts.connect_s, "Seconds to connect")
      ->capture_default_str();
  cmd->add_option("--first-token-timeout", o->timeouts.first_token_s,
                  "Seconds from send to the first token")
      ->capture_default_str();
  cmd->add_option("--idle-timeout", o->timeouts.idle_s,
                  "Longest silence between streamed events, seconds")
      ->capture_default_str();
  cmd->add_option("--request-timeout", o->timeouts.total_s, "Longest request, seconds")
      ->capture_default_str();
  cmd->add_option("--max-retries", o->retry.max_retries,
                  "Retries of a request that failed to connect or got HTTP 5xx before any token")
      ->capture_default_str();
  cmd->add_option("--retry-backoff", o->retry.backoff_s,
                  "First retry delay in seconds, doubled each retry")
      ->capture_default_str();
  cmd->add_option("--db", o->db,
                  "Also record the measured run in a results database (docs/sweeps.md), each "
                  "request committed as it ends")
      ->type_name("FILE");
  cmd->add_option("--max-duration", o->max_duration_s,
                  "Stop the replay after this many seconds (0: no limit)")
      ->capture_default_str();
  add_common(cmd, common);
  return {cmd, [o, &common] { return cmd_replay(*o, common); }};
}

const CommandRegistrar replay_registrar(60, add_replay);

}  // namespace
}  // namespace kvsim::cli
