#pragma once
// A stand-in for the simulation in workload tests: it records every request a Driver submits,
// completes each one after a latency chosen by the test (0 = at once), and fires timers, all in
// simulated-time order with ties in the order they were scheduled.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/workload/driver.hpp"

namespace kvsim::workload::testing {

class FakeContext : public WorkloadContext {
 public:
  struct Sent {
    std::uint64_t id = 0;
    SimTime at = 0;
    RequestSpec spec;
  };
  struct Done {
    std::uint64_t id = 0;
    SimTime at = 0;
  };

  // latency(spec) -> time from submission to completion.
  std::function<SimTime(const RequestSpec&)> latency = [](const RequestSpec&) {
    return SimTime{0};
  };
  // ok(spec) -> whether the request succeeds.
  std::function<bool(const RequestSpec&)> ok = [](const RequestSpec&) { return true; };
  // output(spec) -> tokens the "server" generated (default: the forced length).
  std::function<std::int64_t(const RequestSpec&)> output = [](const RequestSpec& s) {
    return s.output_tokens;
  };

  SimTime now() const override { return now_; }

  std::uint64_t submit(RequestSpec spec) override {
    const std::uint64_t id = next_id_++;
    queue_.push(now_ + latency(spec), Event{false, id, 0});
    sent.push_back(Sent{id, now_, std::move(spec)});
    return id;
  }

  void wake_at(SimTime t, std::int64_t tag) override {
    if (t < now_) throw std::logic_error("wake_at in the past");
    queue_.push(t, Event{true, 0, tag});
    timers.push_back(t);
  }

  // Runs the driver until nothing is pending (or max_events, to catch runaway loops).
  void run(Driver& driver, std::size_t max_events = 1'000'000) {
    driver.start(*this);
    std::size_t n = 0;
    while (!queue_.empty()) {
      if (++n > max_events) throw std::runtime_error("too many events");
      const auto ev = queue_.pop();
      now_ = ev.time;
      if (ev.payload.timer) {
        driver.on_wake(ev.payload.tag, *this);
      } else {
        const Sent& s = find(ev.payload.id);
        Completion c;
        c.request_id = s.id;
        c.ok = ok(s.spec);
        c.sent = s.at;
        c.first_token = now_;
        c.finished = now_;
        c.output_tokens = output(s.spec);
        done.push_back(Done{s.id, now_});
        driver.on_complete(c, *this);
      }
    }
  }

  const Sent& find(std::uint64_t id) const {
    for (const Sent& s : sent) {
      if (s.id == id) return s;
    }
    throw std::logic_error("unknown request id");
  }

  std::vector<Sent> sent;
  std::vector<Done> done;
  std::vector<SimTime> timers;

 private:
  struct Event {
    bool timer = false;
    std::uint64_t id = 0;
    std::int64_t tag = 0;
  };
  EventQueue<Event> queue_;
  SimTime now_ = 0;
  std::uint64_t next_id_ = 1;
};

}  // namespace kvsim::workload::testing
