// The Map tab, offscreen, on the hand-written 3 x 3 map of map_fixture.hpp: a click maps to the
// cell under it (y upwards) and lists that cell's runs; the hover text names the cell's values;
// the contour lines drawn are exactly planner::contour_segments' for each level; the cell's runs
// open in the Results database tab filtered to their run keys; a malformed or missing map.json
// gives a message, not a crash.
#include "gui/app/map_view.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <QApplication>
#include <QComboBox>
#include <QHelpEvent>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <iterator>

#include "gui/app/main_window.hpp"
#include "gui/app/results_view.hpp"
#include "gui/models/map_data.hpp"
#include "gui/models/results_db_model.hpp"
#include "sim/planner/map_report.hpp"
#include "tests/gui/map_fixture.hpp"

// QStrings in failure messages as text.
inline void PrintTo(const QString& s, std::ostream* os) { *os << '"' << s.toStdString() << '"'; }

namespace kvsim::gui {
namespace {

using test::fixture_map_json;
using test::fixture_run_key;
using test::write_file;

// A map view showing the fixture, laid out at a fixed size.
struct Shown {
  QTemporaryDir dir;
  MapView view;
  explicit Shown(const QByteArray& json = fixture_map_json()) {
    const QString path = dir.filePath(QStringLiteral("map.json"));
    EXPECT_TRUE(write_file(path, json));
    view.resize(1000, 760);
    view.show();
    EXPECT_TRUE(view.open(path)) << view.status_label()->text().toStdString();
    QApplication::processEvents();
  }
};

std::size_t planner_segments(const MapData& m, int pair, double level) {
  return planner::contour_segments(m.gain_grid(pair), static_cast<std::size_t>(m.nx()),
                                   static_cast<std::size_t>(m.ny()), level,
                                   planner::kMapContourTolerance)
      .size();
}

TEST(MapView, OpensOnTheLastVariantOverTheFirst) {
  Shown s;
  EXPECT_EQ(s.view.pair_box()->count(), 3);
  EXPECT_EQ(s.view.pair_box()->currentText(), QStringLiteral("nvme-net / vram-only"));
  EXPECT_EQ(s.view.canvas()->pair(), 1);
  EXPECT_TRUE(s.view.status_label()->text().contains(QStringLiteral("3 x 3 cells")));
  EXPECT_TRUE(s.view.set_pair(QStringLiteral("dram / vram-only")));
  EXPECT_EQ(s.view.canvas()->pair(), 0);
  EXPECT_FALSE(s.view.set_pair(QStringLiteral("hbm / vram-only")));
}

TEST(MapView, AClickSelectsTheCellUnderIt) {
  Shown s;
  MapCanvas* canvas = s.view.canvas();
  // Every cell's centre maps back to the cell; y grows upwards, so row 2 is drawn on top.
  for (int iy = 0; iy < 3; ++iy) {
    for (int ix = 0; ix < 3; ++ix) {
      const QRectF r = canvas->cell_rect(ix, iy);
      ASSERT_FALSE(r.isEmpty());
      int cx = -1;
      int cy = -1;
      ASSERT_TRUE(canvas->cell_at(r.center(), &cx, &cy));
      EXPECT_EQ(cx, ix);
      EXPECT_EQ(cy, iy);
      // Just inside the corners too.
      ASSERT_TRUE(canvas->cell_at(r.topLeft() + QPointF(1, 1), &cx, &cy));
      EXPECT_EQ(cx, ix);
      EXPECT_EQ(cy, iy);
      ASSERT_TRUE(canvas->cell_at(r.bottomRight() - QPointF(1, 1), &cx, &cy));
      EXPECT_EQ(cx, ix);
      EXPECT_EQ(cy, iy);
    }
  }
  EXPECT_LT(canvas->cell_rect(0, 2).top(), canvas->cell_rect(0, 0).top());
  EXPECT_LT(canvas->cell_rect(0, 0).left(), canvas->cell_rect(2, 0).left());
  int cx = -1;
  int cy = -1;
  EXPECT_FALSE(canvas->cell_at(QPointF(2, 2), &cx, &cy));  // the margin, not a cell
  EXPECT_FALSE(canvas->cell_at(canvas->cell_rect(2, 0).bottomRight() + QPointF(3, 3), &cx, &cy));

  // A real click on the bottom-right cell (64 users, 1000 prefix tokens) lists its runs.
  QSignalSpy clicked(canvas, &MapCanvas::cellClicked);
  QTest::mouseClick(canvas, Qt::LeftButton, {}, canvas->cell_rect(2, 0).center().toPoint());
  ASSERT_EQ(clicked.count(), 1);
  EXPECT_EQ(clicked.front().at(0).toInt(), 2);
  EXPECT_EQ(clicked.front().at(1).toInt(), 0);
  MapCellModel* runs = s.view.cell_model();
  ASSERT_EQ(runs->rowCount(), 3);
  EXPECT_EQ(runs->run_keys(), (QStringList{fixture_run_key(QStringLiteral("vram-only"), 2, 0),
                                           fixture_run_key(QStringLiteral("dram"), 2, 0),
                                           fixture_run_key(QStringLiteral("nvme-net"), 2, 0)}));
  const QString label = s.view.cell_label()->text();
  EXPECT_TRUE(label.contains(QStringLiteral("users = 64"))) << label.toStdString();
  EXPECT_TRUE(label.contains(QStringLiteral("= 1000"))) << label.toStdString();
  EXPECT_TRUE(label.contains(QStringLiteral("nvme-net / vram-only 2.50x"))) << label.toStdString();
  EXPECT_TRUE(s.view.open_runs_button()->isEnabled());
}

TEST(MapView, TheTooltipNamesTheCellsValues) {
  Shown s;
  MapCanvas* canvas = s.view.canvas();
  const QPointF at = canvas->cell_rect(1, 2).center();  // 16 users, 16000 prefix tokens
  const QString t = canvas->tooltip_at(at);
  EXPECT_EQ(t, s.view.map()->cell_text(1, 2));
  EXPECT_TRUE(t.contains(QStringLiteral("users = 16"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral(".average = 16000"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("nvme-net: 6.40 requests_per_sec"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("nvme-net / vram-only: 3.20x"))) << t.toStdString();
  EXPECT_TRUE(canvas->tooltip_at(QPointF(1, 1)).isEmpty());
  // The tooltip event shows the same text.
  QHelpEvent help(QEvent::ToolTip, at.toPoint(), canvas->mapToGlobal(at.toPoint()));
  QApplication::sendEvent(canvas, &help);
  EXPECT_EQ(QToolTip::text(), t);
  QToolTip::hideText();
}

TEST(MapView, DrawsExactlyThePlannersContourSegments) {
  Shown s;
  MapCanvas* canvas = s.view.canvas();
  const MapData& m = *s.view.map();
  for (int pair = 0; pair < 3; ++pair) {
    s.view.pair_box()->setCurrentIndex(pair);
    canvas->grab();  // paints
    const auto& drawn = canvas->drawn_segments();
    ASSERT_EQ(drawn.size(), std::size(planner::kMapContourLevels));
    std::size_t total = 0;
    for (std::size_t l = 0; l < drawn.size(); ++l) {
      EXPECT_EQ(drawn[l], planner_segments(m, pair, planner::kMapContourLevels[l]))
          << "pair " << pair << ", level " << planner::kMapContourLevels[l];
      total += drawn[l];
    }
    if (pair == 1) {
      // nvme-net / vram-only spans 0.8x to 4.5x: every level has a line.
      for (const std::size_t n : drawn) EXPECT_GT(n, 0U);
    }
    EXPECT_GT(total, 0U);
  }
  // An incomplete cell's squares have no line: fewer segments, still the planner's.
  Shown gap(fixture_map_json(QStringLiteral("map.db"), 1, 1));
  gap.view.canvas()->grab();
  std::size_t with_gap = 0;
  for (std::size_t l = 0; l < std::size(planner::kMapContourLevels); ++l) {
    EXPECT_EQ(gap.view.canvas()->drawn_segments()[l],
              planner_segments(*gap.view.map(), 1, planner::kMapContourLevels[l]));
    with_gap += gap.view.canvas()->drawn_segments()[l];
  }
  EXPECT_EQ(with_gap, 0U);  // the middle cell is a corner of all four squares
}

TEST(MapView, AMalformedOrMissingMapGivesAMessage) {
  Shown s;
  const QString bad = s.dir.filePath(QStringLiteral("bad.json"));
  ASSERT_TRUE(write_file(bad, "{\"x\": {\"name\": \"users\", \"values\": [1, 2]},\n\"cells\": ["));
  EXPECT_FALSE(s.view.open(bad));
  const QString msg = s.view.status_label()->text();
  EXPECT_TRUE(msg.contains(QStringLiteral("bad.json:2:"))) << msg.toStdString();
  EXPECT_TRUE(msg.contains(QStringLiteral("not valid JSON"))) << msg.toStdString();
  // The map shown before stays, and still answers clicks.
  ASSERT_NE(s.view.map(), nullptr);
  EXPECT_EQ(s.view.map()->nx(), 3);
  EXPECT_TRUE(s.view.select_cell(0, 0));
  s.view.canvas()->grab();

  MainWindow w;
  w.show();
  EXPECT_FALSE(w.open_map(s.dir.filePath(QStringLiteral("missing.json"))));
  EXPECT_TRUE(w.message_bar()->isVisible());
  EXPECT_TRUE(w.message_bar()->text().contains(QStringLiteral("missing.json")));
  EXPECT_TRUE(w.message_bar()->text().contains(QStringLiteral("no such file")));
  EXPECT_EQ(w.map_view()->map(), nullptr);
  w.map_view()->canvas()->grab();  // the empty tab paints its hint
  EXPECT_FALSE(w.map_view()->select_cell(0, 0));
  EXPECT_FALSE(w.map_view()->open_runs());
  QByteArray text = "{\"command\": \"sweep\"}";
  ASSERT_TRUE(write_file(bad, text));
  EXPECT_FALSE(w.open_map(bad));
  EXPECT_TRUE(w.message_bar()->text().contains(QStringLiteral("not a kvsim map")));
  // Plain text: the quotes of a message are quotes.
  text = fixture_map_json();
  text.replace("\"cells\"", "\"cellz\"");
  ASSERT_TRUE(write_file(bad, text));
  EXPECT_FALSE(w.open_map(bad));
  EXPECT_TRUE(w.message_bar()->text().contains(QStringLiteral("no \"cells\" array")))
      << w.message_bar()->text().toStdString();
}

TEST(MapView, ACellsRunsOpenInTheResultsDatabase) {
  QTemporaryDir dir;
  // A results database beside map.json with every run of the map and one more.
  const QString db = dir.filePath(QStringLiteral("map.db"));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.toUtf8().constData(), &raw), SQLITE_OK);
  std::string sql =
      "PRAGMA application_id = 1802924909;"
      "CREATE TABLE runs(id INTEGER PRIMARY KEY, run_key TEXT, status TEXT);"
      "CREATE TABLE summaries(run_id INTEGER PRIMARY KEY, requests_per_sec NUMERIC);"
      "INSERT INTO runs(run_key, status) VALUES ('elsewhere', 'done');";
  for (const char* v : {"vram-only", "dram", "nvme-net"}) {
    for (int iy = 0; iy < 3; ++iy) {
      for (int ix = 0; ix < 3; ++ix) {
        sql += "INSERT INTO runs(run_key, status) VALUES ('" +
               fixture_run_key(QString::fromUtf8(v), ix, iy).toStdString() + "', 'done');";
      }
    }
  }
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  const QString path = dir.filePath(QStringLiteral("map.json"));
  // Named as `kvsim map -o some/out` names it: found beside the JSON.
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("some/out/map.db"))));

