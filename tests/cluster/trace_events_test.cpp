// The run as a timeline (io::TraceEventsWriter fed by RunControl::on_request, on_transfer and
// the step callback), checked three ways:
// - the Chrome Trace Event Format's rules, on the parsed file: every event has name, ph, pid,
//   tid (and ts >= 0 but metadata); X events have dur >= 0 and never overlap on one thread;
//   async b/e pair up by (cat, id, name), properly nested, e at or after b; every pid and tid is
//   named by an "M" event; the file parses with a scenario name holding quotes, a backslash and
//   non-ASCII text;
// - against records made independently of it: the StepRecords (duration and start of every
//   step), the RequestRecords (arrival = start_time_ms, first token = start + ttft_ms, end =
//   start + latency_ms, within 1 us), and the run's TierInfo and LinkInfo byte totals, which
//   the transfer events must add up to exactly (every transfer is seen);
// - the window keeps exactly the events that overlap it, the cap truncates and says so, and the
//   run's results do not change when it is traced.
#include <gtest/gtest.h>

#include "tests/scenario/small_seed.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/version.hpp"
#include "sim/io/sinks.hpp"
#include "sim/io/summary.hpp"
#include "sim/io/trace_events.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::cluster {
using namespace kvsim::scenario;  // NOLINT: the scenarios these tests load and decode
namespace {

using nlohmann::json;
const std::string kSource = KVSIM_SOURCE_DIR;

// The seed deployment with a smaller population (small_seed.hpp).
Scenario seed(const std::string& file, std::vector<Override> extra = {}) {
  return test_support::small_seed(file, std::move(extra));
}

struct Traced {
  RunResult result;
  std::vector<io::StepRecord> steps;
  json trace;
  bool truncated = false;
};

Traced run_traced(const Scenario& sc, io::TraceEventsOptions opt = {}) {
  Traced t;
  Simulation sim(sc);
  std::ostringstream os;
  io::TraceEventsWriter w(os, sim.info(), opt);
  RunControl control;
  control.on_request = [&w](const io::RequestEvent& e) { w.request(e); };
  control.on_transfer = [&w](const io::TransferEvent& e) { w.transfer(e); };
  t.result = sim.run(
      [&](const io::StepRecord& s) {
        t.steps.push_back(s);
        w.step(s);
      },
      {}, control);
  w.finish();
  t.truncated = w.truncated();
  t.trace = json::parse(os.str());  // throws (fails the test) on invalid JSON
  return t;
}

std::string printed(const RunResult& r) {
  std::ostringstream os;
  io::write_requests_json(os, r.requests);
  io::write_summary_json(os, io::summarize(r.requests, r.info), r.info);
  return os.str();
}

// The format's rules (Chrome "Trace Event Format", JSON object form).
void expect_well_formed(const json& j) {
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j.contains("traceEvents") && j["traceEvents"].is_array());
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  const json& other = j["otherData"];
  EXPECT_EQ(other["schema_version"], 1);
  EXPECT_EQ(other["kvsim_version"], std::string(kVersion));
  EXPECT_EQ(other["events"].get<std::int64_t>(), static_cast<std::int64_t>(j["traceEvents"].size()));

