#pragma once
// What-if exploration: pick one knob and its values; every tier variant runs at every value in
// the background, and four charts draw requests/s, TTFT p50, TTFT p90 and TPOT p50 against the
// knob, one line per variant, with the SLO as a dashed line. Hover shows a point's values; a
// click opens that run in the run view.
#include <QWidget>

#include "gui/models/run_data.hpp"

class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableView;

namespace kvsim::gui {

class KnobModel;
class RunController;
class RunTableModel;
class ScenarioDocument;

class WhatIfView : public QWidget {
  Q_OBJECT

 public:
  WhatIfView(ScenarioDocument* doc, KnobModel* knobs, RunController* runner,
             QWidget* parent = nullptr);

  // Chooses the knob (a dotted path) and the values text; false when the scenario has no such
  // numeric knob.
  bool set_knob(const QString& path, const QString& values = {});
  // Starts the sweep; false (with a message in the status line) when it cannot start.
  bool start();
  RunTableModel* model() const { return model_; }
  QChartView* chart(int i) const { return charts_[i]; }
  QLabel* status_label() const { return status_; }
  QList<QChartView*> charts() const { return {charts_[0], charts_[1], charts_[2], charts_[3]}; }

 signals:
  void openRun(kvsim::gui::RunPtr run);

 private:
  void refill_knobs();
  void suggest_values();
  void redraw();
  void on_run(const RunPtr& run, const QString& tag);

  ScenarioDocument* doc_;
  KnobModel* knobs_;
  RunController* runner_;
  RunTableModel* model_;
  QComboBox* knob_;
  QLineEdit* values_;
  QDoubleSpinBox* slo_ttft_;
  QDoubleSpinBox* slo_tpot_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QChartView* charts_[4];
  QTableView* table_;
  QString sweep_knob_;
};

}  // namespace kvsim::gui
