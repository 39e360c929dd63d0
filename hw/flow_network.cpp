#include "hw/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/core/error.hpp"

namespace kvsim::hw {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Resources whose fair share lies within this relative distance of the smallest share saturate
// together, so that rounding in (capacity - frozen) / count cannot leave a sliver of capacity.
constexpr double kShareTolerance = 1e-12;
// A transfer is complete once fewer than kSlackBytes + kSlackRelative x size bytes remain: a
// millionth of a byte plus 1e-12 of the size absorbs the rounding of double-precision progress
// (a 1 GB transfer may end at most ~1 ps early; in whole nanoseconds, never).
constexpr double kSlackBytes = 1e-6;
constexpr double kSlackRelative = 1e-12;

// end = now + ceil((remaining - slack) x 1e9 / rate), the first whole nanosecond at which the
// transfer has delivered its bytes at a constant `rate`.
SimTime projected_end(SimTime now, double remaining, double rate, std::int64_t bytes) {
  const double left = remaining - (kSlackBytes + kSlackRelative * static_cast<double>(bytes));
  if (left <= 0 || std::isinf(rate)) return now;
  if (rate <= 0) return kNever;
  // Past the simulated clock's limit: saturate there (the simulation stops with an error when
  // it reaches that event), never wrap.
  const double ns = std::ceil(left * 1e9 / rate);
  if (now >= kTimeOverLimit || !(ns < static_cast<double>(kTimeOverLimit - now))) return kTimeOverLimit;
  return now + static_cast<SimTime>(ns);
}

}  // namespace

FlowNetwork::FlowNetwork(const Topology& topology) {
  KVSIM_ASSERT(topology.sealed(), "FlowNetwork needs a sealed Topology");
  const std::size_t links = topology.num_links();
  num_link_res_ = 2 * links;
  base_cap_.resize(num_link_res_);
  busy_cap_.resize(num_link_res_);
  link_latency_.resize(links);
  for (std::size_t l = 0; l < links; ++l) {
    const LinkSpec& s = topology.link(static_cast<LinkId>(l));
    base_cap_[2 * l] = s.forward.value;
    base_cap_[2 * l + 1] = s.backward.value;
    busy_cap_[2 * l] = s.both_busy_each.value;
    busy_cap_[2 * l + 1] = s.both_busy_each.value;
    link_latency_[l] = s.latency;
  }
  finished_bytes_.assign(num_link_res_, 0);
  live_.cap = base_cap_;
  live_.alloc.assign(num_link_res_, 0.0);
}

ResourceId FlowNetwork::add_resource(std::string name, BytesPerSec capacity) {
  if (!(std::isfinite(capacity.value) && capacity.value > 0)) {
    throw InputError(Diagnostic{"", 0, 0, name, "capacity must be a finite rate > 0"});
  }
  const auto id = static_cast<ResourceId>(resource_names_.size());
  resource_names_.push_back(std::move(name));
  base_cap_.push_back(capacity.value);
  busy_cap_.push_back(0.0);
  finished_bytes_.push_back(0);
  live_.cap.push_back(capacity.value);
  live_.alloc.push_back(0.0);
  cache_valid_ = false;
  return id;
}

const std::string& FlowNetwork::resource_name(ResourceId id) const {
  KVSIM_ASSERT(id >= 0 && static_cast<std::size_t>(id) < resource_names_.size(),
               "unknown ResourceId");
  return resource_names_[static_cast<std::size_t>(id)];
}

std::int32_t FlowNetwork::link_res(LinkId link, bool forward) const {
  KVSIM_ASSERT(link >= 0 && 2 * static_cast<std::size_t>(link) < num_link_res_, "unknown LinkId");
  return 2 * link + (forward ? 0 : 1);
}

std::int32_t FlowNetwork::extra_res(ResourceId id) const {
  KVSIM_ASSERT(id >= 0 && static_cast<std::size_t>(id) < resource_names_.size(),
               "unknown ResourceId");
  return static_cast<std::int32_t>(num_link_res_) + id;
}

std::size_t FlowNetwork::find_slot(TransferId id) const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (live_.flows[i].phase != Phase::kFree && slots_[i].id == id) return i;
  }
  return slots_.size();
}