  std::set<int> named_pids;
  std::set<std::pair<int, int>> named_tids;
  std::set<int> used_pids;
  std::set<std::pair<int, int>> used_tids;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;  // X events per thread
  struct Open {
    std::string name;
    double ts;
  };
  std::map<std::pair<std::string, std::uint64_t>, std::vector<Open>> stacks;
  for (const json& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
    const std::string ph = e["ph"];
    const int pid = e["pid"];
    const int tid = e["tid"];
    if (ph == "M") {
      if (e["name"] == "process_name") named_pids.insert(pid);
      if (e["name"] == "thread_name") named_tids.insert({pid, tid});
      continue;
    }
    used_pids.insert(pid);
    used_tids.insert({pid, tid});
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e;
    const double ts = e["ts"];
    EXPECT_GE(ts, 0) << e;
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
      spans[{pid, tid}].emplace_back(ts, ts + e["dur"].get<double>());
    } else if (ph == "b" || ph == "e" || ph == "n") {
      auto& st = stacks[{e["cat"].get<std::string>(), e["id"].get<std::uint64_t>()}];
      if (ph == "b") {
        if (!st.empty()) {
          EXPECT_GE(ts, st.back().ts) << "a child begins before its parent: " << e;
        }
        st.push_back(Open{e["name"], ts});
      } else if (ph == "e") {
        ASSERT_FALSE(st.empty()) << "an end without a begin: " << e;
        EXPECT_EQ(st.back().name, e["name"].get<std::string>()) << "not properly nested: " << e;
        EXPECT_GE(ts, st.back().ts) << e;
        st.pop_back();
      } else {
        ASSERT_FALSE(st.empty()) << "an instant outside its request: " << e;
        EXPECT_GE(ts, st.back().ts) << e;
      }
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  for (const auto& [key, st] : stacks) EXPECT_TRUE(st.empty()) << "unclosed async event, id " << key.second;
  for (const int p : used_pids) EXPECT_TRUE(named_pids.count(p)) << "pid " << p << " has no process_name";
  for (const auto& t : used_tids) EXPECT_TRUE(named_tids.count(t)) << "tid " << t.second << " of pid " << t.first;
  // One thread's complete events follow each other (the lanes of a tier or link).
  for (auto& [thread, v] : spans) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) {
      EXPECT_LE(v[i - 1].second, v[i].first + 1e-3) << "overlap on pid " << thread.first << " tid " << thread.second;
    }
  }
}

// A request's events in file order: name, ph, ts.
struct RequestEvents {
  std::vector<std::tuple<std::string, std::string, double>> events;
};

std::map<std::uint64_t, RequestEvents> by_request(const json& j) {
  std::map<std::uint64_t, RequestEvents> m;
  for (const json& e : j["traceEvents"]) {
    if (e.value("cat", "") != "request") continue;
    m[e["id"].get<std::uint64_t>()].events.emplace_back(e["name"], e["ph"], e["ts"].get<double>());
  }
  return m;
}

