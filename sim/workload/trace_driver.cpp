#include "kvsim/workload/trace_driver.hpp"

#include <cmath>

#include "kvsim/core/error.hpp"
#include "kvsim/workload/distributions.hpp"

namespace kvsim::workload {

TraceDriver::TraceDriver(std::vector<TraceRequest> requests, const TraceSpec& spec,
                         std::string source_name)
    : requests_(std::move(requests)), spec_(spec), source_name_(std::move(source_name)) {
  std::vector<Diagnostic> errors;
  if (!std::isfinite(spec_.time_scale) || spec_.time_scale <= 0) {
    errors.push_back(Diagnostic{"", 0, 0, "trace.time_scale", "must be > 0"});
  }
  if (spec_.max_requests < 0)
    errors.push_back(Diagnostic{"", 0, 0, "trace.max_requests", "must be >= 0 (0 = all)"});
  if (spec_.hash_block_tokens <= 0)
    errors.push_back(Diagnostic{"", 0, 0, "trace.hash_block_tokens", "must be >= 1"});
  if (!errors.empty()) throw InputError(std::move(errors));
  if (spec_.max_requests > 0 && static_cast<std::size_t>(spec_.max_requests) < requests_.size()) {
    requests_.resize(static_cast<std::size_t>(spec_.max_requests));
  }
  arrivals_.reserve(requests_.size());
  SimTime last = 0;
  for (const TraceRequest& r : requests_) {
    const SimTime t = from_ms(r.timestamp_ms * spec_.time_scale);
    KVSIM_ASSERT(t >= last, "trace requests must be sorted by timestamp");
    arrivals_.push_back(t);
    last = t;
  }
}

void TraceDriver::start(WorkloadContext& ctx) {
  if (!requests_.empty()) ctx.wake_at(std::max(arrivals_.front(), ctx.now()), 0);
}

void TraceDriver::submit_due(WorkloadContext& ctx) {
  while (next_ < requests_.size() && arrivals_[next_] <= ctx.now()) {
    const TraceRequest& r = requests_[next_];
    RequestSpec spec;
    spec.prompt = trace_prompt(r, next_, spec_.hash_block_tokens);
    spec.output_tokens = r.output_length;
    spec.output_content_id = trace_output_stream(next_);
    spec.input_num_turns = 1;
    spec.input_num_tokens = r.input_length;
    ctx.submit(std::move(spec));
    ++next_;
  }
  if (next_ < requests_.size()) ctx.wake_at(arrivals_[next_], static_cast<std::int64_t>(next_));
}

void TraceDriver::on_wake(std::int64_t /*tag*/, WorkloadContext& ctx) { submit_due(ctx); }

void TraceDriver::on_complete(const Completion& /*c*/, WorkloadContext& /*ctx*/) {}

std::vector<std::string> TraceDriver::describe() const {
  return {"trace=" + source_name_, "format=mooncake",
          "num_requests=" + std::to_string(requests_.size()),
          "time_scale=" + python_number_repr(spec_.time_scale),
          "hash_block_tokens=" + std::to_string(spec_.hash_block_tokens)};
}

}  // namespace kvsim::workload
