#pragma once
// Result sinks: the benchmark-style text table, the summary as JSON and CSV, the per-request
// records as JSON, and the per-step time series as streaming CSV. Every sink writes to the
// std::ostream it is given (never to stdout on its own) and formats numbers without the
// locale, so one run gives the same bytes every time. docs/results.md lists every key.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/io/results.hpp"
#include "sim/io/summary.hpp"

namespace kvsim::io {

// The vLLM multi-turn benchmark's printout (process_statistics): the parameter block from
// info.header_lines, runtime_sec and requests_per_sec, then describe().T with 2 decimals as
// pandas prints it; then kvsim's own lines (output tokens/s, prefix-cache hit rate,
// preemptions, vLLM's "GPU KV cache size" and "Maximum concurrency" log lines).
void write_table(std::ostream& os, const Summary& s, const RunInfo& info);

// The summary as one JSON object with a fixed key order; see docs/results.md.
void write_summary_json(std::ostream& os, const Summary& s, const RunInfo& info);
// kvsim check-scenario's findings as a JSON document (docs/results.md): the scenario file and
// name, GPU KV cache tokens and blocks per engine, engines, compute model, notes and the KV
// memory breakdown lines. `info` is the Simulation's info before the run.
void write_check_scenario_json(std::ostream& os, const std::string& scenario_path, const RunInfo& info);
// The summary as CSV: one header row and one value row, the same figures as the JSON with
// the metric objects flattened (ttft_ms_p50, ...).
void write_summary_csv(std::ostream& os, const Summary& s, const RunInfo& info);

// The request records as a JSON array, one object per line, in the given order: the
// benchmark's --stats-json-output keys and kvsim's own.
void write_requests_json(std::ostream& os, const std::vector<RequestRecord>& records);

// The same JSON array written one record at a time as records arrive, so a long run need not
// hold its records: write() each record, then finish() once. The bytes equal
// write_requests_json over the same records in the same order.
class RequestsJsonWriter {
 public:
  explicit RequestsJsonWriter(std::ostream& os) : os_(os) {}
  void write(const RequestRecord& r);
  void finish();
  std::int64_t count() const { return count_; }

 private:
  std::ostream& os_;
  std::int64_t count_ = 0;
  bool finished_ = false;
};

// The per-step time series as CSV, one row per write(). The header line is written by the
// constructor. Rows are formatted into a reused buffer, so writing does not allocate once
// the buffer has grown.
class TimeseriesCsvWriter {
 public:
  explicit TimeseriesCsvWriter(std::ostream& os);
  void write(const StepRecord& step);

  static constexpr const char* kHeader =
      "time_s,server,duration_ms,running,waiting,batch_tokens,prefill_requests,decode_requests,"
      "kv_usage,preemptions";

 private:
  std::ostream& os_;
  std::string line_;
};

// The usage samples (Simulation::run's RunControl::on_usage) as CSV, one row per sample:
// time_s,interval_s,gpu_bytes_held, then <kind>_bytes_held per offload tier and
// <kind>_util_forward,<kind>_util_backward per link kind (fractions in [0, 1]). The header is
// written with the first row, from that sample's tiers and links (the same in every sample).
class UsageCsvWriter {
 public:
  explicit UsageCsvWriter(std::ostream& os) : os_(os) {}
  void write(const UsageSample& sample);

 private:
  std::ostream& os_;
  std::string line_;
  bool header_ = false;
};

}  // namespace kvsim::io
