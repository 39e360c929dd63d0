#pragma once
// Browses a planner results database: the runs as a sortable, filterable table and a scatter
// chart of any two numeric columns over the rows the filter keeps.
#include <QWidget>

class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace kvsim::gui {

class ResultsDbModel;

class ResultsView : public QWidget {
  Q_OBJECT

 public:
  explicit ResultsView(QWidget* parent = nullptr);
  // Opens a database; on failure the message is shown in the view and false returned.
  bool open(const QString& path);
  ResultsDbModel* model() const { return model_; }
  QSortFilterProxyModel* filtered() const { return proxy_; }
  QLabel* status_label() const { return status_; }
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
  QChartView* chart_;
};

}  // namespace kvsim::gui
