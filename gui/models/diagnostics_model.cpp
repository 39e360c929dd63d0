#include "gui/models/diagnostics_model.hpp"

namespace kvsim::gui {

DiagnosticsModel::DiagnosticsModel(QObject* parent) : QAbstractTableModel(parent) {}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(diags_.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Diagnostic& d = diags_[static_cast<std::size_t>(index.row())];
  if (role == Qt::ToolTipRole) return QString::fromStdString(d.to_string());
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kLine:
      return d.line;
    case kColumn:
      return d.column;
    case kPath:
      return QString::fromStdString(d.path);
    case kMessage:
      return QString::fromStdString(d.message);
    default:
      return {};
  }
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kLine:
      return QStringLiteral("Line");
    case kColumn:
      return QStringLiteral("Col");
    case kPath:
      return QStringLiteral("Key");
    case kMessage:
      return QStringLiteral("Problem");
    default:
      return {};
  }
}

void DiagnosticsModel::set_diagnostics(std::vector<Diagnostic> diags) {
  beginResetModel();
  diags_ = std::move(diags);
  endResetModel();
}

}  // namespace kvsim::gui