  MainWindow w;
  w.resize(1200, 800);
  w.show();
  ASSERT_TRUE(w.open_map(path));
  EXPECT_TRUE(w.set_view(QStringLiteral("map")));
  MapView* view = w.map_view();
  ASSERT_TRUE(view->select_cell(1, 1));
  QTest::mouseClick(view->open_runs_button(), Qt::LeftButton);
  ResultsDbModel* results = w.results()->model();
  EXPECT_EQ(results->path(), db);
  EXPECT_EQ(results->rowCount(), 3);
  EXPECT_EQ(results->run_key_filter(), view->cell_model()->run_keys());
  const int key = results->column_index(QStringLiteral("run_key"));
  EXPECT_EQ(results->index(2, key).data().toString(),
            fixture_run_key(QStringLiteral("nvme-net"), 1, 1));
  EXPECT_TRUE(w.results()->status_label()->text().contains(QStringLiteral("map cell")));
  EXPECT_FALSE(w.results()->show_all_button()->isHidden());
  // Double-click one run of the panel: that run alone.
  w.set_view(QStringLiteral("map"));
  QApplication::processEvents();
  QTableView* table = view->cell_table();
  ASSERT_TRUE(table->isVisible());
  const QRect row = table->visualRect(view->cell_model()->index(1, MapCellModel::kVariant));
  // (A double-click is a press, then the double-click event, as a window system sends them.)
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, row.center());
  QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, row.center());
  EXPECT_EQ(results->rowCount(), 1);
  EXPECT_EQ(results->index(0, key).data().toString(),
            fixture_run_key(QStringLiteral("dram"), 1, 1));
  // Back to every run.
  QTest::mouseClick(w.results()->show_all_button(), Qt::LeftButton);
  EXPECT_EQ(results->rowCount(), 28);
  EXPECT_TRUE(results->run_key_filter().isEmpty());
  EXPECT_TRUE(w.results()->show_all_button()->isHidden());
}

}  // namespace
}  // namespace kvsim::gui
