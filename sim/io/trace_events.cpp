#include "sim/io/trace_events.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <string>

#include "sim/core/error.hpp"
#include "sim/core/json_string.hpp"

namespace kvsim::io {
namespace {

constexpr int kStepsTid = 1;
constexpr int kRequestsTid = 2;

std::int64_t ns_of_seconds(double s) { return std::llround(s * 1e9); }

// Nanoseconds as microseconds with three decimals (exact: no binary fraction in between).
void append_us(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  out += std::to_string(ns / 1000);
  const auto frac = ns % 1000;
  if (frac != 0) {
    out += '.';
    out += static_cast<char>('0' + frac / 100);
    out += static_cast<char>('0' + frac / 10 % 10);
    out += static_cast<char>('0' + frac % 10);
  }
}

void append_double(std::string& out, double v) {
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, r.ptr);
}

// The step's name from what its batch held.
const char* step_name(const StepRecord& s) {
  if (s.prefill_requests > 0 && s.decode_requests > 0) return "prefill+decode";
  if (s.prefill_requests > 0) return "prefill";
  if (s.decode_requests > 0) return "decode";
  return "step";
}

// Which way a transfer moved data, in words.
const char* direction_of(std::string_view kind) {
  if (kind == "load") return "tier to GPU";
  if (kind == "store") return "GPU to tier";
  if (kind == "cascade") return "tier to the tier below";
  return "kept in host DRAM from a load";
}

}  // namespace

TraceEventsOptions trace_events_options(const std::string& window, std::int64_t max_events) {
  TraceEventsOptions opt;
  if (max_events < 1) {
    throw InputError("", 0, 0, "--trace-events-max: must be at least 1, got " + std::to_string(max_events));
  }
  opt.max_events = max_events;
  if (window.empty()) return opt;
  auto number = [](const std::string& text, double& out) {
    std::size_t used = 0;
    try {
      out = std::stod(text, &used);
    } catch (const std::exception&) {
      return false;
    }
    return used == text.size() && std::isfinite(out);
  };
  const auto colon = window.find(':');
  double from = 0;
  double to = 0;
  if (colon == std::string::npos || !number(window.substr(0, colon), from) || !number(window.substr(colon + 1), to)) {
    throw InputError("", 0, 0,
                     "--trace-events-window: expected FROM:TO in simulated seconds (e.g. 10:15), got '" + window + "'");
  }
  if (from < 0) throw InputError("", 0, 0, "--trace-events-window: FROM must be >= 0, got '" + window + "'");
  if (from >= to) throw InputError("", 0, 0, "--trace-events-window: FROM must be less than TO, got '" + window + "'");
  opt.window_from_s = from;
  opt.window_to_s = to;
  return opt;
}

TraceEventsWriter::TraceEventsWriter(std::ostream& os, const RunInfo& info, TraceEventsOptions options)
    : os_(os), info_(info), opt_(options) {
  windowed_ = opt_.window_from_s < opt_.window_to_s;
  from_ns_ = ns_of_seconds(opt_.window_from_s);
  to_ns_ = ns_of_seconds(opt_.window_to_s);
  tiers_pid_ = info_.num_engines + 1;
  links_pid_ = info_.num_engines + 2;
  os_ << "{\"traceEvents\":[";
  for (int e = 0; e < info_.num_engines; ++e) {
    if (!room(6)) break;
    metadata(e + 1, 0, "process_name", "engine " + std::to_string(e));
    sort_index(e + 1, 0, "process_sort_index", e);
    metadata(e + 1, kStepsTid, "thread_name", "steps");
    sort_index(e + 1, kStepsTid, "thread_sort_index", 0);
    metadata(e + 1, kRequestsTid, "thread_name", "requests");
    sort_index(e + 1, kRequestsTid, "thread_sort_index", 1);
  }
}

bool TraceEventsWriter::room(std::int64_t n) {
  if (truncated_) return false;
  if (events_ + n > opt_.max_events) {
    truncated_ = true;
    return false;
  }
  return true;
}

void TraceEventsWriter::begin_event() {
  buf_.clear();
  buf_ += events_ == 0 ? "\n" : ",\n";
  ++events_;
}

bool TraceEventsWriter::overlaps(std::int64_t b, std::int64_t e) const {
  return !windowed_ || (b <= to_ns_ && e >= from_ns_);
}

void TraceEventsWriter::metadata(int pid, int tid, const char* name, std::string_view value) {
  begin_event();
  buf_ += "{\"name\":\"";
  buf_ += name;
  buf_ += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
  append_json_string(buf_, value);
  buf_ += "}}";
  os_ << buf_;
}

void TraceEventsWriter::sort_index(int pid, int tid, const char* name, std::int64_t index) {
  begin_event();
  buf_ += "{\"name\":\"";
  buf_ += name;
  buf_ += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
          ",\"args\":{\"sort_index\":" + std::to_string(index) + "}}";
  os_ << buf_;
}

