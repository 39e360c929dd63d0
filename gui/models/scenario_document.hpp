#pragma once
// The scenario being edited: its YAML text (the document), where it lives, and what the text
// means now (the decoded Scenario, or the diagnostics that stop it from decoding). Knob edits
// change the text in place (gui/models/yaml_edit.hpp) so comments and layout survive; an edit
// that cannot be made in place, or whose text would mean something else than the equivalent
// `--set path=value` override, rewrites the document from the decoded scenario instead.
#include <QObject>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"

namespace kvsim::gui {

class ScenarioDocument : public QObject {
  Q_OBJECT

 public:
  explicit ScenarioDocument(QObject* parent = nullptr);

  // Reads a file; false (and last_error()) when it cannot be read. A file that is not a valid
  // scenario still opens: its problems are in diagnostics().
  bool open(const QString& path);
  // Writes the text through kvsim::io::AtomicFile; false (and last_error()) on failure.
  bool save(const QString& path);
  // Replaces the text (the text view calls this as the user types) and decodes it again.
  void set_text(const QString& text);
  // Sets one knob; false (and last_error()) when the value is rejected, the text unchanged.
  bool set_value(const std::string& path, const std::string& value);

  const QString& text() const { return text_; }
  const QString& path() const { return path_; }
  bool modified() const { return modified_; }
  const std::optional<scenario::Scenario>& scenario() const { return scenario_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const QString& last_error() const { return last_error_; }
  // Whether the last set_value() kept the text's comments (edited in place).
  bool last_edit_in_place() const { return last_in_place_; }

  // Name used in diagnostics, and load options whose relative paths resolve next to the file.
  std::string display_name() const;
  scenario::LoadOptions load_options(std::vector<scenario::Override> overrides = {}) const;
  // What the program passes to every load (kvsim-gui's main reads KVSIM_CATALOG_DIR and
  // KVSIM_PLAIN_STEPS): the catalog folder (empty: found next to the scenario) and the engines'
  // fast paths. Set before open().
  void set_program_options(std::string catalog_dir, bool fast_paths);

 signals:
  // The whole text was replaced by open() or set_value(): text views reload it.
  void textReplaced();
  // scenario() and diagnostics() were recomputed.
  void scenarioChanged();
  void modifiedChanged(bool modified);

 private:
  void decode();
  void set_modified(bool m);

  QString text_;
  QString path_;
  bool modified_ = false;
  bool last_in_place_ = true;
  std::string catalog_dir_;
  bool fast_paths_ = true;
  QString last_error_;
  std::optional<scenario::Scenario> scenario_;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace kvsim::gui
