#include "gui/models/scenario_document.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <exception>
#include <string>
#include <utility>

#include "gui/models/yaml_edit.hpp"
#include "sim/io/atomic_file.hpp"

namespace kvsim::gui {
namespace {

// Decodes `text`; returns the scenario or fills `diags`.
std::optional<scenario::Scenario> try_load(const std::string& text, const std::string& name,
                                           const scenario::LoadOptions& options,
                                           std::vector<Diagnostic>& diags) {
  try {
    return scenario::load_scenario_text(text, name, options);
  } catch (const InputError& e) {
    diags = e.diagnostics();
  } catch (const std::exception& e) {
    diags = {Diagnostic{name, 0, 0, "", e.what()}};
  }
  return std::nullopt;
}

QString first_message(const std::vector<Diagnostic>& diags) {
  if (diags.empty()) return QStringLiteral("invalid value");
  return QString::fromStdString(diags.front().to_string());
}

}  // namespace

ScenarioDocument::ScenarioDocument(QObject* parent) : QObject(parent) {}

std::string ScenarioDocument::display_name() const {
  return path_.isEmpty() ? std::string("untitled.yaml") : path_.toStdString();
}

scenario::LoadOptions ScenarioDocument::load_options(
    std::vector<scenario::Override> overrides) const {
  scenario::LoadOptions o;
  o.overrides = std::move(overrides);
  o.catalog_dir = catalog_dir_;
  o.fast_paths = fast_paths_;
  o.base_dir = path_.isEmpty() ? QDir::currentPath().toStdString()
                               : QFileInfo(path_).absolutePath().toStdString();
  return o;
}

void ScenarioDocument::set_program_options(std::string catalog_dir, bool fast_paths) {
  catalog_dir_ = std::move(catalog_dir);
  fast_paths_ = fast_paths;
}

bool ScenarioDocument::open(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    last_error_ = QStringLiteral("Cannot open %1: %2").arg(path, f.errorString());
    return false;
  }
  const QByteArray bytes = f.readAll();
  path_ = QFileInfo(path).absoluteFilePath();
  text_ = QString::fromUtf8(bytes);
  last_error_.clear();
  decode();
  set_modified(false);
  emit textReplaced();
  return true;
}

bool ScenarioDocument::save(const QString& path) {
  try {
    io::AtomicFile out(path.toStdString());
    out.stream() << text_.toStdString();
    out.commit();
  } catch (const std::exception& e) {
    last_error_ = QString::fromUtf8(e.what());
    return false;
  }
  const bool moved = QFileInfo(path).absoluteFilePath() != path_;
  path_ = QFileInfo(path).absoluteFilePath();
  if (moved) decode();  // relative paths now resolve next to the new file
  set_modified(false);
  return true;
}

void ScenarioDocument::set_text(const QString& text) {
  if (text == text_) return;
  text_ = text;
  decode();
  set_modified(true);
}

bool ScenarioDocument::set_value(const std::string& path, const std::string& value) {
  const std::string old_text = text_.toStdString();
  // What the edit must mean: the current text with the override applied.
  std::vector<Diagnostic> diags;
  const auto wanted = try_load(old_text, display_name(), load_options({{path, value}}), diags);
  if (!wanted) {
    last_error_ = first_message(diags);
    return false;
  }
  std::optional<std::string> edited = set_yaml_value(old_text, path, value);
  bool in_place = false;
  if (edited) {
    std::vector<Diagnostic> ignored;
    const auto got = try_load(*edited, display_name(), load_options(), ignored);
    in_place = got && scenario::scenario_differences(*got, *wanted).empty();
  }
  if (!in_place) edited = scenario::emit_scenario_yaml(*wanted);
  last_in_place_ = in_place;
  last_error_.clear();
  text_ = QString::fromStdString(*edited);
  decode();
  set_modified(true);
  emit textReplaced();
  return true;
}

void ScenarioDocument::decode() {
  diagnostics_.clear();
  scenario_ = try_load(text_.toStdString(), display_name(), load_options(), diagnostics_);
  emit scenarioChanged();
}

void ScenarioDocument::set_modified(bool m) {
  if (m == modified_) return;
  modified_ = m;
  emit modifiedChanged(m);
}

}  // namespace kvsim::gui
