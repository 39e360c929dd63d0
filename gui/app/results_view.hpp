#pragma once
// Browses a planner results database: the runs as a sortable, filterable table and a scatter
// chart of any two numeric columns over the rows the filter keeps. Opened from a map cell, it
// shows only that cell's runs (by run key) until "Show all runs".
#include <QWidget>

class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace kvsim::gui {

class ResultsDbModel;

class ResultsView : public QWidget {
  Q_OBJECT

 public:
  explicit ResultsView(QWidget* parent = nullptr);
  // Opens a database, with `run_keys` only the runs with those keys; on failure the message is
  // shown in the view and false returned.
  bool open(const QString& path, const QStringList& run_keys = {});
  ResultsDbModel* model() const { return model_; }
  QSortFilterProxyModel* filtered() const { return proxy_; }
  QLabel* status_label() const { return status_; }
  QPushButton* show_all_button() const { return show_all_; }
  QChartView* chart() const { return chart_; }

 private:
  void redraw();

  ResultsDbModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QLineEdit* filter_;
  QComboBox* x_;
  QComboBox* y_;
  QLabel* status_;
  QPushButton* show_all_;
  QChartView* chart_;
};

}  // namespace kvsim::gui
