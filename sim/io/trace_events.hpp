#pragma once
// A run as a timeline in the Chrome Trace Event Format (the JSON object form that Perfetto,
// ui.perfetto.dev, and chrome://tracing open): {"traceEvents":[...], "displayTimeUnit":"ms",
// "otherData":{...}}, timestamps ts and durations dur in microseconds of simulated time.
// - Per engine (a pid each): every step as a complete event ("X") on the thread "steps", and
//   every request routed there as nestable async events ("b"/"e", cat "request", id = request
//   id) with its phases nested in order: queued, waiting for KV, prefill, decode, requeued
//   (after a preemption, shown as an async instant "n").
// - KV tiers (one pid) and links (one pid): each KV transfer as an "X" event on a thread per
//   tier instance and per link; transfers that overlap in time go to extra lanes (threads
//   "<name> #1", ...), so the events of one thread never overlap.
// The writer streams: steps and transfers are written as they end, a request's events when it
// finishes (only the requests in flight are held). docs/results.md "Timelines" describes it.
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/io/results.hpp"

namespace kvsim::io {

// Something that happened to a request (Simulation's RunControl::on_request). Times in
// nanoseconds of simulated time.
struct RequestEvent {
  enum class Kind : std::uint8_t {
    kArrived,      // sent by its client (RequestRecord start_time_ms)
    kScheduled,    // admitted into the engine's running queue (first time or after preemption)
    kLoadStarted,  // its KV load from the offload tiers started: `transfers` transfers
    kLoadDone,     // one of those transfers ended
    kPreempted,    // its KV was freed; back to the waiting queue
    kFirstToken,   // its first token reached the client (start + ttft_ms)
    kFinished,     // its last token reached the client (start + latency_ms)
    kRejected,     // refused at arrival (past max_model_len)
  };
  Kind kind = Kind::kArrived;
  std::uint64_t request_id = 0;
  int server = 0;  // engine index
  std::int64_t time_ns = 0;
  int transfers = 0;
};

// One finished KV transfer (Simulation's RunControl::on_transfer). A promotion (chunks a load
// streamed through host DRAM staying there) takes no time and crosses no link. The names point
// into the simulation and are valid during the callback only.
struct TransferEvent {
  std::string_view kind;       // load | store | cascade | promote
  std::uint64_t request_id = 0;
  int server = 0;              // engine index
  std::string_view tier;       // tier instance, e.g. box-0/host_dram or remote
  std::string_view tier_kind;  // host_dram | local_nvme | remote (TierInfo::kind)
  // Bytes counted against the tier: TierInfo::bytes_read for a load, bytes_written otherwise.
  std::int64_t bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  struct Hop {
    std::string_view link;       // link name, e.g. box-0/pcie0
    std::string_view link_kind;  // pcie | nvme | nic | store (LinkInfo::kind)
    bool forward = true;         // LinkInfo's forward direction
  };
  std::span<const Hop> hops;
};

struct TraceEventsOptions {
  // Only events overlapping [window_from_s, window_to_s] are written; no window when from >= to.
  double window_from_s = 0;
  double window_to_s = 0;
  // Events written at most (metadata included); then writing stops and otherData says
  // "truncated": true.
  std::int64_t max_events = 2'000'000;
};

// The options from the command line's --trace-events-window FROM:TO (simulated seconds,
// 0 <= FROM < TO; empty: no window) and --trace-events-max N (N >= 1). Throws InputError naming
// the option otherwise.
TraceEventsOptions trace_events_options(const std::string& window, std::int64_t max_events);

class TraceEventsWriter {
 public:
  static constexpr int kSchemaVersion = 1;
  // Writes the opening and the engines' metadata. `info`: the run's figures known before it
  // runs (scenario name, version, seed, number of engines).
  TraceEventsWriter(std::ostream& os, const RunInfo& info, TraceEventsOptions options);
  void step(const StepRecord& s);
  void request(const RequestEvent& e);
  void transfer(const TransferEvent& t);
  // Writes the closing and otherData; requests still in flight are left out.
  void finish();
  bool truncated() const { return truncated_; }
  std::int64_t events() const { return events_; }

 private:
  struct Phase {
    const char* name;
    std::int64_t begin_ns;
    std::int64_t end_ns;
  };
  struct Live {
    int server = 0;
    std::int64_t arrival_ns = 0;
    const char* phase = "queued";
    std::int64_t phase_start_ns = 0;
    bool scheduled = false;
    bool first_token = false;
    int loads = 0;
    std::vector<Phase> phases;
    std::vector<std::int64_t> preemptions;
  };
  // A tier or link: its thread per lane, and when each lane's last event ends.
  struct Track {
    int index = 0;
    std::vector<std::int64_t> lane_end_ns;
    std::vector<int> lane_tid;
  };
  void switch_phase(Live& r, const char* next, std::int64_t t);
  void write_request(std::uint64_t id, const Live& r, std::int64_t end_ns, bool rejected);
  bool overlaps(std::int64_t b, std::int64_t e) const;
  // Room for n more events; false (and truncated) when the cap would be passed.
  bool room(std::int64_t n);
  void begin_event();
  void metadata(int pid, int tid, const char* name, std::string_view value);
  void sort_index(int pid, int tid, const char* name, std::int64_t index);
  // The thread for an event [b, e] on the track `name` of process `pid`, its metadata written
  // first if new; -1 when the cap leaves no room.
  int lane(std::unordered_map<std::string, Track>& tracks, int pid, std::string_view name, std::int64_t b,
           std::int64_t e, int& next_tid);

  std::ostream& os_;
  RunInfo info_;
  TraceEventsOptions opt_;
  std::int64_t from_ns_ = 0;
  std::int64_t to_ns_ = 0;
  bool windowed_ = false;
  std::int64_t events_ = 0;
  bool truncated_ = false;
  bool finished_ = false;
  int tiers_pid_ = 0;
  int links_pid_ = 0;
  int next_tier_tid_ = 1;
  int next_link_tid_ = 1;
  std::unordered_map<std::uint64_t, Live> live_;
  std::unordered_map<std::string, Track> tiers_;
  std::unordered_map<std::string, Track> links_;
  std::string buf_;
};

}  // namespace kvsim::io
