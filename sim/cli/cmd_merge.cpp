// kvsim merge: combine results databases (e.g. the shards of a sweep) into one, deduplicated
// by run key; conflicting content is refused; the output appears only when complete.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/planner/results_db.hpp"

namespace kvsim::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string out;
};

int cmd_merge(const MergeOptions& o) {
  namespace fs = std::filesystem;
  for (const auto& in : o.inputs) {
    if (!fs::exists(in)) throw InputError(in, 0, 0, "no such results database");
  }
  const bool out_existed = fs::exists(o.out);
  if (out_existed) {
    // Opening checks it and checkpoints its journal into the file, which is then merged first.
    planner::ResultsDb check(o.out, planner::ResultsDb::Mode::kExisting);
  }
  if (fs::exists(o.out + "-wal"))
    throw InputError(o.out, 0, 0, "is being written by another process; merge later");
  const std::string tmp = o.out + ".merging." + std::to_string(getpid());
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(tmp + suffix);
  planner::MergeStats total;
  try {
    {
      planner::ResultsDb db(tmp, planner::ResultsDb::Mode::kCreate);
      std::vector<std::string> sources;
      if (out_existed) sources.push_back(o.out);
      sources.insert(sources.end(), o.inputs.begin(), o.inputs.end());
      for (std::size_t i = 0; i < sources.size(); ++i) {
        const auto s = db.merge_from(sources[i]);
        std::cerr << "kvsim merge: " << sources[i] << ": " << s.added << " added, " << s.identical
                  << " identical, " << s.replaced << " replaced, " << s.skipped << " skipped"
                  << (out_existed && i == 0 ? " (kept)" : "") << '\n';
        if (out_existed && i == 0) continue;  // the output's own runs are not counted as merged
        total.added += s.added;
        total.identical += s.identical;
        total.replaced += s.replaced;
        total.skipped += s.skipped;
      }
    }
    fs::rename(tmp, o.out);
  } catch (...) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(tmp + suffix);
    throw;
  }
  std::cout << "merged " << o.inputs.size() << " database" << (o.inputs.size() == 1 ? "" : "s")
            << " into " << o.out << ": " << total.added << " runs added, " << total.identical
            << " identical, " << total.replaced << " replaced, " << total.skipped
            << " skipped (unfinished or failed duplicates)\n";
  return 0;
}

Command add_merge(CLI::App& app, CommonOptions& /*common*/) {
  auto o = std::make_shared<MergeOptions>();
  auto* cmd = app.add_subcommand("merge", "Merge results databases (e.g. sweep shards) into one");
  cmd->add_option("databases", o->inputs, "Results databases to merge")
      ->required()
      ->type_name("DB...");
  cmd->add_option(
         "--out", o->out,
         "Output database; an existing one is kept and merged with the inputs, and replaced only "
         "once the merge is complete")
      ->required()
      ->type_name("FILE");
  return {cmd, [o] { return cmd_merge(*o); }};
}

const CommandRegistrar registrar(42, add_merge);

}  // namespace
}  // namespace kvsim::cli
