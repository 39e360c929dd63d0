#pragma once
// The kvsim-gui main window: tabs for the scenario editor, what-if exploration, break-even maps,
// run detail and the results database browser; File and Run menus with the usual shortcuts (Ctrl+O,
// Ctrl+S, Ctrl+R), recent files, export of the current view (PNG, SVG) and table (CSV), and a
// message bar that shows errors without blocking (no modal dialogs on bad input).
#include <QMainWindow>

#include "gui/models/run_data.hpp"

class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;

namespace kvsim::gui {

class EditorView;
class MapView;
class ResultsView;
class RunController;
class RunView;
class ScenarioDocument;
class WhatIfView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Opens a scenario; a file that cannot be read or decoded shows its problem in the message bar
  // (and, for a decoding problem, in the editor). False when the scenario is not usable.
  bool open_scenario(const QString& path);
  // Opens a results database, with `run_keys` only those runs (a map cell's).
  bool open_results(const QString& path, const QStringList& run_keys = {});
  // Opens a map.json from `kvsim map` in the Map tab; false (message bar) when it is unusable.
  bool open_map(const QString& path);
  // Runs the scenario as written (Ctrl+R); false when it cannot start.
  bool run_scenario();
  bool run_whatif();
  // Runs the scenario's KV-tier variants (vram-only, dram, nvme-net) and compares them side by
  // side in the run view.
  bool run_variants();
  // Renders the whole window to PNG or SVG (by extension).
  bool screenshot(const QString& path);
  // "editor", "whatif", "map", "run" or "results"; false for another name.
  bool set_view(const QString& name);
  // Writes the current view as PNG or SVG (by extension) / the current table as CSV.
  bool export_view(const QString& path);
  bool export_table(const QString& path);

  ScenarioDocument* document() const { return doc_; }
  RunController* runner() const { return runner_; }
  EditorView* editor() const { return editor_; }
  WhatIfView* whatif() const { return whatif_; }
  MapView* map_view() const { return map_; }
  RunView* run_view() const { return run_view_; }
  ResultsView* results() const { return results_; }
  QLabel* message_bar() const { return message_; }

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();
  void show_message(const QString& text, bool error);
  void remember_recent(const QString& path);
  void fill_recent_menu();
  void update_title();
  void open_dialog();
  void save_as_dialog();
  void save();
  void export_view_dialog();
  void export_table_dialog();
  void open_results_dialog();
  void open_map_dialog();

  ScenarioDocument* doc_;
  RunController* runner_;
  QTabWidget* tabs_;
  EditorView* editor_;
  WhatIfView* whatif_;
  MapView* map_;
  RunView* run_view_;
  ResultsView* results_;
  QLabel* message_;
  QProgressBar* progress_;
  QMenu* recent_menu_ = nullptr;
  int single_runs_ = 0;
};

}  // namespace kvsim::gui
