#pragma once
// Finished runs as a table: one row per run with the figures planners compare (requests/s,
// TTFT p50/p90 and TPOT p50 in ms, GPU prefix-cache hit rate in %). Rows can be checked to pick
// runs for the side-by-side comparison. For a what-if sweep it also gives, per tier variant,
// the (knob, metric) points the charts draw.
#include <QAbstractTableModel>
#include <QStringList>
#include <optional>
#include <utility>
#include <vector>

#include "gui/models/run_data.hpp"

namespace kvsim::gui {

enum class Metric {
  kRequestsPerSec,
  kOutputTokensPerSec,
  kTtftP50,
  kTtftP90,
  kTpotP50,
  kTpotP90,
  kHitRate
};
// Name with unit for axes and headers: "TTFT p50 (ms)".
QString metric_label(Metric m);
double metric_value(const RunData& run, Metric m);

class RunTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRun = 0,
    kVariant,
    kKnob,
    kReqPerSec,
    kTtftP50,
    kTtftP90,
    kTpotP50,
    kHitRate,
    kColumnCount
  };
  explicit RunTableModel(bool checkable, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  void add(const RunPtr& run, bool checked = false);
  void clear();
  RunPtr run(int row) const;
  std::vector<RunPtr> checked_runs() const;
  void set_checked(int row, bool checked);
  // The knob these runs vary ("" when none): the header of the knob column.
  void set_knob(const QString& knob) {
    knob_ = knob;
    emit headerDataChanged(Qt::Horizontal, kKnob, kKnob);
  }

  // Tier variants in first-seen order, and per variant the (knob, metric) points sorted by knob.
  QStringList variants() const;
  std::vector<std::pair<double, double>> points(const QString& variant, Metric m) const;
  // The run of `variant` whose knob value is nearest to `x` (a chart click).
  RunPtr nearest(const QString& variant, double x) const;

 signals:
  void checkedChanged();

 private:
  bool checkable_;
  QString knob_;
  std::vector<RunPtr> runs_;
  std::vector<bool> checked_;
};

}  // namespace kvsim::gui
