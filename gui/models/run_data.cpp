#include "gui/models/run_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "gui/models/knob_model.hpp"
#include "sim/core/error.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::gui {

RunPtr run_job(const RunJob& job, std::stop_token stop,
               const std::function<void(double simulated_s)>& on_progress) {
  const auto sc = scenario::load_scenario_text(job.text, job.display_name, job.options);
  cluster::Simulation sim(sc);
  auto data = std::make_shared<RunData>();
  data->job = job;
  cluster::RunControl control;
  control.usage_interval_s = kUsageIntervalS;
  control.stop = std::move(stop);
  control.on_usage = [&data, &on_progress](const io::UsageSample& u) {
    data->usage.push_back(u);
    if (on_progress) on_progress(u.time_s);
  };
  auto result =
      sim.run([&data](const io::StepRecord& s) { data->steps.push_back(s); }, {}, control);
  std::stable_sort(
      data->steps.begin(), data->steps.end(),
      [](const io::StepRecord& a, const io::StepRecord& b) { return a.time_s < b.time_s; });
  const double warmup =
      sc.workload.warmup_percentages.empty() ? 0.0 : sc.workload.warmup_percentages.front();
  data->summary = io::summarize(result.requests, result.info, warmup);
  data->info = result.info;
  // The kept samples: counted records in start order, less the warmup share (as summarize()).
  std::vector<const io::RequestRecord*> counted;
  for (const auto& r : result.requests) {
    if (r.counted) counted.push_back(&r);
  }
  std::stable_sort(counted.begin(), counted.end(),
                   [](const io::RequestRecord* a, const io::RequestRecord* b) {
                     return a->start_time_ms < b->start_time_ms;
                   });
  const auto drop = static_cast<std::size_t>(data->summary.warmup_samples);
  for (std::size_t i = drop; i < counted.size(); ++i) {
    data->ttft_ms.push_back(counted[i]->ttft_ms);
    if (counted[i]->output_num_tokens > 1) data->tpot_ms.push_back(counted[i]->tpot_ms);
  }
  std::sort(data->ttft_ms.begin(), data->ttft_ms.end());
  std::sort(data->tpot_ms.begin(), data->tpot_ms.end());
  return data;
}

std::vector<TierVariant> tier_variants(const scenario::Scenario& sc) {
  std::vector<TierVariant> v = planner::default_variants(sc);
  std::erase_if(v, [](const TierVariant& x) { return x.name == "no-reuse"; });
  return v;
}

namespace {

// Indices of every n-th sample and the last, at most max_points of them.
std::vector<std::size_t> thinned(std::size_t n, std::size_t max_points) {
  std::vector<std::size_t> out;
  if (n == 0) return out;
  const std::size_t stride =
      max_points == 0 || n <= max_points ? 1 : (n + max_points - 1) / max_points;
  for (std::size_t i = 0; i < n; i += stride) out.push_back(i);
  if ((n - 1) % stride != 0) out.push_back(n - 1);
  return out;
}

}  // namespace

std::vector<UsageLine> tier_usage_lines(const std::vector<io::UsageSample>& usage,
                                        std::size_t max_points) {
  std::vector<UsageLine> lines;
  if (usage.empty()) return lines;
  lines.push_back({"gpu", {}});
  for (const auto& t : usage.front().tiers) lines.push_back({t.kind, {}});
  for (const std::size_t i : thinned(usage.size(), max_points)) {
    const auto& u = usage[i];
    lines[0].points.emplace_back(u.time_s, static_cast<double>(u.gpu_bytes_held) / 1e9);
    for (std::size_t t = 0; t < u.tiers.size() && t + 1 < lines.size(); ++t) {
      lines[t + 1].points.emplace_back(u.time_s, static_cast<double>(u.tiers[t].bytes_held) / 1e9);
    }
  }
  return lines;
}

std::vector<UsageLine> link_usage_lines(const std::vector<io::UsageSample>& usage,
                                        std::size_t max_points) {
  std::vector<UsageLine> lines;
  if (usage.empty()) return lines;
  for (const auto& l : usage.front().links) lines.push_back({l.kind, {}});
  if (lines.empty()) return lines;
  const std::size_t n = usage.size();
  const std::size_t stride =
      max_points == 0 || n <= max_points ? 1 : (n + max_points - 1) / max_points;
  // Each point: the samples of one group of `stride`, weighted by their intervals.
  for (std::size_t first = 0; first < n; first += stride) {
    const std::size_t last = std::min(n, first + stride);
    std::vector<double> weighted(lines.size(), 0.0);
    double seconds = 0;
    for (std::size_t i = first; i < last; ++i) {
      const auto& u = usage[i];
      seconds += u.interval_s;
      for (std::size_t k = 0; k < u.links.size() && k < lines.size(); ++k) {
        weighted[k] += u.interval_s * std::max(u.links[k].utilization_forward,
                                               u.links[k].utilization_backward);
      }
    }
    for (std::size_t k = 0; k < lines.size(); ++k) {
      lines[k].points.emplace_back(usage[last - 1].time_s,
                                   seconds > 0 ? 100.0 * weighted[k] / seconds : 0.0);
    }
  }
  return lines;
}