// The records the run reports, and what the trace shows for them.
void expect_consistent(const Traced& t) {
  const json& events = t.trace["traceEvents"];
  // Steps, in order: start and duration of each StepRecord.
  std::size_t k = 0;
  for (const json& e : events) {
    if (e.value("cat", "") != "step") continue;
    ASSERT_LT(k, t.steps.size());
    const io::StepRecord& s = t.steps[k++];
    EXPECT_NEAR(e["dur"].get<double>(), s.duration_ms * 1000.0, 1e-3);
    EXPECT_NEAR(e["ts"].get<double>(), s.time_s * 1e6, 1e-3);
    EXPECT_EQ(e["pid"].get<int>(), s.server + 1);
    EXPECT_EQ(e["args"]["batch_tokens"].get<std::int64_t>(), s.batch_tokens);
    EXPECT_EQ(e["args"]["running"].get<int>(), s.running);
    EXPECT_EQ(e["args"]["preemptions"].get<int>(), s.preemptions);
  }
  EXPECT_EQ(k, t.steps.size());

  // Requests: arrival, first token and end.
  const auto reqs = by_request(t.trace);
  EXPECT_EQ(reqs.size(), t.result.requests.size() + static_cast<std::size_t>(t.result.info.failed_requests));
  for (const io::RequestRecord& r : t.result.requests) {
    auto it = reqs.find(r.request_id);
    ASSERT_NE(it, reqs.end()) << "request " << r.request_id;
    const auto& ev = it->second.events;
    ASSERT_GE(ev.size(), 4U);
    const double start = r.start_time_ms * 1000.0;
    EXPECT_EQ(std::get<0>(ev.front()), "request");
    EXPECT_NEAR(std::get<2>(ev.front()), start, 1.0);
    EXPECT_EQ(std::get<0>(ev[1]), "queued");
    EXPECT_EQ(std::get<1>(ev[1]), "b");
    EXPECT_NEAR(std::get<2>(ev[1]), start, 1.0);
    EXPECT_EQ(std::get<1>(ev.back()), "e");
    EXPECT_NEAR(std::get<2>(ev.back()), start + r.latency_ms * 1000.0, 1.0);
    // First token: where decode begins; a one-token request ends with it.
    double first = std::get<2>(ev.back());
    for (const auto& [name, ph, ts] : ev) {
      if (name == "decode" && ph == "b") {
        first = ts;
        break;
      }
    }
    EXPECT_NEAR(first, start + r.ttft_ms * 1000.0, 1.0) << "request " << r.request_id;
    int preempted = 0;
    for (const auto& x : ev) preempted += std::get<1>(x) == "n" ? 1 : 0;
    EXPECT_EQ(preempted, r.preemptions);
  }

  // Bytes: per tier kind (read by loads, written by the rest) and per link kind and direction.
  std::map<std::string, std::int64_t> read, written, fwd, bwd;
  for (const json& e : events) {
    if (e.value("cat", "") != "transfer") continue;
    const auto bytes = e["args"]["bytes"].get<std::int64_t>();
    if (e["args"].contains("link_kind")) {
      const std::string kind = e["args"]["link_kind"];
      (e["args"]["link_direction"] == "forward" ? fwd : bwd)[kind] += bytes;
    } else {
      const std::string kind = e["args"]["tier_kind"];
      (e["name"] == "load" ? read : written)[kind] += bytes;
    }
  }
  for (const io::TierInfo& ti : t.result.info.tiers) {
    EXPECT_EQ(read[ti.kind], ti.bytes_read) << ti.kind;
    EXPECT_EQ(written[ti.kind], ti.bytes_written) << ti.kind;
  }
  for (const io::LinkInfo& li : t.result.info.links) {
    EXPECT_EQ(fwd[li.kind], li.bytes_forward) << li.kind;
    EXPECT_EQ(bwd[li.kind], li.bytes_backward) << li.kind;
  }
}

