#pragma once
// Replay of a request trace (trace.hpp) in one of two modes (TraceSpec::mode):
//   open:   request i is submitted at arrival_i, whatever the server's state;
//   closed: a request with a parent (the previous turn of its conversation) is submitted at
//           max(arrival_i, completion of its parent), so a speed-up (time_scale < 1 or
//           rate_scale > 1) never sends a turn before the answer it follows; requests without a
//           parent go at arrival_i as in open mode.
// arrival_i = the request's timestamp after TraceSpec's window and scales (select() in
// trace.hpp): ((t_i - start) * time_scale / rate_scale) milliseconds from the run start, rounded
// to the nanosecond. Requests due at the same time go in trace order. An output length of 0
// (Azure, Bailian) is sent as 1 token. The prompt is trace_prompt() with the trace's hash block
// size, so equal hash ids share KV blocks and traces without prefix information never do.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/workload/driver.hpp"
#include "sim/workload/trace.hpp"
#include "sim/workload/workload_spec.hpp"

namespace kvsim::workload {

class TraceDriver final : public Driver {
 public:
  // `trace` sorted by timestamp (as read_trace returns it). Throws InputError for a bad mode or
  // window (time_scale, rate_scale <= 0, start, duration, max_requests < 0).
  TraceDriver(const Trace& trace, const TraceSpec& spec);

  void start(WorkloadContext& ctx) override;
  void on_wake(std::int64_t tag, WorkloadContext& ctx) override;
  void on_complete(const Completion& c, WorkloadContext& ctx) override;
  std::vector<std::string> describe() const override;
  // Trace hash ids that name their prefix (each always after the same one) name the blocks.
  std::unique_ptr<FixedPrefixNames> prefix_names(std::int64_t block_size) const override;

  std::size_t size() const { return trace_.requests.size(); }
  SimTime arrival(std::size_t i) const { return arrivals_[i]; }
  std::size_t submitted() const { return submitted_; }
  const Trace& trace() const { return trace_; }

 private:
  void submit(std::size_t i, WorkloadContext& ctx);
  void submit_due(WorkloadContext& ctx);
  void schedule(WorkloadContext& ctx);

  Trace trace_;
  TraceSpec spec_;
  bool closed_ = false;
  std::vector<SimTime> arrivals_;
  std::vector<std::vector<std::size_t>> children_;
  std::set<std::pair<SimTime, std::size_t>> ready_;  // (release time, index): may be submitted
  std::set<SimTime> timers_;                         // wake-ups already set
  std::map<std::uint64_t, std::size_t> in_flight_;   // request id -> trace index
  std::size_t submitted_ = 0;
};

// TraceWindow of a TraceSpec.
TraceWindow trace_window(const TraceSpec& spec);

}  // namespace kvsim::workload
