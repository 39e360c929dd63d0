#include "sim/workload/trace_driver.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/workload/distributions.hpp"

namespace kvsim::workload {

TraceWindow trace_window(const TraceSpec& spec) {
  TraceWindow w;
  w.time_scale = spec.time_scale;
  w.rate_scale = spec.rate_scale;
  w.start_s = to_seconds(spec.start);
  w.duration_s = to_seconds(spec.duration);
  w.max_requests = spec.max_requests;
  return w;
}

TraceDriver::TraceDriver(const Trace& trace, const TraceSpec& spec) : spec_(spec) {
  closed_ = spec_.mode == TraceMode::kClosed;
  trace_ = select(trace, trace_window(spec_));
  const std::size_t n = trace_.requests.size();
  arrivals_.reserve(n);
  children_.resize(n);
  SimTime last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const TraceRequest& r = trace_.requests[i];
    const SimTime t = from_ms(r.timestamp_ms);
    KVSIM_ASSERT(t >= last, "trace requests must be sorted by timestamp");
    arrivals_.push_back(t);
    last = t;
    if (closed_ && r.parent >= 0) {
      children_[static_cast<std::size_t>(r.parent)].push_back(i);
    } else {
      ready_.emplace(t, i);
    }
  }
}

void TraceDriver::start(WorkloadContext& ctx) { schedule(ctx); }

void TraceDriver::schedule(WorkloadContext& ctx) {
  if (ready_.empty()) return;
  const SimTime t = std::max(ready_.begin()->first, ctx.now());
  if (timers_.insert(t).second) ctx.wake_at(t, static_cast<std::int64_t>(ready_.begin()->second));
}

void TraceDriver::submit(std::size_t i, WorkloadContext& ctx) {
  const TraceRequest& r = trace_.requests[i];
  RequestSpec spec;
  spec.prompt = trace_prompt(r, i, trace_.hash_block_tokens);
  spec.output_tokens = std::max<std::int64_t>(1, r.output_length);
  spec.output_content_id = trace_output_stream(i);
  spec.conversation_id = r.conversation;
  spec.input_num_turns = r.turn > 0 ? 2 * r.turn - 1 : 1;
  spec.input_num_tokens = r.input_length;
  const std::uint64_t id = ctx.submit(std::move(spec));
  if (closed_ && !children_[i].empty()) in_flight_.emplace(id, i);
  ++submitted_;
}

void TraceDriver::submit_due(WorkloadContext& ctx) {
  while (!ready_.empty() && ready_.begin()->first <= ctx.now()) {
    const std::size_t i = ready_.begin()->second;
    ready_.erase(ready_.begin());
    submit(i, ctx);
  }
  schedule(ctx);
}

void TraceDriver::on_wake(std::int64_t /*tag*/, WorkloadContext& ctx) {
  timers_.erase(ctx.now());
  submit_due(ctx);
}

void TraceDriver::on_complete(const Completion& c, WorkloadContext& ctx) {
  if (!closed_) return;
  const auto it = in_flight_.find(c.request_id);
  if (it == in_flight_.end()) return;
  const std::size_t parent = it->second;
  in_flight_.erase(it);
  for (const std::size_t child : children_[parent])
    ready_.emplace(std::max(arrivals_[child], ctx.now()), child);
  submit_due(ctx);
}

std::unique_ptr<FixedPrefixNames> TraceDriver::prefix_names(std::int64_t block_size) const {
  if (trace_.hash_block_tokens <= 0) return nullptr;
  auto names = std::make_unique<FixedPrefixNames>(block_size, trace_.hash_block_tokens);
  for (const TraceRequest& r : trace_.requests) {
    if (!names->add_chain(trace_block_streams(r, trace_.hash_block_tokens))) return nullptr;
  }
  if (names->size() == 0) return nullptr;
  return names;
}

std::vector<std::string> TraceDriver::describe() const {
  return {"trace=" + spec_.file,
          "format=" + trace_.format,
          std::string("mode=") + trace_mode_name(spec_.mode),
          "num_requests=" + std::to_string(trace_.requests.size()),
          "time_scale=" + python_number_repr(spec_.time_scale),
          "rate_scale=" + python_number_repr(spec_.rate_scale),
          "hash_block_tokens=" + std::to_string(trace_.hash_block_tokens)};
}

}  // namespace kvsim::workload
