#pragma once
// A discrete-event queue: events ordered by time, ties broken by insertion order, so the
// order of simultaneous events is deterministic. Payload is a small POD chosen by the user.
#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/units.hpp"

namespace kvsim {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    SimTime time;
    std::uint64_t seq;
    Payload payload;
  };

  void push(SimTime time, Payload payload) { heap_.push(Event{time, next_seq_++, payload}); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace kvsim
