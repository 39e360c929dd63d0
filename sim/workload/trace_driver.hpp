#pragma once
// Open-loop replay of a request trace: request i is submitted at
// arrival_i = timestamp_ms_i * time_scale (milliseconds from the run start, rounded to the
// nanosecond), whatever the server's state; completions change nothing. Requests with equal
// arrival times go in trace order. max_requests > 0 keeps only the first that many (in time
// order). One timer is pending at a time (the next arrival).
#include <string>
#include <vector>

#include "kvsim/workload/driver.hpp"
#include "kvsim/workload/mooncake_trace.hpp"
#include "kvsim/workload/workload_spec.hpp"

namespace kvsim::workload {

class TraceDriver final : public Driver {
 public:
  // `requests` sorted by timestamp (as read_mooncake_trace returns them). Throws InputError for
  // time_scale <= 0, max_requests < 0 or hash_block_tokens <= 0.
  TraceDriver(std::vector<TraceRequest> requests, const TraceSpec& spec, std::string source_name);

  void start(WorkloadContext& ctx) override;
  void on_wake(std::int64_t tag, WorkloadContext& ctx) override;
  void on_complete(const Completion& c, WorkloadContext& ctx) override;
  std::vector<std::string> describe() const override;

  std::size_t size() const { return requests_.size(); }
  SimTime arrival(std::size_t i) const { return arrivals_[i]; }
  std::size_t submitted() const { return next_; }

 private:
  void submit_due(WorkloadContext& ctx);

  std::vector<TraceRequest> requests_;
  std::vector<SimTime> arrivals_;
  TraceSpec spec_;
  std::string source_name_;
  std::size_t next_ = 0;
};

}  // namespace kvsim::workload
