#pragma once
// The scenario editor: the form of knobs (generated from the decoder's field tables) beside the
// YAML text, with the decoder's diagnostics underlined in the text and listed below it.
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace kvsim::gui {

class DiagnosticsModel;
class KnobModel;
class ScenarioDocument;

class EditorView : public QWidget {
  Q_OBJECT

 public:
  EditorView(ScenarioDocument* doc, QWidget* parent = nullptr);
  KnobModel* knob_model() const { return knobs_; }
  QTableView* knob_table() const { return table_; }
  QPlainTextEdit* text_edit() const { return text_; }
  DiagnosticsModel* diagnostics_model() const { return diags_; }
  // Status line above the text: "valid", the first problem, or the last rejected edit.
  QLabel* status_label() const { return status_; }
  // Puts the text cursor on the row-th diagnostic, centred in the view.
  void jump_to_diagnostic(int row);

 private:
  void reload_text();
  void show_diagnostics();
  void apply_filter();

  ScenarioDocument* doc_;
  KnobModel* knobs_;
  QSortFilterProxyModel* proxy_;
  DiagnosticsModel* diags_;
  QTableView* table_;
  QPlainTextEdit* text_;
  QTableView* diag_view_;
  QLabel* status_;
  QLineEdit* filter_;
  QCheckBox* all_keys_;
  QTimer* debounce_;
  bool loading_ = false;
};

}  // namespace kvsim::gui
