#include "sim/planner/report_html.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/core/version.hpp"
#include "sim/io/svg_chart.hpp"
#include "sim/io/text_format.hpp"

namespace kvsim::planner {
namespace {

using io::xml_escape;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string unit_of(MetricKind kind) {
  switch (kind) {
    case MetricKind::kTimeMs:
      return "ms";
    case MetricKind::kTimeSec:
      return "s";
    case MetricKind::kBytes:
      return "bytes";
    case MetricKind::kRatio:
      return "ratio";
    case MetricKind::kRate:
      return "per s";
    case MetricKind::kCount:
      return "count";
  }
  return "";
}

std::string cell(const std::string& s) { return "<td>" + xml_escape(s) + "</td>"; }

}  // namespace

void write_plan_html(std::ostream& os, const PlanResult& plan) {
  const bool target = plan.target_load.has_value();
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvsim plan: "
     << xml_escape(plan.scenario_name) << "</title>\n<style>\n"
     << "body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}\n"
     << "table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #bbb;padding:4px "
        "8px;text-align:right}\n"
     << "td:nth-child(2),td:nth-child(3),td:nth-child(4),th{text-align:left}th{background:#eee}\n"
     << ".charts svg{margin:8px 8px 8px 0;border:1px solid "
        "#ddd}\n.note{color:#555;font-size:13px}\n"
     << "</style>\n</head>\n<body>\n";
  os << "<h1>Capacity plan: " << xml_escape(plan.scenario_name) << "</h1>\n";
  os << "<p>SLO <b>" << xml_escape(plan.slo.text()) << "</b>. Load = <b>"
     << xml_escape(plan.knob.name) << "</b> (" << xml_escape(plan.knob.description) << "). "
     << plan.seeds << " seed" << (plan.seeds > 1 ? "s" : "") << " per point, "
     << (plan.aggregate == Aggregate::kMean ? "mean" : "worst") << " over seeds.";
  if (target)
    os << " Target load: <b>" << *plan.target_load
       << "</b>; each option is the cheapest hardware carrying it.";
  os << "</p>\n";

  // The ranked table.
  os << "<h2>Options, ranked</h2>\n<table>\n<tr><th>#</th><th>option</th><th>"
     << (target ? "hardware" : "max " + xml_escape(plan.knob.name))
     << "</th><th>binding constraint</th><th>req/s</th><th>TTFT p90</th><th>TPOT "
        "p90</th><th>$/h</th><th>$/M output "
        "tokens</th><th>users per $/h</th></tr>\n";
  int rank = 0;
  for (const auto& r : plan.options) {
    auto m = [&](const char* key, MetricKind kind) {
      const auto it = r.at_load.metrics.find(key);
      return r.feasible && it != r.at_load.metrics.end() ? format_metric_value(kind, it->second)
                                                         : std::string("-");
    };
    os << "<tr>" << cell(std::to_string(++rank)) << cell(r.variant)
       << cell(target ? r.hardware : (r.feasible ? std::to_string(r.load) : "none"))
       << cell(r.binding.empty() ? "-" : r.binding)
       << cell(m("requests_per_sec", MetricKind::kRate))
       << cell(m("ttft_ms_p90", MetricKind::kTimeMs)) << cell(m("tpot_ms_p90", MetricKind::kTimeMs))
       << cell(io::format_fixed(r.cost.usd_per_hour, 2))
       << cell(r.feasible && std::isfinite(r.usd_per_m_tokens)
                   ? io::format_fixed(r.usd_per_m_tokens, 2)
                   : "-")
       << cell(r.feasible ? io::format_fixed(r.users_per_usd_hour, 1) : "-") << "</tr>\n";
  }
  os << "</table>\n<ul class=\"note\">\n";
  for (const auto& r : plan.options) {
    os << "<li><b>" << xml_escape(r.variant) << "</b>: " << xml_escape(r.description) << ". Cost:";
    for (const auto& [what, usd] : r.cost.items)
      os << ' ' << xml_escape(what) << " $" << io::format_fixed(usd, 3) << "/h;";
    if (!r.search.violations.empty())
      os << " <b>not monotone</b> at some probed loads (simulation noise).";
    os << "</li>\n";
  }
  os << "</ul>\n";

  // Latency (each SLO term's metric) against load, one series per option.
  os << "<h2>" << (target ? "SLO metrics per hardware option" : "SLO metrics against load")
     << "</h2>\n<div class=\"charts\">\n";
  for (const auto& term : plan.slo.terms) {
    if (target) {
      for (const auto& r : plan.options) {
        io::BarChart bc;
        bc.title = r.variant + ": " + term.metric + " at load " + std::to_string(*plan.target_load);
        bc.y_label = term.metric + " (" + unit_of(term.kind) + ")";
        for (std::size_t i = 0; i < r.options.size(); ++i) {
          const auto it = r.options[i].metrics.find(term.metric);
          bc.bars.emplace_back(std::to_string(i + 1),
                               it == r.options[i].metrics.end() ? kNaN : it->second);
        }
        bc.threshold = io::ChartLine{term.threshold, "SLO " + term.text};
        bc.width = 560;
        os << io::render_bar_chart(bc);
      }
      continue;
    }
    io::LineChart lc;
    lc.title = term.metric + " against " + plan.knob.name;
    lc.x_label = plan.knob.name;
    lc.width = 560;
    lc.y_label = term.metric + " (" + unit_of(term.kind) + ")";
    for (const auto& r : plan.options) {
      std::map<std::int64_t, double> points;
      for (const auto& p : r.search.probes) {
        const auto it = p.metrics.find(term.metric);
        if (it != p.metrics.end()) points[p.load] = it->second;
      }
      io::ChartSeries s{r.variant, {}};
      for (const auto& [x, y] : points) s.points.emplace_back(static_cast<double>(x), y);
      lc.series.push_back(std::move(s));
    }
    lc.threshold = io::ChartLine{term.threshold, "SLO " + term.text};
    // Upper bounds: the axis stops at 3x the SLO so the region around it stays readable.
    if (term.upper_bound() && term.threshold > 0) {
      lc.y_max = 3 * term.threshold;
    }
    os << io::render_line_chart(lc);
  }
  os << "</div>\n";
  if (!target) {
    os << "<p class=\"note\">Each point is one probed load (seeds combined). The y axis of an "
          "upper-bound term "
          "stops at 3x its SLO; larger values sit on the top edge as open circles.</p>\n";
  }
  if (target) {
    for (const auto& r : plan.options) {
      os << "<p class=\"note\">" << xml_escape(r.variant) << " options tried, cheapest first:";
      for (std::size_t i = 0; i < r.option_names.size(); ++i) {
        os << ' ' << (i + 1) << ". " << xml_escape(r.option_names[i])
           << (r.options[i].pass() ? " (carries it)" : "") << ';';
      }
      os << "</p>\n";
    }
  }

  // Cost per option.
  os << "<h2>Cost per option</h2>\n<div class=\"charts\">\n";
  io::BarChart per_token;
  per_token.width = 560;
  per_token.title = "Cost per million output tokens";
  per_token.y_label = "$ per M output tokens";
  io::BarChart per_user;
  per_user.width = 560;
  per_user.title = "Users per dollar-hour (" + plan.knob.name + " carried / $ per h)";
  per_user.y_label = plan.knob.name + " per $/h";
  io::BarChart per_hour;
  per_hour.width = 560;
  per_hour.title = "Cost per hour";
  per_hour.y_label = "$ per h";
  for (const auto& r : plan.options) {
    per_token.bars.emplace_back(r.variant, r.feasible ? r.usd_per_m_tokens : kNaN);
    per_user.bars.emplace_back(r.variant, r.feasible ? r.users_per_usd_hour : kNaN);
    per_hour.bars.emplace_back(r.variant, r.cost.usd_per_hour);
  }
  os << io::render_bar_chart(per_token) << io::render_bar_chart(per_user)
     << io::render_bar_chart(per_hour) << "</div>\n";
  os << "<p class=\"note\">$/M output tokens = $/h / (output tokens/s x 3600) x 10<sup>6</sup> at "
        "the option's load; "
        "prices and their sources: scenarios/catalog/costs.yaml (docs/planning.md). kvsim "
     << xml_escape(kVersion) << ".</p>\n</body>\n</html>\n";
}

}  // namespace kvsim::planner
