#include "gui/app/run_view.hpp"

#include <QChartView>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/app/chart_util.hpp"
#include "gui/models/run_table_model.hpp"
#include "gui/models/summary_model.hpp"

namespace kvsim::gui {
namespace {

const QString kWaitingSuffix = QStringLiteral(" waiting");
const QString kOffloadSuffix = QStringLiteral(" offload");
// Points of the link lines: each the mean over ~1/200 of the run, so bursts of a few seconds
// average out instead of filling the chart.
constexpr std::size_t kLinkPoints = 200;

}  // namespace

RunView::RunView(QWidget* parent)
    : QWidget(parent),
      runs_(new RunTableModel(true, this)),
      summary_(new SummaryModel(this)),
      runs_view_(new QTableView(this)),
      summary_view_(new QTableView(this)),
      ttft_cdf_(make_chart_view(QStringLiteral("TTFT distribution"), this)),
      tpot_cdf_(make_chart_view(QStringLiteral("TPOT distribution"), this)),
      queues_(make_chart_view(QStringLiteral("Requests running and waiting"), this)),
      kv_held_(make_chart_view(QStringLiteral("KV cache held per tier"), this)),
      tier_hits_(make_chart_view(QStringLiteral("Prompt tokens hit per KV tier"), this)),
      links_(make_chart_view(QStringLiteral("Link utilisation (busiest link per kind)"), this)) {
  ttft_cdf_->setObjectName(QStringLiteral("run_ttft_cdf"));
  tpot_cdf_->setObjectName(QStringLiteral("run_tpot_cdf"));
  queues_->setObjectName(QStringLiteral("run_queues"));
  kv_held_->setObjectName(QStringLiteral("run_kv_held"));
  tier_hits_->setObjectName(QStringLiteral("run_tier_hits"));
  links_->setObjectName(QStringLiteral("run_links"));

  runs_view_->setModel(runs_);
  runs_view_->verticalHeader()->hide();
  runs_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runs_view_->setColumnWidth(RunTableModel::kRun, 200);
  runs_view_->setWordWrap(false);
  runs_view_->verticalHeader()->setDefaultSectionSize(21);
  runs_view_->horizontalHeader()->setStretchLastSection(true);
  summary_view_->setObjectName(QStringLiteral("run_summary"));
  summary_view_->setModel(summary_);
  summary_view_->verticalHeader()->setDefaultSectionSize(21);
  summary_view_->horizontalHeader()->setDefaultSectionSize(96);
  summary_view_->setWordWrap(false);

  auto* left = new QWidget(this);
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->addWidget(
      new QLabel(QStringLiteral("<b>Runs</b> &mdash; tick two or more to compare"), left));
  ll->addWidget(runs_view_, 1);
  ll->addWidget(new QLabel(QStringLiteral("<b>Summary</b>"), left));
  ll->addWidget(summary_view_, 3);

  auto* grid_host = new QWidget(this);
  auto* grid = new QGridLayout(grid_host);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(4);
  grid->addWidget(ttft_cdf_, 0, 0);
  grid->addWidget(tpot_cdf_, 0, 1);
  grid->addWidget(queues_, 1, 0);
  grid->addWidget(tier_hits_, 1, 1);
  grid->addWidget(kv_held_, 2, 0);
  grid->addWidget(links_, 2, 1);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(grid_host);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 5);
  split->setSizes({520, 900});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(split);

  connect(runs_, &RunTableModel::checkedChanged, this, &RunView::redraw);
  redraw();
}

QList<QChartView*> RunView::charts() const {
  return {ttft_cdf_, tpot_cdf_, queues_, kv_held_, tier_hits_, links_};
}

void RunView::add_run(const RunPtr& run, Show show) {
  if (show == Show::kAlone) {
    for (int r = 0; r < runs_->rowCount(); ++r) runs_->set_checked(r, false);
  }
  runs_->add(run, show != Show::kNo);
}

void RunView::open_run(const RunPtr& run) {
  int found = -1;
  for (int r = 0; r < runs_->rowCount(); ++r) {
    if (runs_->run(r) == run) found = r;
  }
  if (found < 0) {
    add_run(run, Show::kAlone);
    return;
  }
  for (int r = 0; r < runs_->rowCount(); ++r) runs_->set_checked(r, r == found);
}