TransferId FlowNetwork::start(SimTime now, const Route& route, Bytes bytes,
                              const TransferOptions& opts) {
  KVSIM_ASSERT(now >= clock_, "start() in the past");
  KVSIM_ASSERT(bytes.value >= 0, "negative transfer size");
  KVSIM_ASSERT(opts.extra_latency >= 0, "negative latency");
  KVSIM_ASSERT(std::isfinite(opts.rate_cap.value) && opts.rate_cap.value >= 0,
               "rate cap must be finite and >= 0");
  run_live(now);

  std::size_t i;
  if (!free_slots_.empty()) {
    i = free_slots_.back();
    free_slots_.pop_back();
  } else {
    i = slots_.size();
    slots_.emplace_back();
    live_.flows.emplace_back();
  }
  Slot& slot = slots_[i];
  slot.id = next_id_++;
  slot.tag = opts.tag;
  slot.bytes = bytes.value;
  slot.started = now;
  slot.rate_cap = opts.rate_cap.value;
  slot.res.clear();
  SimTime latency = opts.extra_latency;
  for (const Hop& h : route) {
    slot.res.push_back(link_res(h.link, h.forward));
    latency += link_latency_[static_cast<std::size_t>(h.link)];
  }
  for (const ResourceId r : opts.resources) slot.res.push_back(extra_res(r));
  for (std::size_t a = 0; a < slot.res.size(); ++a) {
    for (std::size_t b = a + 1; b < slot.res.size(); ++b) {
      KVSIM_ASSERT(slot.res[a] != slot.res[b],
                   "a transfer uses a link direction or resource twice");
    }
  }

  Flow& f = live_.flows[i];
  f.phase = Phase::kWaiting;
  f.flow_start = now + latency;
  f.end = kNever;
  f.remaining = static_cast<double>(bytes.value);
  f.rate = -1;
  ++active_;
  cache_valid_ = false;
  // A transfer without latency starts flowing (or, with no bytes, finishes) right now.
  run_live(now);
  return slot.id;
}

SimTime FlowNetwork::next_event(const State& s) const {
  SimTime e = kNever;
  for (const Flow& f : s.flows) {
    if (f.phase == Phase::kWaiting) {
      e = std::min(e, f.flow_start);
    } else if (f.phase == Phase::kFlowing) {
      e = std::min(e, f.end);
    }
  }
  return e;
}

// remaining -= rate x (t - now) / 1e9 for every flowing transfer.
void FlowNetwork::progress(State& s, SimTime t) const {
  if (t <= s.now) return;
  const double dt = static_cast<double>(t - s.now);
  for (Flow& f : s.flows) {
    if (f.phase == Phase::kFlowing && f.rate > 0 && std::isfinite(f.rate)) {
      f.remaining -= f.rate * dt / 1e9;
    }
  }
  s.now = t;
}