std::vector<std::pair<double, double>> cdf_points(const std::vector<double>& sorted,
                                                  std::size_t max_points) {
  std::vector<std::pair<double, double>> out;
  const std::size_t n = sorted.size();
  if (n == 0 || max_points == 0) return out;
  const std::size_t stride = std::max<std::size_t>(1, (n + max_points - 1) / max_points);
  for (std::size_t i = 0; i < n; i += stride) {
    out.emplace_back(sorted[i], static_cast<double>(i + 1) / static_cast<double>(n));
  }
  if (out.back().second < 1.0) out.emplace_back(sorted[n - 1], 1.0);
  return out;
}

std::vector<io::StepRecord> thin_steps(const std::vector<io::StepRecord>& steps,
                                       std::size_t max_points) {
  if (steps.size() <= max_points || max_points == 0) return steps;
  const std::size_t stride = (steps.size() + max_points - 1) / max_points;
  std::vector<io::StepRecord> out;
  for (std::size_t i = 0; i < steps.size(); i += stride) out.push_back(steps[i]);
  if ((steps.size() - 1) % stride != 0) out.push_back(steps.back());
  return out;
}

std::vector<QueuePoint> queue_series(const std::vector<io::StepRecord>& steps,
                                     std::size_t max_points) {
  std::map<int, io::StepRecord> latest;
  std::vector<QueuePoint> all;
  all.reserve(steps.size());
  for (const auto& s : steps) {
    latest[s.server] = s;
    QueuePoint p;
    p.time_s = s.time_s;
    for (const auto& [server, rec] : latest) {
      p.running += rec.running;
      p.waiting += rec.waiting;
      p.kv_usage += rec.kv_usage;
    }
    p.kv_usage /= static_cast<double>(latest.size());
    all.push_back(p);
  }
  if (all.size() <= max_points || max_points == 0) return all;
  const std::size_t stride = (all.size() + max_points - 1) / max_points;
  std::vector<QueuePoint> out;
  for (std::size_t i = 0; i < all.size(); i += stride) out.push_back(all[i]);
  if ((all.size() - 1) % stride != 0) out.push_back(all.back());
  return out;
}

std::vector<std::string> parse_values(const std::string& text, bool integer) {
  auto trim = [](const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return std::string();
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
  };
  auto bad = [&text](const std::string& why) {
    return InputError("", 0, 0, "values '" + text + "': " + why);
  };
  std::vector<std::string> out;
  const auto colon = text.find(':');
  if (colon != std::string::npos) {
    const auto colon2 = text.find(':', colon + 1);
    if (colon2 == std::string::npos) throw bad("expected from:to:count");
    double from = 0;
    double to = 0;
    long count = 0;
    try {
      from = std::stod(trim(text.substr(0, colon)));
      to = std::stod(trim(text.substr(colon + 1, colon2 - colon - 1)));
      count = std::stol(trim(text.substr(colon2 + 1)));
    } catch (const std::exception&) {
      throw bad("expected numbers in from:to:count");
    }
    if (count < 1 || count > 100) throw bad("count must be in [1, 100]");
    for (long i = 0; i < count; ++i) {
      const double v =
          count == 1 ? from
                     : from + (to - from) * static_cast<double>(i) / static_cast<double>(count - 1);
      std::ostringstream os;
      if (integer) {
        os << std::llround(v);
      } else {
        os.precision(6);
        os << v;
      }
      if (out.empty() || out.back() != os.str()) out.push_back(os.str());
    }
    return out;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string part =
        trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw bad("no values");
  if (out.size() > 100) throw bad("at most 100 values");
  return out;
}

RunJob single_job(const std::string& text, const std::string& display_name,
                  const scenario::LoadOptions& options, const std::string& label) {
  RunJob job;
  job.label = label;
  job.text = text;
  job.display_name = display_name;
  job.options = options;
  return job;
}

std::vector<RunJob> sweep_jobs(const std::string& text, const std::string& display_name,
                               const scenario::LoadOptions& options, const scenario::Scenario& sc,
                               const std::string& knob, const std::vector<std::string>& values) {
  if (!find_knob(sc, knob))
    throw InputError("", 0, 0, "'" + knob + "' is not a key of this scenario");
  // The knob's value in display units, as the decoder reads it.
  std::vector<double> numbers;
  for (const auto& value : values) {
    scenario::LoadOptions o = options;
    o.overrides.push_back({knob, value});
    const auto with = scenario::load_scenario_text(text, display_name, o);
    const auto k = find_knob(with, knob);
    numbers.push_back(k && k->number ? *k->number : static_cast<double>(numbers.size()));
  }
  std::vector<RunJob> jobs;
  const std::string short_knob =
      knob.substr(knob.rfind('.') == std::string::npos ? 0 : knob.rfind('.') + 1);
  for (const auto& variant : tier_variants(sc)) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      RunJob job = single_job(text, display_name, options,
                              variant.name + ", " + short_knob + "=" + values[i]);
      job.variant = variant.name;
      job.knob_path = knob;
      job.knob_value = values[i];
      job.knob_number = numbers[i];
      for (const auto& o : variant.overrides) job.options.overrides.push_back(o);
      job.options.overrides.push_back({knob, values[i]});
      jobs.push_back(std::move(job));
    }
  }
  return jobs;
}

}  // namespace kvsim::gui