void RunView::redraw() {
  const auto runs = runs_->checked_runs();
  summary_->set_runs(runs);
  // Columns as wide as their run's label (within reason), so the labels are not clipped.
  for (int c = 0; c < summary_->columnCount(); ++c) {
    const int want = summary_view_->horizontalHeader()->sectionSizeHint(c);
    summary_view_->setColumnWidth(c, std::clamp(want + 8, 96, 220));
  }
  std::vector<LineData> ttft;
  std::vector<LineData> tpot;
  std::vector<LineData> queues;
  std::vector<LineData> held;
  std::vector<LineData> links;
  const bool one = runs.size() == 1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunData& r = *runs[i];
    const QString name = QString::fromStdString(r.job.label);
    const QColor color = series_color(static_cast<int>(i));
    ttft.push_back({name, cdf_points(r.ttft_ms), color, false, false});
    tpot.push_back({name, cdf_points(r.tpot_ms), color, false, false});
    const auto series = queue_series(r.steps);
    // One run: running and waiting in two colours. Several: one colour per run, waiting dashed
    // and left out of the legend (the title says so).
    LineData running{one ? QStringLiteral("running") : name, {}, color, false, false};
    LineData waiting{one ? QStringLiteral("waiting") : name + kWaitingSuffix,
                     {},
                     one ? series_color(1) : color,
                     !one,
                     false};
    for (const auto& p : series) {
      running.points.emplace_back(p.time_s, p.running);
      waiting.points.emplace_back(p.time_s, p.waiting);
    }
    queues.push_back(std::move(running));
    queues.push_back(std::move(waiting));
    // KV held and link load. One run: a line per tier kind (the GPU first) and per link kind.
    // Several: per run the GPU (solid, in the legend) and its offload tiers together (dashed,
    // left out of the legend), and the busiest link of any kind.
    const auto tier_lines = tier_usage_lines(r.usage);
    const auto link_lines = link_usage_lines(r.usage, kLinkPoints);
    if (one) {
      for (std::size_t k = 0; k < tier_lines.size(); ++k) {
        held.push_back({QString::fromStdString(tier_lines[k].name), tier_lines[k].points,
                        series_color(static_cast<int>(k)), false, false});
      }
      for (std::size_t k = 0; k < link_lines.size(); ++k) {
        links.push_back({QString::fromStdString(link_lines[k].name), link_lines[k].points,
                         series_color(static_cast<int>(k)), false, false});
      }
      continue;
    }
    if (!tier_lines.empty()) held.push_back({name, tier_lines[0].points, color, false, false});
    if (tier_lines.size() > 1) {
      LineData offload{name + kOffloadSuffix, tier_lines[1].points, color, true, false};
      for (std::size_t k = 2; k < tier_lines.size(); ++k) {
        for (std::size_t j = 0; j < offload.points.size() && j < tier_lines[k].points.size(); ++j)
          offload.points[j].second += tier_lines[k].points[j].second;
      }
      held.push_back(std::move(offload));
    }
    if (!link_lines.empty()) {
      LineData busiest{name, link_lines[0].points, color, false, false};
      for (std::size_t k = 1; k < link_lines.size(); ++k) {
        for (std::size_t j = 0; j < busiest.points.size() && j < link_lines[k].points.size(); ++j)
          busiest.points[j].second = std::max(busiest.points[j].second, link_lines[k].points[j].second);
      }
      links.push_back(std::move(busiest));
    }
  }
  set_lines(ttft_cdf_, ttft, QStringLiteral("TTFT (ms)"), QStringLiteral("Fraction of requests"),
            0.0, 1.0);
  set_lines(tpot_cdf_, tpot, QStringLiteral("TPOT (ms)"), QStringLiteral("Fraction of requests"),
            0.0, 1.0);
  set_lines(queues_, queues, QStringLiteral("Simulated time (s)"), QStringLiteral("Requests"));
  queues_->chart()->setTitle(one || runs.empty()
                                 ? QStringLiteral("Requests running and waiting")
                                 : QStringLiteral("Requests running (solid) and waiting (dashed)"));
  for (QAbstractSeries* s : queues_->chart()->series()) {
    if (!s->name().endsWith(kWaitingSuffix)) continue;
    for (QLegendMarker* m : queues_->chart()->legend()->markers(s)) m->setVisible(false);
  }
  set_lines(kv_held_, held, QStringLiteral("Simulated time (s)"), QStringLiteral("KV held (GB)"));
  kv_held_->chart()->setTitle(one || runs.empty()
                                  ? QStringLiteral("KV cache held per tier")
                                  : QStringLiteral("KV held on GPUs (solid) and offload tiers (dashed)"));
  for (QAbstractSeries* s : kv_held_->chart()->series()) {
    if (!s->name().endsWith(kOffloadSuffix)) continue;
    for (QLegendMarker* m : kv_held_->chart()->legend()->markers(s)) m->setVisible(false);
  }
  set_lines(links_, links, QStringLiteral("Simulated time (s)"), QStringLiteral("Utilisation (%)"),
            0.0);
  if (!runs.empty() && links.empty()) {
    links_->chart()->setTitle(QStringLiteral("Link utilisation: no offload tier, no KV traffic"));
  } else if (one || runs.empty()) {
    links_->chart()->setTitle(QStringLiteral("Link utilisation (busiest link per kind)"));
  } else {
    links_->chart()->setTitle(QStringLiteral("Link utilisation (busiest link of any kind)"));
  }

  // Tokens hit per tier: the GPU prefix cache, then each offload tier kind in the runs.
  QStringList tiers{QStringLiteral("gpu")};
  for (const auto& r : runs) {
    for (const auto& t : r->info.tiers) {
      const auto k = QString::fromStdString(t.kind);
      if (!tiers.contains(k)) tiers << k;
    }
  }
  std::vector<BarSetData> hit_sets;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunData& r = *runs[i];
    BarSetData hits{QString::fromStdString(r.job.label),
                    std::vector<double>(static_cast<std::size_t>(tiers.size()), 0.0),
                    series_color(static_cast<int>(i))};
    hits.values[0] = static_cast<double>(r.info.prefix_cache_hits) / 1e3;
    for (const auto& t : r.info.tiers) {
      hits.values[static_cast<std::size_t>(tiers.indexOf(QString::fromStdString(t.kind)))] +=
          static_cast<double>(t.hit_tokens) / 1e3;
    }
    hit_sets.push_back(std::move(hits));
  }
  set_bars(tier_hits_, tiers, hit_sets, QStringLiteral("Tokens hit (thousands)"));
}

}  // namespace kvsim::gui
