#include "sim/workload/make_driver.hpp"

#include <filesystem>

#include "sim/core/error.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/rng.hpp"
#include "sim/workload/conversation.hpp"
#include "sim/workload/multi_turn_driver.hpp"
#include "sim/workload/sharegpt.hpp"
#include "sim/workload/trace_driver.hpp"
#include "sim/workload/vllm_input.hpp"

namespace kvsim::workload {
namespace {

// A JSON list whose first item has "conversations": raw ShareGPT, not vLLM's own input file.
bool is_raw_sharegpt(const std::string& path) {
  try {
    return detect_trace_format(path) == TraceFormat::kShareGpt;
  } catch (const InputError&) {
    return false;  // read_vllm_input reports the file's problems
  }
}

}  // namespace

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty() || is_stdin_path(path)) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

std::unique_ptr<Driver> make_driver(const WorkloadSpec& spec, const std::string& base_dir,
                                    std::uint64_t seed) {
  if (spec.kind == WorkloadSpec::Kind::kTrace) {
    if (spec.trace.file.empty())
      throw InputError(Diagnostic{"", 0, 0, "workload.trace.file", "a trace file is required"});
    TraceReadOptions opt;
    opt.format = spec.trace.format;
    opt.hash_block_tokens = spec.trace.hash_block_tokens;
    opt.sharegpt = spec.sharegpt;
    opt.chat_template = spec.chat_template;
    const Trace trace = read_trace(resolve_path(spec.trace.file, base_dir), opt);
    return std::make_unique<TraceDriver>(trace, spec.trace);
  }

  const bool inline_config = spec.generation.has_value();
  const bool file = !spec.input_file.empty();
  if (inline_config == file) {
    throw InputError(Diagnostic{"", 0, 0, "workload",
                                "give exactly one of an inline generation config and input_file"});
  }
  std::optional<GenerationConfig> generation = spec.generation;
  std::vector<Conversation> conversations;
  if (file && is_raw_sharegpt(resolve_path(spec.input_file, base_dir))) {
    conversations =
        to_conversations(read_sharegpt(resolve_path(spec.input_file, base_dir), spec.sharegpt));
  } else if (file) {
    VllmInput input = read_vllm_input(resolve_path(spec.input_file, base_dir));
    generation = std::move(input.generation);
    conversations = std::move(input.conversations);
  }
  if (generation) {
    Rng rng = RngFactory(seed).stream("generation");
    try {
      conversations = generate_conversations(*generation, rng);
    } catch (const InputError& e) {
      // Name the keys where they were written: the scenario's workload.generation, or the
      // generation config file.
      std::vector<Diagnostic> ds = e.diagnostics();
      for (auto& d : ds) {
        if (!d.file.empty()) continue;
        if (file) {
          d.file = resolve_path(spec.input_file, base_dir);
        } else if (!d.path.empty()) {
          d.path = "generation." + d.path;
        }
      }
      throw InputError(std::move(ds));
    }
  }
  return std::make_unique<MultiTurnDriver>(std::move(conversations), spec.clients,
                                           spec.chat_template, seed,
                                           generation ? &*generation : nullptr);
}

}  // namespace kvsim::workload
