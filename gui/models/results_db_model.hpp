#pragma once
// A planner results database (schema: sim/planner/results_db.hpp) as a read-only table: one row
// per run, the runs table's columns followed by the run's summary figures, read through
// planner::ResultsDb::runs (the database opened kReadOnly). The file must carry kvsim's PRAGMA
// application_id ("kvsm"); anything else is refused with a message that says what the file is.
#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <QVariant>
#include <vector>

namespace kvsim::gui {

class ResultsDbModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit ResultsDbModel(QObject* parent = nullptr);

  // Loads every run of the database, or with `run_keys` only the runs with those keys (a map
  // cell's runs; the filter is part of the query); throws InputError naming the file when it is
  // not a readable kvsim results database. The model is unchanged on failure.
  void open(const QString& path, const QStringList& run_keys = {});
  const QString& path() const { return path_; }
  // The run keys the rows are filtered to; empty when every run is shown.
  const QStringList& run_key_filter() const { return run_keys_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  const QStringList& column_names() const { return columns_; }
  // Columns whose non-null values are all numbers (chart axes).
  QStringList numeric_columns() const;
  int column_index(const QString& name) const { return static_cast<int>(columns_.indexOf(name)); }

 private:
  QString path_;
  QStringList run_keys_;
  QStringList columns_;
  std::vector<std::vector<QVariant>> rows_;
};

}  // namespace kvsim::gui
