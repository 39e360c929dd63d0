#include "gui/models/results_db_model.hpp"

#include <sqlite3.h>

#include <QFileInfo>
#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "sim/core/error.hpp"

namespace kvsim::gui {
namespace {

// PRAGMA application_id of a kvsim results database: "kvsm" in ASCII (sim/planner/results_db.hpp).
constexpr std::int64_t kKvsimApplicationId = 0x6B76736D;

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

[[noreturn]] void fail(const QString& path, const std::string& message) {
  throw InputError(path.toStdString(), 0, 0, message);
}

Stmt prepare(sqlite3* db, const QString& path, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr);
  Stmt s(raw);
  if (rc != SQLITE_OK) {
    if (rc == SQLITE_NOTADB)
      fail(path, "not a kvsim results database: the file is not an SQLite database");
    fail(path, std::string("cannot read the database: ") + sqlite3_errmsg(db));
  }
  return s;
}

std::vector<std::string> table_columns(sqlite3* db, const QString& path, const std::string& table) {
  std::vector<std::string> cols;
  const Stmt s = prepare(db, path, "PRAGMA table_info(" + table + ")");
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    cols.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1)));
  }
  return cols;
}

QVariant cell(sqlite3_stmt* s, int c) {
  switch (sqlite3_column_type(s, c)) {
    case SQLITE_INTEGER:
      return QVariant(static_cast<qlonglong>(sqlite3_column_int64(s, c)));
    case SQLITE_FLOAT:
      return QVariant(sqlite3_column_double(s, c));
    case SQLITE_TEXT:
      return QVariant(QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(s, c))));
    case SQLITE_NULL:
      return {};
    default:
      return QVariant(QStringLiteral("<blob>"));
  }
}

}  // namespace

ResultsDbModel::ResultsDbModel(QObject* parent) : QAbstractTableModel(parent) {}

void ResultsDbModel::open(const QString& path, const QStringList& run_keys) {
  if (!QFileInfo(path).isFile()) fail(path, "no such file");
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK)
    fail(path,
         std::string("cannot open: ") + (raw != nullptr ? sqlite3_errmsg(raw) : "out of memory"));
  std::int64_t app_id = 0;
  {
    const Stmt s = prepare(db.get(), path, "PRAGMA application_id");
    const int step = sqlite3_step(s.get());
    if (step == SQLITE_NOTADB)
      fail(path, "not a kvsim results database: the file is not an SQLite database");
    if (step == SQLITE_ROW) app_id = sqlite3_column_int64(s.get(), 0);
  }
  if (app_id != kKvsimApplicationId) {
    fail(
        path,
        "not a kvsim results database: an SQLite database of another application (application_id " +
            std::to_string(app_id) + "; `kvsim sweep` writes the databases this view opens)");
  }
  const auto run_cols = table_columns(db.get(), path, "runs");
  if (run_cols.empty()) fail(path, "not a kvsim results database: it has no runs table");
  const auto sum_cols = table_columns(db.get(), path, "summaries");
  // The runs table's key, and the summaries' column that refers to it.
  std::string run_key = "run_id";
  bool has_run_id = false;
  for (const auto& c : run_cols) has_run_id = has_run_id || c == "run_id";
  if (!has_run_id) run_key = "id";
  bool join = false;
  for (const auto& c : sum_cols) join = join || c == "run_id";
  // Wide text columns (the resolved YAML) are left out of the table.
  const std::set<std::string> skip = {"scenario_yaml"};
  std::string select;
  QStringList names;
  for (const auto& c : run_cols) {
    if (skip.count(c) != 0) continue;
    select += std::string(select.empty() ? "" : ", ") + "r.\"" + c + "\"";
    names << QString::fromStdString(c);
  }
  if (join) {
    for (const auto& c : sum_cols) {
      if (c == "run_id" || names.contains(QString::fromStdString(c))) continue;
      select += ", s.\"" + c + "\"";
      names << QString::fromStdString(c);
    }
  }
  std::string sql = "SELECT " + select + " FROM runs r";
  if (join) sql += " LEFT JOIN summaries s ON s.run_id = r.\"" + run_key + "\"";
  if (!run_keys.isEmpty()) {
    if (std::find(run_cols.begin(), run_cols.end(), "run_key") == run_cols.end())
      fail(path, "cannot filter by run key: the runs table has no run_key column");
    sql += " WHERE r.\"run_key\" IN (?";
    for (qsizetype k = 1; k < run_keys.size(); ++k) sql += ", ?";
    sql += ")";
  }
  sql += " ORDER BY r.rowid";
  std::vector<std::vector<QVariant>> rows;
  {
    const Stmt s = prepare(db.get(), path, sql);
    for (qsizetype k = 0; k < run_keys.size(); ++k) {
      const QByteArray key = run_keys[k].toUtf8();
      if (sqlite3_bind_text(s.get(), static_cast<int>(k + 1), key.constData(),
                            static_cast<int>(key.size()), SQLITE_TRANSIENT) != SQLITE_OK)
        fail(path, std::string("cannot filter by run key: ") + sqlite3_errmsg(db.get()));
    }
    int step = 0;
    while ((step = sqlite3_step(s.get())) == SQLITE_ROW) {
      std::vector<QVariant> row;
      row.reserve(static_cast<std::size_t>(names.size()));
      for (int c = 0; c < names.size(); ++c) row.push_back(cell(s.get(), c));
      rows.push_back(std::move(row));
    }
    if (step != SQLITE_DONE)
      fail(path, std::string("cannot read the runs: ") + sqlite3_errmsg(db.get()));
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
