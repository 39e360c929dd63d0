#pragma once
// Measured runs (kvsim replay) and kvsim's predictions of them (kvsim validate) in the
// planner's SQLite results database, through planner::ResultsDb (sim/planner/results_db.hpp
// states the schema; version 2).
//   measured run:  runs.source = 'measured', sweep 'replay', the scenario replayed; its requests
//                  (every one, failed ones with their `error`) are committed one by one as they
//                  end, so an interrupted replay keeps them (its row then stays 'running'); the
//                  summary of the successful requests and status 'done' come at the end.
//   prediction:    runs.source = 'simulated', sweep 'validate', measured_run_key = the
//                  measured run's key, with its requests and summary.
// Run keys: a measured run's key is "measured-" + SHA-256 of the scenario, server, model and the
// wall-clock start (a measurement never repeats); a prediction's is "predicted-" + SHA-256 of
// the measured key, the resolved scenario, the seed and how the workload was built.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/scenario/scenario.hpp"
#include "validation/src/replay_file.hpp"

namespace kvsim::planner {
class ResultsDb;
}

namespace kvsim::validation {

std::string new_measured_run_key(const scenario::Scenario& sc, const std::string& url,
                                 const std::string& model);

class MeasuredRunWriter {
 public:
  // Opens (creating) the database and claims the run; throws InputError when the file is not a
  // results database or the key is already there.
  MeasuredRunWriter(const std::string& db_path, const scenario::Scenario& sc,
                    const std::string& run_key);
  ~MeasuredRunWriter();
  MeasuredRunWriter(const MeasuredRunWriter&) = delete;
  MeasuredRunWriter& operator=(const MeasuredRunWriter&) = delete;

  void add(const ReplayRecord& record);  // committed at once
  void finish(const ReplayRun& run);     // the summary; status done
  std::int64_t written() const { return written_; }

 private:
  std::unique_ptr<planner::ResultsDb> db_;
  std::int64_t run_id_ = 0;
  std::int64_t written_ = 0;
};

// What record_validation wrote.
struct ValidationRows {
  std::string measured_run_key;
  bool measured_added = false;  // false: it was there already (kvsim replay --db)
  std::string predicted_run_key;
  bool predicted_added = false;  // false: the same prediction was there already
};

// Writes the measured run of a replay file (unless its key is in the database) and the
// prediction `predicted` of it made with `sc`; `workload` says how ("replayed", "regenerated").
ValidationRows record_validation(const std::string& db_path, const ReplayRun& run,
                                 const scenario::Scenario& sc,
                                 const std::vector<io::RequestRecord>& predicted,
                                 const io::RunInfo& info, const std::string& workload);

}  // namespace kvsim::validation
