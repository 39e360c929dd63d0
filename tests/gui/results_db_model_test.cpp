// The results database browser: a kvsim database (PRAGMA application_id "kvsm") is read as one
// row per run with its summary figures; a database of another application, a file that is not
// SQLite and a missing file are refused with a message that says which.
#include "gui/models/results_db_model.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <QAbstractItemModelTester>
#include <QFile>
#include <QTemporaryDir>

#include "sim/core/error.hpp"

namespace kvsim::gui {
namespace {

void exec(const QString& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err != nullptr ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string open_error(const QString& path) {
  ResultsDbModel m;
  try {
    m.open(path);
  } catch (const InputError& e) {
    return e.diagnostics().front().to_string();
  }
  return "";
}

TEST(ResultsDbModel, ReadsRunsWithTheirSummaries) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("r.db"));
  exec(path,
       "PRAGMA application_id = 1802924909;"  // 0x6B76736D, "kvsm"
       // The layout docs/sweeps.md documents: runs.id, summaries.run_id.
       "CREATE TABLE runs(id INTEGER PRIMARY KEY, run_key TEXT, sweep TEXT, status TEXT, "
       "scenario_yaml TEXT);"
       "CREATE TABLE summaries(run_id INTEGER PRIMARY KEY, requests_per_sec NUMERIC, ttft_ms_p90 "
       "NUMERIC);"
       "INSERT INTO runs VALUES (1, 'k1', 's', 'done', 'name: a'), (2, 'k2', 's', 'failed', 'name: "
       "b');"
       "INSERT INTO summaries VALUES (1, 2.5, 410.0);");
  ResultsDbModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  m.open(path);
  ASSERT_EQ(m.rowCount(), 2);
  EXPECT_EQ(m.column_names(),
            (QStringList{QStringLiteral("id"), QStringLiteral("run_key"), QStringLiteral("sweep"),
                         QStringLiteral("status"), QStringLiteral("requests_per_sec"),
                         QStringLiteral("ttft_ms_p90")}));
  EXPECT_EQ(
      m.index(0, m.column_index(QStringLiteral("requests_per_sec"))).data(Qt::EditRole).toDouble(),
      2.5);
  EXPECT_TRUE(m.index(1, m.column_index(QStringLiteral("ttft_ms_p90")))
                  .data(Qt::EditRole)
                  .isNull());  // failed run
  EXPECT_TRUE(m.numeric_columns().contains(QStringLiteral("ttft_ms_p90")));
  EXPECT_FALSE(m.numeric_columns().contains(QStringLiteral("status")));
}

TEST(ResultsDbModel, RefusesAForeignDatabase) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("other.db"));
  exec(path, "CREATE TABLE runs(id INTEGER); INSERT INTO runs VALUES (1);");
  const std::string e = open_error(path);
  EXPECT_NE(e.find("not a kvsim results database"), std::string::npos) << e;
  EXPECT_NE(e.find("another application"), std::string::npos) << e;
}

TEST(ResultsDbModel, RefusesAFileThatIsNotSqlite) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("text.db"));
  QFile f(path);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly));
  f.write(QByteArray(4096, 'x'));
  f.close();
  const std::string e = open_error(path);
  EXPECT_NE(e.find("not an SQLite database"), std::string::npos) << e;
  EXPECT_NE(open_error(dir.filePath(QStringLiteral("missing.db"))).find("no such file"),
            std::string::npos);
}

TEST(ResultsDbModel, AFailedOpenKeepsTheLoadedRuns) {
  QTemporaryDir dir;
  const QString good = dir.filePath(QStringLiteral("g.db"));
  exec(good,
       "PRAGMA application_id = 1802924909; CREATE TABLE runs(run_id INTEGER); INSERT INTO runs "
       "VALUES (7);");
  ResultsDbModel m;
  m.open(good);
  EXPECT_THROW(m.open(dir.filePath(QStringLiteral("missing.db"))), InputError);
  EXPECT_EQ(m.rowCount(), 1);
  EXPECT_EQ(m.path(), good);
}

TEST(ResultsDbModel, FiltersToTheRunKeysOfAMapCell) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("r.db"));
  exec(path,
       "PRAGMA application_id = 1802924909;"
       "CREATE TABLE runs(id INTEGER PRIMARY KEY, run_key TEXT, status TEXT);"
       "CREATE TABLE summaries(run_id INTEGER PRIMARY KEY, requests_per_sec NUMERIC);"
       "INSERT INTO runs VALUES (1, 'k1', 'done'), (2, 'k2', 'done'), (3, 'k3', 'done'), "
       "(4, 'it''s', 'done');"
       "INSERT INTO summaries VALUES (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0);");
  ResultsDbModel m;
  QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::Fatal);
  // Keys are bound, not spliced into the SQL: a quote is just a character; unknown keys match
  // nothing.
  m.open(path, {QStringLiteral("k3"), QStringLiteral("it's"), QStringLiteral("k9")});
  ASSERT_EQ(m.rowCount(), 2);
  const int key = m.column_index(QStringLiteral("run_key"));
  EXPECT_EQ(m.index(0, key).data().toString(), QStringLiteral("k3"));
  EXPECT_EQ(m.index(1, key).data().toString(), QStringLiteral("it's"));
  EXPECT_DOUBLE_EQ(
      m.index(0, m.column_index(QStringLiteral("requests_per_sec"))).data(Qt::EditRole).toDouble(),
      3.0);
  EXPECT_EQ(m.run_key_filter().size(), 3);
  m.open(path);
  EXPECT_EQ(m.rowCount(), 4);
  EXPECT_TRUE(m.run_key_filter().isEmpty());
  // A database whose runs have no keys cannot be filtered by them.
  const QString keyless = dir.filePath(QStringLiteral("keyless.db"));
  exec(keyless,
       "PRAGMA application_id = 1802924909; CREATE TABLE runs(run_id INTEGER); INSERT INTO runs "
       "VALUES (7);");
  try {
    m.open(keyless, {QStringLiteral("k1")});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.diagnostics().front().to_string().find("no run_key column"), std::string::npos);
  }
  EXPECT_EQ(m.rowCount(), 4);  // unchanged
}

}  // namespace
}  // namespace kvsim::gui