// Max-min fair rates by progressive filling. Per resource r with effective capacity C_r, F_r the
// sum of the rates already frozen through r and n_r the number of unfrozen transfers through r,
// the level all unfrozen transfers can still reach is
//   m = min( min_r (C_r - F_r) / n_r , min over unfrozen transfers of their rate cap ).
// Every resource whose share equals m saturates, and its transfers, with those capped at m,
// freeze at rate m. Repeat until none is unfrozen: at most one round per distinct rate.
void FlowNetwork::recompute(State& s) const {
  // Max-min fair shares by water filling, over the resources and transfers in use only: the
  // others carry nothing, so they set no level, saturate nothing and keep their idle values
  // (cap = base capacity, alloc = 0). The work per call is in the transfers in flight, not in
  // the size of the topology (hundreds of link directions on a cluster).
  const std::size_t nr = base_cap_.size();
  const std::size_t nf = s.flows.size();
  if (s.cap.size() != nr || s.alloc.size() != nr) {
    s.cap = base_cap_;
    s.alloc.assign(nr, 0.0);
    s.touched.clear();
  }
  for (const std::int32_t r : s.touched) {
    s.cap[static_cast<std::size_t>(r)] = base_cap_[static_cast<std::size_t>(r)];
    s.alloc[static_cast<std::size_t>(r)] = 0.0;
  }
  s.touched.clear();
  // The working arrays are all zero between calls.
  if (count_.size() != nr) {
    count_.assign(nr, 0);
    unfrozen_.assign(nr, 0);
    frozen_.assign(nr, 0.0);
    saturated_.assign(nr, 0);
  }
  used_res_.clear();
  flowing_.clear();
  for (std::size_t i = 0; i < nf; ++i) {
    if (s.flows[i].phase != Phase::kFlowing) continue;
    flowing_.push_back(static_cast<std::int32_t>(i));
    for (const std::int32_t r : slots_[i].res) {
      if (count_[static_cast<std::size_t>(r)]++ == 0) used_res_.push_back(r);
    }
  }
  std::sort(used_res_.begin(), used_res_.end());
  // Duplex interference: the opposite direction of a link is r ^ 1; while it carries a
  // transfer, a link direction's capacity is its both-busy figure (used or not).
  const auto interfered = [this](std::size_t r) {
    return r < num_link_res_ && busy_cap_[r] > 0 && count_[r ^ 1U] > 0;
  };
  for (const std::int32_t ri : used_res_) {
    const auto r = static_cast<std::size_t>(ri);
    unfrozen_[r] = count_[r];
    s.touched.push_back(ri);
    if (interfered(r)) s.cap[r] = std::min(base_cap_[r], busy_cap_[r]);
    const std::size_t o = r ^ 1U;
    if (r < num_link_res_ && count_[o] == 0 && interfered(o)) {
      s.cap[o] = std::min(base_cap_[o], busy_cap_[o]);
      s.touched.push_back(static_cast<std::int32_t>(o));
    }
  }

  level_.assign(nf, -1.0);  // -1 = unfrozen (or not flowing)
  std::size_t left = flowing_.size();
  while (left > 0) {
    double m = kInf;
    for (const std::int32_t ri : used_res_) {
      const auto r = static_cast<std::size_t>(ri);
      if (unfrozen_[r] > 0) m = std::min(m, (s.cap[r] - frozen_[r]) / unfrozen_[r]);
    }
    for (const std::int32_t fi : flowing_) {
      const auto i = static_cast<std::size_t>(fi);
      if (level_[i] < 0 && slots_[i].rate_cap > 0) m = std::min(m, slots_[i].rate_cap);
    }
    m = std::max(m, 0.0);
    const double threshold = m + m * kShareTolerance;
    for (const std::int32_t ri : used_res_) {
      const auto r = static_cast<std::size_t>(ri);
      saturated_[r] = unfrozen_[r] > 0 && (s.cap[r] - frozen_[r]) / unfrozen_[r] <= threshold;
    }
    for (const std::int32_t fi : flowing_) {
      const auto i = static_cast<std::size_t>(fi);
      if (level_[i] >= 0) continue;
      const Slot& slot = slots_[i];
      // With no resource and no cap (m = +inf) every remaining transfer freezes at once.
      bool freeze = std::isinf(m) || (slot.rate_cap > 0 && slot.rate_cap <= threshold);
      for (const std::int32_t r : slot.res)
        freeze = freeze || saturated_[static_cast<std::size_t>(r)];
      if (!freeze) continue;
      level_[i] = m;
      --left;
      for (const std::int32_t r : slot.res) {
        frozen_[static_cast<std::size_t>(r)] += m;
        --unfrozen_[static_cast<std::size_t>(r)];
      }
    }
  }

  for (const std::int32_t ri : used_res_) {
    const auto r = static_cast<std::size_t>(ri);
    s.alloc[r] = frozen_[r];
    count_[r] = 0;
    unfrozen_[r] = 0;
    frozen_[r] = 0.0;
    saturated_[r] = 0;
  }
  for (const std::int32_t fi : flowing_) {
    const auto i = static_cast<std::size_t>(fi);
    Flow& f = s.flows[i];
    // An unchanged rate keeps its projected end, so unrelated events add no rounding.
    if (level_[i] != f.rate) {
      f.rate = level_[i];
      f.end = projected_end(s.now, f.remaining, f.rate, slots_[i].bytes);
    }
  }
}

void FlowNetwork::finish(std::size_t i, SimTime t) {
  const Slot& slot = slots_[i];
  pending_.push_back(Completed{slot.id, slot.tag, slot.started, t, Bytes{slot.bytes}});
  for (const std::int32_t r : slot.res) finished_bytes_[static_cast<std::size_t>(r)] += slot.bytes;
  live_.flows[i] = Flow{};
  free_slots_.push_back(i);
  --active_;
}

