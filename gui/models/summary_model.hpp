#pragma once
// The run summary, side by side: one row per figure (with its unit), one column per run. With
// one run it is that run's summary table; with several it is their comparison.
#include <QAbstractTableModel>
#include <vector>

#include "gui/models/run_data.hpp"

namespace kvsim::gui {

class SummaryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit SummaryModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  void set_runs(std::vector<RunPtr> runs);
  const std::vector<RunPtr>& runs() const { return runs_; }

  // Figures in row order: name with unit, and the value of a run (NaN when it has none).
  static int figure_count();
  static QString figure_name(int row);
  static double figure_value(const RunData& run, int row);

 private:
  std::vector<RunPtr> runs_;
};

}  // namespace kvsim::gui
