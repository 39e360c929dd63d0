#include "gui/models/results_db_model.hpp"

#include <string>
#include <vector>

#include "sim/planner/results_db.hpp"

namespace kvsim::gui {
namespace {

QVariant cell(const planner::DbValue& v) {
  switch (v.kind) {
    case planner::DbValue::Kind::kInt:
      return QVariant(static_cast<qlonglong>(v.i));
    case planner::DbValue::Kind::kReal:
      return QVariant(v.d);
    case planner::DbValue::Kind::kText:
      return QVariant(QString::fromStdString(v.text));
    case planner::DbValue::Kind::kNull:
      return {};
    case planner::DbValue::Kind::kBlob:
      break;
  }
  return QVariant(QStringLiteral("<blob>"));
}

}  // namespace

ResultsDbModel::ResultsDbModel(QObject* parent) : QAbstractTableModel(parent) {}

void ResultsDbModel::open(const QString& path, const QStringList& run_keys) {
  planner::RunQuery query;
  query.omit_columns = {"scenario_yaml"};  // wide text (the resolved YAML) stays out of the table
  if (!run_keys.isEmpty()) {
    std::vector<std::string> keys;
    keys.reserve(static_cast<std::size_t>(run_keys.size()));
    for (const QString& k : run_keys) keys.push_back(k.toStdString());
    query.run_keys = std::move(keys);
  }
  const planner::RunTable table =
      planner::ResultsDb(path.toStdString(), planner::ResultsDb::Mode::kReadOnly).runs(query);
  QStringList names;
  for (const auto& c : table.columns) names << QString::fromStdString(c);
  std::vector<std::vector<QVariant>> rows;
  rows.reserve(table.rows.size());
  for (const auto& r : table.rows) {
    std::vector<QVariant> row;
    row.reserve(r.size());
    for (const auto& v : r) row.push_back(cell(v));
    rows.push_back(std::move(row));
  }
  beginResetModel();
  path_ = path;
  run_keys_ = run_keys;
  columns_ = names;
  rows_ = std::move(rows);
  endResetModel();
}

int ResultsDbModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ResultsDbModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(columns_.size());
}

QVariant ResultsDbModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  const QVariant& v =
      rows_[static_cast<std::size_t>(index.row())][static_cast<std::size_t>(index.column())];
  if (role == Qt::EditRole) return v;
  if (role == Qt::DisplayRole) {
    if (v.typeId() == QMetaType::Double) return QString::number(v.toDouble(), 'g', 6);
    return v;
  }
  if (role == Qt::TextAlignmentRole &&
      (v.typeId() == QMetaType::Double || v.typeId() == QMetaType::LongLong)) {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant ResultsDbModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 ||
      section >= columnCount())
    return {};
  return columns_[section];
}

QStringList ResultsDbModel::numeric_columns() const {
  QStringList out;
  for (int c = 0; c < columns_.size(); ++c) {
    bool numeric = false;
    bool other = false;
    for (const auto& row : rows_) {
      const QVariant& v = row[static_cast<std::size_t>(c)];
      if (v.isNull()) continue;
      if (v.typeId() == QMetaType::Double || v.typeId() == QMetaType::LongLong) {
        numeric = true;
      } else {
        other = true;
      }
    }
    if (numeric && !other) out << columns_[c];
  }
  return out;
}

}  // namespace kvsim::gui
