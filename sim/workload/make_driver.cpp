#include "kvsim/workload/make_driver.hpp"

#include <filesystem>

#include "kvsim/core/error.hpp"
#include "kvsim/core/rng.hpp"
#include "kvsim/workload/conversation.hpp"
#include "kvsim/workload/multi_turn_driver.hpp"
#include "kvsim/workload/trace_driver.hpp"
#include "kvsim/workload/vllm_input.hpp"

namespace kvsim::workload {

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

std::unique_ptr<Driver> make_driver(const WorkloadSpec& spec, const std::string& base_dir,
                                    std::uint64_t seed) {
  if (spec.kind == WorkloadSpec::Kind::kTrace) {
    if (spec.trace.file.empty())
      throw InputError(Diagnostic{"", 0, 0, "workload.trace.file", "a trace file is required"});
    if (spec.trace.format != "auto" && spec.trace.format != "mooncake") {
      throw InputError(
          Diagnostic{"", 0, 0, "workload.trace.format",
                     "unknown trace format '" + spec.trace.format + "' (valid: auto, mooncake)"});
    }
    const std::string path = resolve_path(spec.trace.file, base_dir);
    std::vector<TraceRequest> requests = read_mooncake_trace(path, spec.trace.hash_block_tokens);
    return std::make_unique<TraceDriver>(std::move(requests), spec.trace, spec.trace.file);
  }

  const bool inline_config = spec.generation.has_value();
  const bool file = !spec.input_file.empty();
  if (inline_config == file) {
    throw InputError(Diagnostic{"", 0, 0, "workload",
                                "give exactly one of an inline generation config and input_file"});
  }
  std::optional<GenerationConfig> generation = spec.generation;
  std::vector<Conversation> conversations;
  if (file) {
    VllmInput input = read_vllm_input(resolve_path(spec.input_file, base_dir));
    generation = std::move(input.generation);
    conversations = std::move(input.conversations);
  }
  if (generation) {
    Rng rng = RngFactory(seed).stream("generation");
    conversations = generate_conversations(*generation, rng);
  }
  return std::make_unique<MultiTurnDriver>(std::move(conversations), spec.clients,
                                           spec.chat_template, seed,
                                           generation ? &*generation : nullptr);
}

}  // namespace kvsim::workload
