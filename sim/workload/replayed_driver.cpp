#include "sim/workload/replayed_driver.hpp"

#include <algorithm>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"

namespace kvsim::workload {

ReplayedDriver::ReplayedDriver(std::vector<ReplayedRequest> requests, Mode mode,
                               std::vector<std::string> header_lines)
    : requests_(std::move(requests)), mode_(mode), header_lines_(std::move(header_lines)) {
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i].send_time < 0 || requests_[i].delay < 0) {
      throw InputError("", 0, 0,
                       "replayed request " + std::to_string(i) + " has a negative time or delay");
    }
  }
  if (mode_ == Mode::kClosedLoop) {
    std::map<int, std::size_t> slot;  // client id -> index in clients_ (ascending client id)
    for (const auto& r : requests_) slot.emplace(r.spec.client_id, 0);
    std::size_t n = 0;
    for (auto& [id, s] : slot) s = n++;
    clients_.resize(n);
    for (std::size_t i = 0; i < requests_.size(); ++i)
      clients_[slot.at(requests_[i].spec.client_id)].requests.push_back(i);
  }
}

void ReplayedDriver::send(std::size_t index, WorkloadContext& ctx, std::size_t client) {
  const std::uint64_t id = ctx.submit(requests_[index].spec);
  ++submitted_;
  if (mode_ == Mode::kClosedLoop) in_flight_.emplace(id, client);
}

void ReplayedDriver::advance(std::size_t client, WorkloadContext& ctx, SimTime after) {
  Client& c = clients_[client];
  if (c.next >= c.requests.size()) return;
  const std::size_t index = c.requests[c.next];
  const SimTime delay = requests_[index].delay;
  if (delay == 0) {
    ++c.next;
    send(index, ctx, client);
  } else {
    ctx.wake_at(limits::saturating_add(after, delay), static_cast<std::int64_t>(client));
  }
}

void ReplayedDriver::start(WorkloadContext& ctx) {
  if (mode_ == Mode::kOpenLoop) {
    // Timers fire in time order, ties in the order set: sort stably by send time.
    std::vector<std::size_t> order(requests_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return requests_[a].send_time < requests_[b].send_time;
    });
    for (const std::size_t i : order)
      ctx.wake_at(limits::saturating_add(ctx.now(), requests_[i].send_time), static_cast<std::int64_t>(i));
    return;
  }
  for (std::size_t c = 0; c < clients_.size(); ++c) advance(c, ctx, ctx.now());
}

void ReplayedDriver::on_wake(std::int64_t tag, WorkloadContext& ctx) {
  const auto index = static_cast<std::size_t>(tag);
  if (mode_ == Mode::kOpenLoop) {
    send(index, ctx, 0);
    return;
  }
  Client& c = clients_[index];
  const std::size_t request = c.requests[c.next];
  ++c.next;
  send(request, ctx, index);
}

void ReplayedDriver::on_complete(const Completion& c, WorkloadContext& ctx) {
  if (mode_ == Mode::kOpenLoop) return;
  const auto it = in_flight_.find(c.request_id);
  if (it == in_flight_.end()) return;
  const std::size_t client = it->second;
  in_flight_.erase(it);
  advance(client, ctx, ctx.now());
}

std::vector<std::string> ReplayedDriver::describe() const {
  std::vector<std::string> lines = header_lines_;
  lines.push_back(std::string("replayed workload: ") + std::to_string(requests_.size()) +
                  " requests, " +
                  (mode_ == Mode::kClosedLoop
                       ? std::to_string(clients_.size()) + " closed-loop clients"
                       : std::string("open loop at the recorded send times")));
  return lines;
}

}  // namespace kvsim::workload