// Processes every event at or before t: completions, then transfers whose latency ends, then
// the new shares.
void FlowNetwork::run_live(SimTime t) {
  for (;;) {
    const SimTime e = next_event(live_);
    if (e > t || e == kNever) break;
    progress(live_, e);
    for (std::size_t i = 0; i < live_.flows.size(); ++i) {
      const Flow& f = live_.flows[i];
      if (f.phase == Phase::kFlowing && f.end <= e) finish(i, e);
    }
    for (std::size_t i = 0; i < live_.flows.size(); ++i) {
      Flow& f = live_.flows[i];
      if (f.phase != Phase::kWaiting || f.flow_start > e) continue;
      if (slots_[i].bytes == 0) {
        finish(i, e);
      } else {
        f.phase = Phase::kFlowing;
        f.rate = -1;
      }
    }
    recompute(live_);
  }
  clock_ = std::max(clock_, t);
}

// The same event loop on a copy, stopping at the first completion.
SimTime FlowNetwork::run_dry(State& s) const {
  for (;;) {
    const SimTime e = next_event(s);
    if (e == kNever) return kNever;
    progress(s, e);
    for (std::size_t i = 0; i < s.flows.size(); ++i) {
      const Flow& f = s.flows[i];
      if (f.phase == Phase::kFlowing && f.end <= e) return e;
      if (f.phase == Phase::kWaiting && f.flow_start <= e && slots_[i].bytes == 0) return e;
    }
    for (Flow& f : s.flows) {
      if (f.phase == Phase::kWaiting && f.flow_start <= e) {
        f.phase = Phase::kFlowing;
        f.rate = -1;
      }
    }
    recompute(s);
  }
}

SimTime FlowNetwork::next_completion() const {
  if (!pending_.empty()) {
    SimTime first = kNever;
    for (const Completed& c : pending_) first = std::min(first, c.finished);
    return first;
  }
  if (!cache_valid_) {
    scratch_.now = live_.now;
    scratch_.flows = live_.flows;
    scratch_.cap = live_.cap;
    scratch_.alloc = live_.alloc;
    scratch_.touched = live_.touched;
    cache_ = run_dry(scratch_);
    cache_valid_ = true;
  }
  return cache_;
}

void FlowNetwork::advance_to(SimTime t, std::vector<Completed>& out) {
  KVSIM_ASSERT(t >= clock_, "advance_to() in the past");
  run_live(t);
  if (pending_.empty()) return;
  std::sort(pending_.begin(), pending_.end(), [](const Completed& a, const Completed& b) {
    return a.finished != b.finished ? a.finished < b.finished : a.id < b.id;
  });
  out.insert(out.end(), pending_.begin(), pending_.end());
  pending_.clear();
  // Without external changes the projected next completion stays exact until it is consumed.
  if (cache_valid_ && cache_ <= t) cache_valid_ = false;
}

std::vector<Completed> FlowNetwork::advance_to(SimTime t) {
  std::vector<Completed> out;
  advance_to(t, out);
  return out;
}

bool FlowNetwork::cancel(SimTime now, TransferId id) {
  KVSIM_ASSERT(now >= clock_, "cancel() in the past");
  run_live(now);
  const std::size_t i = find_slot(id);
  if (i == slots_.size()) return false;
  progress(live_, now);
  const Slot& slot = slots_[i];
  const auto done = static_cast<std::int64_t>(std::floor(delivered(i)));
  for (const std::int32_t r : slot.res) finished_bytes_[static_cast<std::size_t>(r)] += done;
  live_.flows[i] = Flow{};
  free_slots_.push_back(i);
  --active_;
  recompute(live_);
  cache_valid_ = false;
  return true;
}

bool FlowNetwork::in_flight(TransferId id) const { return find_slot(id) != slots_.size(); }

double FlowNetwork::rate(TransferId id) const {
  const std::size_t i = find_slot(id);
  if (i == slots_.size() || live_.flows[i].phase != Phase::kFlowing) return 0.0;
  return live_.flows[i].rate;
}

