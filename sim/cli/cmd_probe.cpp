// kvsim probe: measure a live OpenAI-compatible deployment with controlled requests
// (validation/src/probe.hpp); kvsim calibrate --measured fits a compute model to the result.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/io/atomic_file.hpp"
#include "validation/src/probe.hpp"

namespace kvsim::cli {
namespace {

int cmd_probe(const validation::ProbeOptions& o, const std::string& out) {
  validation::ProbeOptions opts = o;
  opts.progress = [](const std::string& line) { std::cerr << "probe: " << line << std::endl; };
  const auto result = validation::run_probe(opts);
  io::AtomicFile f(out);
  f.stream() << validation::probe_json(result);
  f.commit();
  std::cout << "probe of " << o.url << ": " << result.points.size() << " points, "
            << result.errors.size() << " errors\n";
  for (const auto& e : result.errors) std::cout << "  error: " << e << '\n';
  std::cout << "wrote " << out << '\n';
  return result.points.empty() ? kExitBadInput : 0;
}

Command add_probe(CLI::App& app, CommonOptions& /*common*/) {
  auto o = std::make_shared<validation::ProbeOptions>();
  auto out = std::make_shared<std::string>("probe.json");
  auto* cmd =
      app.add_subcommand("probe",
                         "Measure a live deployment: cold prefill, cached-prefix TTFT, decode time "
                         "against batch size and context");
  cmd->add_option("--url", o->url, "Server base URL, e.g. http://127.0.0.1:8000")
      ->required()
      ->type_name("URL");
  cmd->add_option("--model", o->model, "Model name the server serves")
      ->required()
      ->type_name("NAME");
  cmd->add_option("--out", *out, "Write the measurements (JSON) to FILE")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->add_option("--prompt-tokens", o->prompt_tokens, "Prompt lengths of the prefill probes")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--batch-sizes", o->batch_sizes, "Concurrent requests of the decode probes")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--decode-contexts", o->decode_contexts, "Context lengths of the decode probes")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--decode-tokens", o->decode_tokens, "Tokens each decode probe generates")
      ->capture_default_str();
  cmd->add_option("--repeats", o->repeats, "Times each probe runs")->capture_default_str();
  cmd->add_flag("--offload", o->offload,
                "Also measure TTFT for prefixes loaded back from the offload tier (evicted with POST "
                "/reset_prefix_cache, else by a flood of --gpu-kv-tokens)");
  cmd->add_option("--gpu-kv-tokens", o->gpu_kv_tokens,
                  "The server's GPU KV cache size in tokens (vLLM logs it), for the flood")
      ->type_name("N");
  cmd->add_option("--first-token-timeout", o->timeouts.first_token_s,
                  "Seconds from send to the first token")
      ->capture_default_str();
  return {cmd, [o, out] { return cmd_probe(*o, *out); }};
}

const CommandRegistrar probe_registrar(61, add_probe);

}  // namespace
}  // namespace kvsim::cli
