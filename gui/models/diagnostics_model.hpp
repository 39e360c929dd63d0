#pragma once
// The decoder's diagnostics for the YAML text view: one row per problem with its line and
// column (1-based; 0 when unknown), the dotted key path and the message.
#include <QAbstractTableModel>
#include <vector>

#include "sim/core/error.hpp"

namespace kvsim::gui {

class DiagnosticsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kLine = 0, kColumn, kPath, kMessage, kColumnCount };
  explicit DiagnosticsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  void set_diagnostics(std::vector<Diagnostic> diags);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace kvsim::gui