void TraceEventsWriter::step(const StepRecord& s) {
  const std::int64_t b = ns_of_seconds(s.time_s);
  const std::int64_t d = std::llround(s.duration_ms * 1e6);
  if (!overlaps(b, b + d) || !room(1)) return;
  begin_event();
  buf_ += "{\"name\":\"";
  buf_ += step_name(s);
  buf_ += "\",\"cat\":\"step\",\"ph\":\"X\",\"pid\":" + std::to_string(s.server + 1) +
          ",\"tid\":" + std::to_string(kStepsTid) + ",\"ts\":";
  append_us(buf_, b);
  buf_ += ",\"dur\":";
  append_us(buf_, d);
  buf_ += ",\"args\":{\"batch_tokens\":" + std::to_string(s.batch_tokens) +
          ",\"prefill_requests\":" + std::to_string(s.prefill_requests) +
          ",\"decode_requests\":" + std::to_string(s.decode_requests) + ",\"running\":" + std::to_string(s.running) +
          ",\"waiting\":" + std::to_string(s.waiting) + ",\"kv_usage\":";
  append_double(buf_, s.kv_usage);
  buf_ += ",\"preemptions\":" + std::to_string(s.preemptions) + "}}";
  os_ << buf_;
}

void TraceEventsWriter::switch_phase(Live& r, const char* next, std::int64_t t) {
  // A phase that lasted no time is left out, but for the first (queued: it marks the arrival).
  // Phases follow each other: a late report (none is expected) cannot end one before it began.
  t = std::max(t, r.phase_start_ns);
  if (t > r.phase_start_ns || r.phases.empty()) r.phases.push_back(Phase{r.phase, r.phase_start_ns, t});
  r.phase = next;
  r.phase_start_ns = t;
}

void TraceEventsWriter::request(const RequestEvent& e) {
  using K = RequestEvent::Kind;
  if (e.kind == K::kArrived) {
    Live r;
    r.server = e.server;
    r.arrival_ns = e.time_ns;
    r.phase_start_ns = e.time_ns;
    live_[e.request_id] = std::move(r);
    return;
  }
  auto it = live_.find(e.request_id);
  if (it == live_.end()) return;
  Live& r = it->second;
  switch (e.kind) {
    case K::kArrived:
      break;
    case K::kScheduled:
      r.scheduled = true;
      if (r.loads == 0) switch_phase(r, r.first_token ? "decode" : "prefill", e.time_ns);
      break;
    case K::kLoadStarted:
      if (e.transfers <= 0) break;
      r.loads += e.transfers;
      switch_phase(r, "waiting for KV", e.time_ns);
      break;
    case K::kLoadDone:
      if (r.loads > 0 && --r.loads == 0) {
        // An asynchronous load returns the request to the waiting queue; a synchronous one
        // (LMCache) was scheduled with it and computes now.
        switch_phase(r, r.scheduled ? (r.first_token ? "decode" : "prefill") : "queued", e.time_ns);
      }
      break;
    case K::kPreempted:
      r.scheduled = false;
      r.preemptions.push_back(e.time_ns);
      switch_phase(r, "requeued", e.time_ns);
      break;
    case K::kFirstToken:
      r.first_token = true;
      switch_phase(r, "decode", e.time_ns);
      break;
    case K::kFinished:
    case K::kRejected:
      switch_phase(r, "", e.time_ns);
      write_request(e.request_id, r, std::max(e.time_ns, r.phase_start_ns), e.kind == K::kRejected);
      live_.erase(it);
      break;
  }
}

void TraceEventsWriter::write_request(std::uint64_t id, const Live& r, std::int64_t end_ns, bool rejected) {
  if (!overlaps(r.arrival_ns, end_ns)) return;
  std::int64_t n = 2;
  for (const Phase& p : r.phases) n += overlaps(p.begin_ns, p.end_ns) ? 2 : 0;
  for (const std::int64_t t : r.preemptions) n += overlaps(t, t) ? 1 : 0;
  if (!room(n)) return;
  const std::string head = "\",\"cat\":\"request\",\"id\":" + std::to_string(id) +
                           ",\"pid\":" + std::to_string(r.server + 1) + ",\"tid\":" + std::to_string(kRequestsTid);
  auto event = [&](std::string_view name, char ph, std::int64_t ts, const std::string& args) {
    begin_event();
    buf_ += "{\"name\":\"";
    buf_ += name;
    buf_ += head;
    buf_ += ",\"ph\":\"";
    buf_ += ph;
    buf_ += "\",\"ts\":";
    append_us(buf_, ts);
    buf_ += args;
    buf_ += '}';
    os_ << buf_;
  };
  std::string args = ",\"args\":{\"request_id\":" + std::to_string(id) + ",\"server\":" + std::to_string(r.server) +
                     ",\"preemptions\":" + std::to_string(r.preemptions.size()) +
                     (rejected ? ",\"rejected\":true}" : "}");
  event("request", 'b', r.arrival_ns, args);
  // Preemption instants between the phases they end, in time order.
  std::size_t k = 0;
  for (const Phase& p : r.phases) {
    for (; k < r.preemptions.size() && r.preemptions[k] <= p.begin_ns; ++k) {
      if (overlaps(r.preemptions[k], r.preemptions[k])) event("preempted", 'n', r.preemptions[k], "");
    }
    if (!overlaps(p.begin_ns, p.end_ns)) continue;
    event(p.name, 'b', p.begin_ns, "");
    event(p.name, 'e', p.end_ns, "");
  }
  for (; k < r.preemptions.size(); ++k) {
    if (overlaps(r.preemptions[k], r.preemptions[k])) event("preempted", 'n', r.preemptions[k], "");
  }
  event("request", 'e', end_ns, "");
}

