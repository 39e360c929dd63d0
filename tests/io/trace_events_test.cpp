// The timeline writer on hand-made events: a request's phases follow its events as
// docs/results.md "Timelines" describes them (asynchronous load, preemption, synchronous load),
// and the command line's window and cap options are checked.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/io/trace_events.hpp"

namespace kvsim::io {
namespace {

using K = RequestEvent::Kind;

// The request events of one run of `events` (request 7 on engine 0), as (name, ph, ts us).
std::vector<std::tuple<std::string, std::string, double>> phases(const std::vector<std::tuple<K, std::int64_t, int>>& events) {
  RunInfo info;
  info.num_engines = 1;
  std::ostringstream os;
  TraceEventsWriter w(os, info, {});
  for (const auto& [kind, t_ns, transfers] : events) {
    RequestEvent e;
    e.kind = kind;
    e.request_id = 7;
    e.time_ns = t_ns;
    e.transfers = transfers;
    w.request(e);
  }
  w.finish();
  std::vector<std::tuple<std::string, std::string, double>> out;
  const nlohmann::json j = nlohmann::json::parse(os.str());
  for (const auto& e : j["traceEvents"]) {
    if (e.value("cat", "") == "request") out.emplace_back(e["name"], e["ph"], e["ts"].get<double>());
  }
  return out;
}

TEST(TraceEventsWriter, AsynchronousLoadThenPreemption) {
  // Arrives at 1 ms, its load (2 transfers) runs 2-5 ms, scheduled at 6 ms, first token at
  // 10 ms, preempted at 12 ms, scheduled again at 15 ms, done at 20 ms.
  const auto p = phases({{K::kArrived, 1'000'000, 0},
                         {K::kLoadStarted, 2'000'000, 2},
                         {K::kLoadDone, 4'000'000, 0},
                         {K::kLoadDone, 5'000'000, 0},
                         {K::kScheduled, 6'000'000, 0},
                         {K::kFirstToken, 10'000'000, 0},
                         {K::kPreempted, 12'000'000, 0},
                         {K::kScheduled, 15'000'000, 0},
                         {K::kFinished, 20'000'000, 0}});
  const std::vector<std::tuple<std::string, std::string, double>> want = {
      {"request", "b", 1000},        {"queued", "b", 1000},  {"queued", "e", 2000},
      {"waiting for KV", "b", 2000}, {"waiting for KV", "e", 5000},  // ends with its last transfer
      {"queued", "b", 5000},         {"queued", "e", 6000},  {"prefill", "b", 6000},
      {"prefill", "e", 10000},       {"decode", "b", 10000}, {"decode", "e", 12000},
      {"preempted", "n", 12000},     {"requeued", "b", 12000}, {"requeued", "e", 15000},
      {"decode", "b", 15000},        {"decode", "e", 20000}, {"request", "e", 20000}};
  EXPECT_EQ(p, want);
}

TEST(TraceEventsWriter, SynchronousLoadSitsInsideThePrefill) {
  // LMCache: scheduled and loading at 3 ms (the empty prefill before the load is left out),
  // computing from 4 ms; a queued phase of no length is kept (it marks the arrival).
  const auto p = phases({{K::kArrived, 3'000'000, 0},
                         {K::kScheduled, 3'000'000, 0},
                         {K::kLoadStarted, 3'000'000, 1},
                         {K::kLoadDone, 4'000'000, 0},
                         {K::kFirstToken, 9'000'000, 0},
                         {K::kFinished, 9'000'000, 0}});
  const std::vector<std::tuple<std::string, std::string, double>> want = {
      {"request", "b", 3000}, {"queued", "b", 3000},  {"queued", "e", 3000},
      {"waiting for KV", "b", 3000}, {"waiting for KV", "e", 4000},
      {"prefill", "b", 4000}, {"prefill", "e", 9000}, {"request", "e", 9000}};
  EXPECT_EQ(p, want);
}

TEST(TraceEventsWriter, Options) {
  const auto o = trace_events_options("1.5:4", 10);
  EXPECT_EQ(o.window_from_s, 1.5);
  EXPECT_EQ(o.window_to_s, 4);
  EXPECT_EQ(o.max_events, 10);
  EXPECT_EQ(trace_events_options("", 3).window_to_s, 0);  // no window
  for (const char* bad : {"4", "a:b", "3:2", "2:2", "-1:2", "1:", ":2", "1:2x", "1:nan"}) {
    try {
      trace_events_options(bad, 10);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--trace-events-window"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(trace_events_options("", 0), InputError);
}

}  // namespace
}  // namespace kvsim::io
