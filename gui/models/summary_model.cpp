#include "gui/models/summary_model.hpp"

#include <QLocale>
#include <array>
#include <cmath>
#include <functional>
#include <limits>

namespace kvsim::gui {
namespace {

struct Figure {
  const char* name;
  int decimals;
  std::function<double(const RunData&)> value;
};

double tier_sum(const RunData& r, std::int64_t io::TierInfo::*m) {
  double s = 0;
  for (const auto& t : r.info.tiers) s += static_cast<double>(t.*m);
  return s;
}

const std::vector<Figure>& figures() {
  static const std::vector<Figure> f = {
      {"Requests (kept samples)", 0,
       [](const RunData& r) { return static_cast<double>(r.summary.num_requests); }},
      {"Runtime (s)", 3, [](const RunData& r) { return r.summary.runtime_sec; }},
      {"Requests/s (1/s)", 3, [](const RunData& r) { return r.summary.requests_per_sec; }},
      {"Output tokens/s (1/s)", 1,
       [](const RunData& r) { return r.summary.output_tokens_per_sec; }},
      {"TTFT mean (ms)", 2, [](const RunData& r) { return r.summary.ttft_ms.mean; }},
      {"TTFT p50 (ms)", 2, [](const RunData& r) { return r.summary.ttft_ms.percentile(0.5); }},
      {"TTFT p90 (ms)", 2, [](const RunData& r) { return r.summary.ttft_ms.percentile(0.9); }},
      {"TTFT p99 (ms)", 2, [](const RunData& r) { return r.summary.ttft_ms.percentile(0.99); }},
      {"TPOT mean (ms)", 2, [](const RunData& r) { return r.summary.tpot_ms.mean; }},
      {"TPOT p50 (ms)", 2, [](const RunData& r) { return r.summary.tpot_ms.percentile(0.5); }},
      {"TPOT p90 (ms)", 2, [](const RunData& r) { return r.summary.tpot_ms.percentile(0.9); }},
      {"Latency mean (ms)", 1, [](const RunData& r) { return r.summary.latency_ms.mean; }},
      {"Prefix-cache hit rate (%)", 1,
       [](const RunData& r) { return 100.0 * r.summary.prefix_cache_hit_rate; }},
      {"Tokens loaded from offload tiers", 0,
       [](const RunData& r) { return static_cast<double>(r.info.external_hit_tokens); }},
      {"Offload tier reads (GiB)", 2,
       [](const RunData& r) {
         return tier_sum(r, &io::TierInfo::bytes_read) / (1024.0 * 1024.0 * 1024.0);
       }},
      {"Offload tier writes (GiB)", 2,
       [](const RunData& r) {
         return tier_sum(r, &io::TierInfo::bytes_written) / (1024.0 * 1024.0 * 1024.0);
       }},
      {"Preemptions", 0,
       [](const RunData& r) { return static_cast<double>(r.summary.preemptions); }},
      {"Failed requests", 0,
       [](const RunData& r) { return static_cast<double>(r.summary.failed_requests); }},
      {"GPU KV cache per engine (tokens)", 0,
       [](const RunData& r) { return static_cast<double>(r.summary.gpu_kv_cache_tokens); }},
      {"Engines", 0, [](const RunData& r) { return static_cast<double>(r.summary.num_engines); }},
      {"Engine steps", 0,
       [](const RunData& r) { return static_cast<double>(r.summary.engine_steps); }},
      {"Simulated time (s)", 3, [](const RunData& r) { return r.summary.simulated_seconds; }},
  };
  return f;
}

}  // namespace

SummaryModel::SummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

int SummaryModel::figure_count() { return static_cast<int>(figures().size()); }

QString SummaryModel::figure_name(int row) {
  return QString::fromUtf8(figures()[static_cast<std::size_t>(row)].name);
}

double SummaryModel::figure_value(const RunData& run, int row) {
  return figures()[static_cast<std::size_t>(row)].value(run);
}

int SummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : figure_count();
}

int SummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  const double v = figure_value(*runs_[static_cast<std::size_t>(index.column())], index.row());
  if (role == Qt::EditRole) return v;
  if (std::isnan(v)) return QStringLiteral("-");
  return QLocale().toString(v, 'f', figures()[static_cast<std::size_t>(index.row())].decimals);
}

QVariant SummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) {
    return section >= 0 && section < figure_count() ? figure_name(section) : QVariant();
  }
  if (section < 0 || section >= columnCount()) return {};
  return QString::fromStdString(runs_[static_cast<std::size_t>(section)]->job.label);
}

void SummaryModel::set_runs(std::vector<RunPtr> runs) {
  beginResetModel();
  runs_ = std::move(runs);
  endResetModel();
}

}  // namespace kvsim::gui