TEST(TraceEvents, NvmeNetIsWellFormedAndAgreesWithTheRecords) {
  const Traced t = run_traced(seed("4x4090-nvme-net.yaml"));
  expect_well_formed(t.trace);
  expect_consistent(t);
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.trace["otherData"]["truncated"], false);
  // The run moved KV both ways, so the tracks hold loads and stores.
  ASSERT_FALSE(t.result.info.tiers.empty());
  EXPECT_GT(t.result.info.tiers[0].bytes_read, 0);
  EXPECT_GT(t.result.info.tiers[0].bytes_written, 0);
  std::set<std::string> names;
  for (const json& e : t.trace["traceEvents"]) names.insert(e["name"].get<std::string>());
  for (const char* n : {"load", "store", "queued", "waiting for KV", "prefill", "decode"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
}

TEST(TraceEvents, TwoTiersShowCascadesAndPromotions) {
  // Host DRAM in front of the store: stores cascade down, store hits stay in DRAM (promotion).
  const Traced t = run_traced(seed("4x4090-nvme-net.yaml", {{"kv_offload.tiers",
                                                             "[{kind: host_dram, capacity: 8GiB}, "
                                                             "{kind: remote, capacity: 8TB}]"}}));
  expect_well_formed(t.trace);
  expect_consistent(t);
  std::set<std::string> names;
  for (const json& e : t.trace["traceEvents"]) names.insert(e["name"].get<std::string>());
  EXPECT_TRUE(names.count("cascade"));
}

TEST(TraceEvents, LmcacheAndPreemptions) {
  // Synchronous loads (LMCache) and a GPU KV cache small enough to preempt.
  const Traced t = run_traced(seed("4x4090-dram.yaml", {{"engine.num_gpu_blocks_override", "2500"}}));
  expect_well_formed(t.trace);
  expect_consistent(t);
  EXPECT_GT(t.result.info.preemptions, 0);
}

TEST(TraceEvents, TracingChangesNoResult) {
  const Scenario sc = seed("4x4090-nvme-net.yaml");
  Simulation plain(sc);
  const RunResult without = plain.run();
  const Traced with = run_traced(sc);
  EXPECT_EQ(printed(without), printed(with.result));
}

TEST(TraceEvents, NamesAreEscaped) {
  Scenario sc = seed("4x4090-vram-only.yaml", {{"workload.generation.num_conversations", "8"},
                                                {"workload.clients.num_clients", "4"},
                                                {"workload.clients.max_active_conversations", "8"}});
  sc.name = "a \"quoted\" name \\ with ünïcödé, 日本語 and a\ttab";
  const Traced t = run_traced(sc);
  expect_well_formed(t.trace);
  EXPECT_EQ(t.trace["otherData"]["scenario"], sc.name);
}

TEST(TraceEvents, WindowKeepsExactlyTheOverlappingEvents) {
  const Scenario sc = seed("4x4090-nvme-net.yaml");
  const Traced full = run_traced(sc);
  const double from = 120, to = 124;  // seconds: decode steps, loads and stores all happen there
  io::TraceEventsOptions opt;
  opt.window_from_s = from;
  opt.window_to_s = to;
  const Traced win = run_traced(sc, opt);
  expect_well_formed(win.trace);
  auto overlaps = [&](const json& e) {
    const double b = e["ts"].get<double>();
    const double end = b + e.value("dur", 0.0);
    return b <= to * 1e6 && end >= from * 1e6;
  };
  // Complete events (steps and transfers): those of the full trace that overlap, no others.
  auto count_x = [&](const json& j, bool only_overlapping) {
    std::map<std::string, int> n;
    for (const json& e : j["traceEvents"]) {
      if (e["ph"] != "X") continue;
      if (only_overlapping && !overlaps(e)) continue;
      ++n[e["cat"].get<std::string>() + "/" + e["name"].get<std::string>()];
    }
    return n;
  };
  for (const json& e : win.trace["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_TRUE(overlaps(e)) << e;
    }
  }
  const auto kept = count_x(win.trace, false);
  EXPECT_EQ(kept, count_x(full.trace, true));
  EXPECT_GT(kept.count("step/decode"), 0U);
  EXPECT_GT(kept.count("transfer/load"), 0U);
  EXPECT_GT(kept.count("transfer/store"), 0U);
  // Requests: those whose life overlaps the window.
  std::set<std::uint64_t> expected;
  for (const auto& [id, r] : by_request(full.trace)) {
    const double b = std::get<2>(r.events.front());
    const double e = std::get<2>(r.events.back());
    if (b <= to * 1e6 && e >= from * 1e6) expected.insert(id);
  }
  std::set<std::uint64_t> got;
  for (const auto& [id, r] : by_request(win.trace)) got.insert(id);
  EXPECT_EQ(got, expected);
  EXPECT_FALSE(got.empty());
  EXPECT_LT(win.trace["traceEvents"].size(), full.trace["traceEvents"].size());
}

TEST(TraceEvents, CapTruncatesAndSaysSo) {
  const Scenario sc = seed("4x4090-nvme-net.yaml");
  io::TraceEventsOptions opt;
  opt.max_events = 500;
  const Traced t = run_traced(sc, opt);
  expect_well_formed(t.trace);  // still pairs every b with its e
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.trace["otherData"]["truncated"], true);
  EXPECT_LE(t.trace["traceEvents"].size(), 500U);
  EXPECT_GT(t.trace["traceEvents"].size(), 400U);  // it filled up before stopping
}

}  // namespace
}  // namespace kvsim::cluster