int TraceEventsWriter::lane(std::unordered_map<std::string, Track>& tracks, int pid, std::string_view name,
                            std::int64_t b, std::int64_t e, int& next_tid) {
  auto it = tracks.find(std::string(name));
  const bool first_track = tracks.empty();
  if (it == tracks.end()) {
    // The process is named with its first track.
    if (!room(first_track ? 5 : 3)) return -1;
    if (first_track) {
      metadata(pid, 0, "process_name", pid == tiers_pid_ ? "KV tiers" : "links");
      sort_index(pid, 0, "process_sort_index", pid);
    }
    Track t;
    t.index = static_cast<int>(tracks.size());
    it = tracks.emplace(std::string(name), std::move(t)).first;
  }
  Track& t = it->second;
  // Events arrive in order of their ends, so a lane is free when its last event ended by b.
  for (std::size_t l = 0; l < t.lane_end_ns.size(); ++l) {
    if (t.lane_end_ns[l] <= b) {
      if (!room(1)) return -1;
      t.lane_end_ns[l] = e;
      return t.lane_tid[l];
    }
  }
  if (!room(3)) return -1;
  const int tid = next_tid++;
  const auto l = t.lane_end_ns.size();
  t.lane_end_ns.push_back(e);
  t.lane_tid.push_back(tid);
  metadata(pid, tid, "thread_name", l == 0 ? std::string(name) : std::string(name) + " #" + std::to_string(l));
  sort_index(pid, tid, "thread_sort_index", static_cast<std::int64_t>(t.index) * 1000 + static_cast<std::int64_t>(l));
  return tid;
}

void TraceEventsWriter::transfer(const TransferEvent& t) {
  if (!overlaps(t.start_ns, t.end_ns)) return;
  auto event = [&](int pid, int tid, bool link, std::string_view link_kind, bool forward) {
    begin_event();
    buf_ += "{\"name\":";
    append_json_string(buf_, t.kind);
    buf_ += ",\"cat\":\"transfer\",\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
            ",\"ts\":";
    append_us(buf_, t.start_ns);
    buf_ += ",\"dur\":";
    append_us(buf_, t.end_ns - t.start_ns);
    buf_ += ",\"args\":{\"bytes\":" + std::to_string(t.bytes) + ",\"request_id\":" + std::to_string(t.request_id) +
            ",\"server\":" + std::to_string(t.server) + ",\"tier\":";
    append_json_string(buf_, t.tier);
    buf_ += ",\"tier_kind\":";
    append_json_string(buf_, t.tier_kind);
    buf_ += ",\"direction\":\"";
    buf_ += direction_of(t.kind);
    buf_ += '"';
    if (link) {
      buf_ += ",\"link_kind\":";
      append_json_string(buf_, link_kind);
      buf_ += ",\"link_direction\":\"";
      buf_ += forward ? "forward" : "backward";
      buf_ += '"';
    }
    buf_ += "}}";
    os_ << buf_;
  };
  const int tier_tid = lane(tiers_, tiers_pid_, t.tier, t.start_ns, t.end_ns, next_tier_tid_);
  if (tier_tid < 0) return;
  event(tiers_pid_, tier_tid, false, {}, true);
  for (const auto& hop : t.hops) {
    const int tid = lane(links_, links_pid_, hop.link, t.start_ns, t.end_ns, next_link_tid_);
    if (tid < 0) return;
    event(links_pid_, tid, true, hop.link_kind, hop.forward);
  }
}

void TraceEventsWriter::finish() {
  if (finished_) return;
  finished_ = true;
  std::string out = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"schema_version\":" +
                    std::to_string(kSchemaVersion) + ",\"kvsim_version\":";
  append_json_string(out, info_.kvsim_version);
  out += ",\"scenario\":";
  append_json_string(out, info_.scenario_name);
  out += ",\"seed\":" + std::to_string(info_.seed);
  if (windowed_) {
    out += ",\"window_s\":[";
    append_double(out, opt_.window_from_s);
    out += ',';
    append_double(out, opt_.window_to_s);
    out += ']';
  }
  out += ",\"max_events\":" + std::to_string(opt_.max_events) + ",\"events\":" + std::to_string(events_) +
         ",\"truncated\":" + (truncated_ ? "true" : "false") + "}}\n";
  os_ << out;
}

}  // namespace kvsim::io
