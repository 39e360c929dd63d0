#pragma once
// One run in depth, or several side by side: the list of finished runs (tick runs to compare),
// the summary table (one column per run), TTFT and TPOT CDFs, running/waiting requests, the KV
// held on the GPUs and in each offload tier (GB) and the busiest link's utilisation per link kind
// (%) over simulated time, and tokens hit per KV tier.
#include <QWidget>
#include <vector>

#include "gui/models/run_data.hpp"

class QChartView;
class QTableView;

namespace kvsim::gui {

class RunTableModel;
class SummaryModel;

class RunView : public QWidget {
  Q_OBJECT

 public:
  explicit RunView(QWidget* parent = nullptr);

  // Adds a finished run to the list: kNo leaves it unticked, kAlone ticks it alone, kBeside ticks
  // it beside the runs already ticked (a comparison).
  enum class Show { kNo, kAlone, kBeside };
  void add_run(const RunPtr& run, Show show);
  // Shows `run` (adding it when new) ticked alone.
  void open_run(const RunPtr& run);
  RunTableModel* runs_model() const { return runs_; }
  SummaryModel* summary_model() const { return summary_; }
  QTableView* summary_table() const { return summary_view_; }
  QList<QChartView*> charts() const;

 private:
  void redraw();

  RunTableModel* runs_;
  SummaryModel* summary_;
  QTableView* runs_view_;
  QTableView* summary_view_;
  QChartView* ttft_cdf_;
  QChartView* tpot_cdf_;
  QChartView* queues_;
  QChartView* kv_held_;
  QChartView* tier_hits_;
  QChartView* links_;
};

}  // namespace kvsim::gui