// Bytes a transfer has delivered by now(): size - (remaining at the last event - rate x elapsed),
// clamped to [0, size].
double FlowNetwork::delivered(std::size_t i) const {
  const Flow& f = live_.flows[i];
  const auto size = static_cast<double>(slots_[i].bytes);
  if (f.phase != Phase::kFlowing) return 0.0;
  double left = f.remaining;
  if (f.rate > 0 && std::isfinite(f.rate)) {
    left -= f.rate * static_cast<double>(clock_ - live_.now) / 1e9;
  }
  return std::clamp(size - left, 0.0, size);
}

Bytes FlowNetwork::moved(std::int32_t r) const {
  std::int64_t total = finished_bytes_[static_cast<std::size_t>(r)];
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (live_.flows[i].phase != Phase::kFlowing) continue;
    const auto& res = slots_[i].res;
    if (std::find(res.begin(), res.end(), r) == res.end()) continue;
    total += static_cast<std::int64_t>(std::floor(delivered(i)));
  }
  return Bytes{total};
}

BytesPerSec FlowNetwork::allocated(LinkId link, bool forward) const {
  return BytesPerSec{live_.alloc[static_cast<std::size_t>(link_res(link, forward))]};
}

BytesPerSec FlowNetwork::capacity(LinkId link, bool forward) const {
  return BytesPerSec{live_.cap[static_cast<std::size_t>(link_res(link, forward))]};
}

double FlowNetwork::utilization(LinkId link, bool forward) const {
  const auto r = static_cast<std::size_t>(link_res(link, forward));
  return live_.alloc[r] / live_.cap[r];
}

Bytes FlowNetwork::bytes_moved(LinkId link, bool forward) const {
  return moved(link_res(link, forward));
}

BytesPerSec FlowNetwork::resource_allocated(ResourceId id) const {
  return BytesPerSec{live_.alloc[static_cast<std::size_t>(extra_res(id))]};
}

double FlowNetwork::resource_utilization(ResourceId id) const {
  const auto r = static_cast<std::size_t>(extra_res(id));
  return live_.alloc[r] / live_.cap[r];
}

Bytes FlowNetwork::resource_bytes_moved(ResourceId id) const { return moved(extra_res(id)); }

// run_live() and moved() on a copy of the live state, without finishing anything for real.
std::vector<std::int64_t> FlowNetwork::link_bytes_moved_at(SimTime t) const {
  KVSIM_ASSERT(t >= clock_, "link_bytes_moved_at() in the past");
  std::vector<std::int64_t> out(finished_bytes_.begin(),
                                finished_bytes_.begin() + static_cast<std::ptrdiff_t>(num_link_res_));
  auto add = [&](std::size_t i, std::int64_t bytes) {
    for (const std::int32_t r : slots_[i].res) {
      if (static_cast<std::size_t>(r) < num_link_res_) out[static_cast<std::size_t>(r)] += bytes;
    }
  };
  State s;
  s.now = live_.now;
  s.flows = live_.flows;
  s.cap = live_.cap;
  s.alloc = live_.alloc;
  s.touched = live_.touched;
  for (;;) {
    const SimTime e = next_event(s);
    if (e == kNever || e > t) break;
    progress(s, e);
    for (std::size_t i = 0; i < s.flows.size(); ++i) {
      Flow& f = s.flows[i];
      if (f.phase == Phase::kFlowing && f.end <= e) {
        add(i, slots_[i].bytes);
        f = Flow{};
      }
    }
    for (std::size_t i = 0; i < s.flows.size(); ++i) {
      Flow& f = s.flows[i];
      if (f.phase != Phase::kWaiting || f.flow_start > e) continue;
      if (slots_[i].bytes == 0) {
        f = Flow{};
      } else {
        f.phase = Phase::kFlowing;
        f.rate = -1;
      }
    }
    recompute(s);
  }
  progress(s, t);
  for (std::size_t i = 0; i < s.flows.size(); ++i) {
    const Flow& f = s.flows[i];
    if (f.phase != Phase::kFlowing) continue;
    const auto size = static_cast<double>(slots_[i].bytes);
    add(i, static_cast<std::int64_t>(std::floor(std::clamp(size - f.remaining, 0.0, size))));
  }
  return out;
}

}  // namespace kvsim::hw
