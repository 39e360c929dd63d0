#include "sim/planner/capacity_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/core/error.hpp"

namespace kvsim::planner {

Probe aggregate_seeds(std::int64_t load, const std::vector<MetricValues>& seeds, const Slo& slo,
                      Aggregate how) {
  KVSIM_ASSERT(!seeds.empty(), "a probe needs at least one seed");
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Probe p;
  p.load = load;
  for (const auto& [key, first] : seeds.front()) {
    double sum = 0;
    bool finite = true;
    for (const auto& s : seeds) {
      const auto it = s.find(key);
      if (it == s.end() || std::isnan(it->second)) {
        finite = false;
        break;
      }
      sum += it->second;
    }
    p.metrics[key] = finite ? sum / static_cast<double>(seeds.size()) : kNaN;
  }
  if (how == Aggregate::kWorst) {
    for (const auto& term : slo.terms) {
      auto it = p.metrics.find(term.metric);
      if (it == p.metrics.end() || std::isnan(it->second)) continue;
      double worst = term.upper_bound() ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity();
      for (const auto& s : seeds) {
        const double v = s.at(term.metric);
        worst = term.upper_bound() ? std::max(worst, v) : std::min(worst, v);
      }
      it->second = worst;
    }
  }
  p.slo = evaluate(slo, p.metrics);
  return p;
}

const Probe* SearchResult::at_max() const {
  for (const auto& p : probes) {
    if (p.load == max_load) return &p;
  }
  return nullptr;
}

const Probe* SearchResult::at_first_fail() const {
  for (const auto& p : probes) {
    if (p.load == first_fail) return &p;
  }
  return nullptr;
}

SearchResult find_max_load(const ProbeFn& probe, const SearchOptions& options) {
  KVSIM_ASSERT(options.min_load >= 0 && options.max_load >= options.min_load, "bad search range");
  SearchResult r;
  std::map<std::int64_t, bool> seen;
  auto passes = [&](std::int64_t load) {
    const auto it = seen.find(load);
    if (it != seen.end()) return it->second;
    r.probes.push_back(probe(load));
    r.probes.back().load = load;
    const bool ok = r.probes.back().pass();
    seen[load] = ok;
    return ok;
  };

  const std::int64_t start =
      std::clamp(options.start, std::max<std::int64_t>(options.min_load, 1), options.max_load);
  std::int64_t lo = 0;  // largest load known to pass (0: none)
  std::int64_t hi = 0;  // smallest load known to fail (0: none)
  if (passes(start)) {
    // Bracket upwards: double until a load fails or the cap is reached.
    lo = start;
    while (lo < options.max_load) {
      const std::int64_t next = std::min(lo * 2, options.max_load);
      if (passes(next)) {
        lo = next;
      } else {
        hi = next;
        break;
      }
    }
    if (hi == 0) {
      r.max_load = lo;
      r.capped = true;
    }
  } else {
    // Bracket downwards: halve until a load passes or the floor fails too.
    hi = start;
    while (hi > options.min_load) {
      const std::int64_t next = std::max(hi / 2, options.min_load);
      if (passes(next)) {
        lo = next;
        break;
      }
      hi = next;
    }
    if (lo == 0) r.max_load = 0;
  }
  if (lo > 0 && hi > 0) {
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (passes(mid) ? lo : hi) = mid;
    }
    r.max_load = lo;
  }
  r.first_fail = hi;
  if (options.verify && lo > 0 && hi > 0) {
    // Monotonicity checked at the bracket: a load a quarter above the first failure must fail
    // too, and one a quarter below the answer must pass (probed unless already known).
    const std::int64_t above = std::min(hi + std::max<std::int64_t>(1, hi / 4), options.max_load);
    if (above > hi) passes(above);
    const std::int64_t below = lo - std::max<std::int64_t>(1, lo / 4);
    if (below >= std::max<std::int64_t>(options.min_load, 1)) passes(below);
  }
  for (const auto& [load, ok] : seen) {
    if ((ok && hi > 0 && load > hi) || (!ok && load <= r.max_load)) r.violations.push_back(load);
  }
  return r;
}

}  // namespace kvsim::planner
