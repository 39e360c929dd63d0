// kvsim convert-sharegpt: a raw ShareGPT file to vLLM's OpenAI-messages conversation file, as
// vLLM's benchmarks/multi_turn/convert_sharegpt_to_openai.py writes it (same options).
#include <iostream>
#include <memory>
#include <string>

#include "sim/cli/command.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/workload/sharegpt.hpp"

namespace kvsim::cli {
namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  workload::ShareGptFilter filter;
  bool keep_non_english = false;
};

int cmd_convert_sharegpt(const ConvertOptions& o) {
  workload::ShareGptFilter f = o.filter;
  f.exclude_non_english = !o.keep_non_english;
  const auto conversations = workload::read_sharegpt(o.input, f);
  io::AtomicFile out(o.output);
  out.stream() << workload::openai_conversations_json(conversations);
  out.commit();
  std::size_t messages = 0;
  for (const auto& c : conversations) messages += c.messages.size();
  std::cerr << "wrote " << conversations.size() << " conversations (" << messages
            << " messages) to " << o.output << '\n';
  return 0;
}

Command add_convert_sharegpt(CLI::App& app, CommonOptions& /*common*/) {
  auto o = std::make_shared<ConvertOptions>();
  auto* cmd = app.add_subcommand(
      "convert-sharegpt",
      "Convert raw ShareGPT JSON to vLLM's OpenAI-messages conversation file, as "
      "vLLM's convert_sharegpt_to_openai.py does");
  cmd->add_option("input", o->input, "Raw ShareGPT JSON file")->required()->type_name("IN");
  cmd->add_option("output", o->output, "OpenAI-messages JSON file to write")
      ->required()
      ->type_name("OUT");
  cmd->add_option("--seed", o->filter.seed,
                  "Seed for the shuffle and the sample (Python's random)");
  cmd->add_option("--max-items", o->filter.max_items, "Sample at most N conversations")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-turns", o->filter.min_turns, "Drop conversations with fewer turns")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-turns", o->filter.max_turns, "Keep at most N turns of a conversation")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-content-len", o->filter.min_content_len,
                  "Drop conversations with a shorter message (characters)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-content-len", o->filter.max_content_len,
                  "Drop conversations with a longer message (characters)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-exclude-non-english", o->keep_non_english,
                "Keep conversations with non-ASCII messages (dropped by default)");
  return {cmd, [o] { return cmd_convert_sharegpt(*o); }};
}

const CommandRegistrar registrar(55, add_convert_sharegpt);

}  // namespace
}  // namespace kvsim::cli
