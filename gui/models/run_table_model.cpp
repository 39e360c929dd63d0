#include "gui/models/run_table_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvsim::gui {

QString metric_label(Metric m) {
  switch (m) {
    case Metric::kRequestsPerSec:
      return QStringLiteral("Requests/s (1/s)");
    case Metric::kOutputTokensPerSec:
      return QStringLiteral("Output tokens/s (1/s)");
    case Metric::kTtftP50:
      return QStringLiteral("TTFT p50 (ms)");
    case Metric::kTtftP90:
      return QStringLiteral("TTFT p90 (ms)");
    case Metric::kTpotP50:
      return QStringLiteral("TPOT p50 (ms)");
    case Metric::kTpotP90:
      return QStringLiteral("TPOT p90 (ms)");
    case Metric::kHitRate:
      return QStringLiteral("Prefix-cache hit rate (%)");
  }
  return {};
}

double metric_value(const RunData& run, Metric m) {
  const auto& s = run.summary;
  switch (m) {
    case Metric::kRequestsPerSec:
      return s.requests_per_sec;
    case Metric::kOutputTokensPerSec:
      return s.output_tokens_per_sec;
    case Metric::kTtftP50:
      return s.ttft_ms.percentile(0.5);
    case Metric::kTtftP90:
      return s.ttft_ms.percentile(0.9);
    case Metric::kTpotP50:
      return s.tpot_ms.percentile(0.5);
    case Metric::kTpotP90:
      return s.tpot_ms.percentile(0.9);
    case Metric::kHitRate:
      return 100.0 * s.prefix_cache_hit_rate;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

RunTableModel::RunTableModel(bool checkable, QObject* parent)
    : QAbstractTableModel(parent), checkable_(checkable) {}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const auto row = static_cast<std::size_t>(index.row());
  const RunData& r = *runs_[row];
  if (role == Qt::CheckStateRole && checkable_ && index.column() == kRun) {
    return checked_[row] ? Qt::Checked : Qt::Unchecked;
  }
  auto number = [role](double v, int decimals) -> QVariant {
    if (std::isnan(v)) return role == Qt::DisplayRole ? QVariant(QStringLiteral("-")) : QVariant();
    return role == Qt::DisplayRole ? QVariant(QString::number(v, 'f', decimals)) : QVariant(v);
  };
  if (role == Qt::TextAlignmentRole) {
    return index.column() >= kReqPerSec ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
  }
  if (role == Qt::ToolTipRole && index.column() == kRun) {
    return QString::fromStdString(r.job.label + "\n" + r.info.scenario_name);
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  switch (index.column()) {
    case kRun:
      return QString::fromStdString(r.job.label);
    case kVariant:
      return QString::fromStdString(r.job.variant.empty() ? std::string("as written")
                                                          : r.job.variant);
    case kKnob:
      return QString::fromStdString(r.job.knob_value);
    case kReqPerSec:
      return number(metric_value(r, Metric::kRequestsPerSec), 3);
    case kTtftP50:
      return number(metric_value(r, Metric::kTtftP50), 1);
    case kTtftP90:
      return number(metric_value(r, Metric::kTtftP90), 1);
    case kTpotP50:
      return number(metric_value(r, Metric::kTpotP50), 2);
    case kHitRate:
      return number(metric_value(r, Metric::kHitRate), 1);
    default:
      return {};
  }
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kRun:
      return QStringLiteral("Run");
    case kVariant:
      return QStringLiteral("Tier variant");
    case kKnob:
      return knob_.isEmpty() ? QStringLiteral("Knob value") : knob_;
    case kReqPerSec:
      return QStringLiteral("Req/s");
    case kTtftP50:
      return QStringLiteral("TTFT p50 (ms)");
    case kTtftP90:
      return QStringLiteral("TTFT p90 (ms)");
    case kTpotP50:
      return QStringLiteral("TPOT p50 (ms)");
    case kHitRate:
      return QStringLiteral("Hit rate (%)");
    default:
      return {};
  }
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
  if (checkable_ && index.column() == kRun) f |= Qt::ItemIsUserCheckable;
  return f;
}

bool RunTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!checkable_ || role != Qt::CheckStateRole || !index.isValid() || index.column() != kRun)
    return false;
  set_checked(index.row(), value.toInt() == Qt::Checked);
  return true;
}

void RunTableModel::set_checked(int row, bool checked) {
  if (row < 0 || row >= rowCount()) return;
  const auto r = static_cast<std::size_t>(row);
  if (checked_[r] == checked) return;
  checked_[r] = checked;
  emit dataChanged(index(row, kRun), index(row, kRun), {Qt::CheckStateRole});
  emit checkedChanged();
}

void RunTableModel::add(const RunPtr& run, bool checked) {
  const int row = rowCount();
  beginInsertRows({}, row, row);
  runs_.push_back(run);
  checked_.push_back(checked);
  endInsertRows();
  if (checked) emit checkedChanged();
}

void RunTableModel::clear() {
  if (runs_.empty()) return;
  beginResetModel();
  runs_.clear();
  checked_.clear();
  endResetModel();
  emit checkedChanged();
}

RunPtr RunTableModel::run(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  return runs_[static_cast<std::size_t>(row)];
}

std::vector<RunPtr> RunTableModel::checked_runs() const {
  std::vector<RunPtr> out;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    if (checked_[i]) out.push_back(runs_[i]);
  }
  return out;
}

QStringList RunTableModel::variants() const {
  QStringList out;
  for (const auto& r : runs_) {
    const auto v = QString::fromStdString(r->job.variant);
    if (!out.contains(v)) out << v;
  }
  return out;
}

std::vector<std::pair<double, double>> RunTableModel::points(const QString& variant,
                                                             Metric m) const {
  std::vector<std::pair<double, double>> out;
  const std::string v = variant.toStdString();
  for (const auto& r : runs_) {
    if (r->job.variant != v) continue;
    const double y = metric_value(*r, m);
    if (!std::isnan(y)) out.emplace_back(r->job.knob_number, y);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

RunPtr RunTableModel::nearest(const QString& variant, double x) const {
  RunPtr best;
  double best_d = std::numeric_limits<double>::infinity();
  const std::string v = variant.toStdString();
  for (const auto& r : runs_) {
    if (r->job.variant != v) continue;
    const double d = std::abs(r->job.knob_number - x);
    if (d < best_d) {
      best_d = d;
      best = r;
    }
  }
  return best;
}

}  // namespace kvsim::gui
