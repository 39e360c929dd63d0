// The map model: a map.json written by hand (map_fixture.hpp, a 3 x 3 grid with known gains) is
// read into axes, variants, pairs and cells; the gains grid is row-major as
// planner::contour_segments takes it; a cell's hover text names its values; the colours repeat
// the HTML report's palette; the database is found beside the JSON; a cell's runs are listed;
// a missing file, text that is not JSON and JSON that is not a map are refused with a message.
#include "gui/models/map_data.hpp"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QDir>
#include <QTemporaryDir>
#include <cmath>

#include "sim/core/error.hpp"
#include "tests/gui/map_fixture.hpp"

namespace kvsim::gui {
namespace {

using test::fixture_map_json;
using test::fixture_run_key;
using test::kNvmeGain;
using test::write_file;

std::string load_error(const QString& path) {
  try {
    load_map(path);
  } catch (const InputError& e) {
    return e.diagnostics().front().to_string();
  }
  return "";
}

TEST(MapData, LoadsAxesVariantsPairsAndGains) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("map.json"));
  ASSERT_TRUE(write_file(path, fixture_map_json()));
  const MapData m = load_map(path);
  EXPECT_EQ(m.nx(), 3);
  EXPECT_EQ(m.ny(), 3);
  EXPECT_EQ(m.x.name, QStringLiteral("users"));
  EXPECT_EQ(m.x.values,
            (QStringList{QStringLiteral("4"), QStringLiteral("16"), QStringLiteral("64")}));
  EXPECT_TRUE(m.y.log);
  EXPECT_EQ(m.y.values.back(), QStringLiteral("16000"));
  ASSERT_EQ(m.variants.size(), 3U);
  EXPECT_EQ(m.variants[2].name, QStringLiteral("nvme-net"));
  ASSERT_EQ(m.pairs.size(), 3U);
  EXPECT_EQ(m.pairs[1].name, QStringLiteral("nvme-net / vram-only"));
  EXPECT_EQ(m.pairs[1].numerator, 2);
  EXPECT_EQ(m.pairs[1].denominator, 0);
  // The last variant over the first.
  EXPECT_EQ(m.default_pair(), 1);
  EXPECT_EQ(m.pair_index(QStringLiteral("nvme-net / dram")), 2);
  EXPECT_EQ(m.missing_cells(), 0);
  const auto grid = m.gain_grid(1);
  ASSERT_EQ(grid.size(), 9U);
  for (int iy = 0; iy < 3; ++iy) {
    for (int ix = 0; ix < 3; ++ix) {
      EXPECT_DOUBLE_EQ(grid[static_cast<std::size_t>(iy * 3 + ix)],
                       kNvmeGain[static_cast<std::size_t>(iy)][static_cast<std::size_t>(ix)]);
    }
  }
  const MapCellData& c = m.cell(2, 1);
  EXPECT_TRUE(c.complete);
  EXPECT_DOUBLE_EQ(c.gains[1], 3.5);
  EXPECT_DOUBLE_EQ(c.variants[2].value, 7.0);
  EXPECT_DOUBLE_EQ(c.variants[0].figures[2], 200.0);  // ttft_ms_p90 = 400 / 2
  EXPECT_EQ(c.variants[1].run_keys, QStringList{fixture_run_key(QStringLiteral("dram"), 2, 1)});
}

TEST(MapData, CellTextNamesTheCellsValuesAndGains) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("map.json"));
  ASSERT_TRUE(write_file(path, fixture_map_json()));
  const MapData m = load_map(path);
  const QString t = m.cell_text(1, 2);  // 16 users, 16000 prefix tokens
  EXPECT_TRUE(t.contains(QStringLiteral("users = 16"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QString::fromUtf8(test::kYName) + QStringLiteral(" = 16000")))
      << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("vram-only: 2.00 requests_per_sec"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("nvme-net: 6.40 requests_per_sec"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("TTFT p50/p90 50/200 ms"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("nvme-net / vram-only: 3.20x"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("dram / vram-only: 1.50x"))) << t.toStdString();
  EXPECT_TRUE(m.cell_text(3, 0).isEmpty());
}

TEST(MapData, AnIncompleteCellHasNoGain) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("map.json"));
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("map.db"), 0, 2)));
  const MapData m = load_map(path);
  EXPECT_EQ(m.missing_cells(), 1);
  EXPECT_TRUE(std::isnan(m.gain_grid(1)[6]));
  // Its pairs without nvme-net still have a gain, but an incomplete cell draws none.
  EXPECT_DOUBLE_EQ(m.cell(0, 2).gains[0], 1.2);
  EXPECT_TRUE(std::isnan(m.gain_grid(0)[6]));
  const QString t = m.cell_text(0, 2);
  EXPECT_TRUE(t.contains(QStringLiteral("nvme-net: not run yet"))) << t.toStdString();
  EXPECT_TRUE(t.contains(QStringLiteral("nvme-net / vram-only: -x"))) << t.toStdString();
}

TEST(MapData, ColoursRepeatTheReportsPalette) {
  // sim/planner/map_report.cpp, gain_colour.
  EXPECT_EQ(map_gain_colour(1.0).name(), QStringLiteral("#f7f7f7"));
  EXPECT_EQ(map_gain_colour(2.0).name(), QStringLiteral("#9ecae1"));
  EXPECT_EQ(map_gain_colour(3.0).name(), QStringLiteral("#4292c6"));
  EXPECT_EQ(map_gain_colour(4.0).name(), QStringLiteral("#084594"));
  EXPECT_EQ(map_gain_colour(9.0).name(), QStringLiteral("#084594"));
  EXPECT_EQ(map_gain_colour(0.5).name(), QStringLiteral("#d6604d"));
  EXPECT_EQ(map_gain_colour(0.1).name(), QStringLiteral("#d6604d"));
  EXPECT_EQ(map_gain_colour(std::nan("")).name(), QStringLiteral("#d9d9d9"));
  // A fifth of the way (log2) from 1x to 0.5x: 247 - 0.2 x (247 - 214) = 240.4 -> 240, ...
  EXPECT_EQ(map_gain_colour(std::exp2(-0.2)).name(), QStringLiteral("#f0d9d5"));
  // Between 2x and 3x: 158 + (66 - 158) x 0.5 / log2(1.5) = 79.4 -> 79, ...
  EXPECT_EQ(map_gain_colour(std::exp2(1.5)).name(), QStringLiteral("#4f9aca"));
  EXPECT_TRUE(map_gain_dark(3.0));
  EXPECT_FALSE(map_gain_dark(2.0));
  EXPECT_EQ(map_gain_text(1.234), QStringLiteral("1.23"));
  EXPECT_EQ(map_gain_text(std::nan("")), QStringLiteral("-"));
}

TEST(MapData, FindsTheDatabaseBesideTheJson) {
  QTemporaryDir dir;
  ASSERT_TRUE(QDir(dir.path()).mkpath(QStringLiteral("out")));
  const QString path = dir.filePath(QStringLiteral("out/map.json"));
  ASSERT_TRUE(write_file(dir.filePath(QStringLiteral("out/map.db")), "x"));
  // As `kvsim map -o out` writes it, relative to where it ran: not there from this folder.
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("out/map.db"))));
  EXPECT_EQ(load_map(path).db_path(), dir.filePath(QStringLiteral("out/map.db")));
  // Relative to the JSON's folder.
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("map.db"))));
  EXPECT_EQ(load_map(path).db_path(), dir.filePath(QStringLiteral("out/map.db")));
  // Absolute, and the folder moved since.
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("/nowhere/kvsim/map.db"))));
  EXPECT_EQ(load_map(path).db_path(), dir.filePath(QStringLiteral("out/map.db")));
  // Nowhere: the path as the map names it, for the message.
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("/nowhere/kvsim/runs.db"))));
  EXPECT_EQ(load_map(path).db_path(), QStringLiteral("/nowhere/kvsim/runs.db"));
}

TEST(MapData, CellModelListsTheCellsRuns) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("map.json"));
  ASSERT_TRUE(write_file(path, fixture_map_json(QStringLiteral("map.db"), 0, 2)));
  const MapData m = load_map(path);
  MapCellModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.set_cell(&m, 2, 0);
  ASSERT_EQ(model.rowCount(), 3);
  EXPECT_EQ(model.index(2, MapCellModel::kVariant).data().toString(), QStringLiteral("nvme-net"));
  EXPECT_EQ(model.index(2, MapCellModel::kRun).data().toString(), QStringLiteral("seed 1"));
  EXPECT_EQ(model.index(2, MapCellModel::kRunKey).data().toString(),
            fixture_run_key(QStringLiteral("nvme-net"), 2, 0));
  EXPECT_DOUBLE_EQ(model.index(2, MapCellModel::kValue).data(Qt::EditRole).toDouble(), 5.0);
  EXPECT_EQ(model.headerData(MapCellModel::kFirstFigure + 2, Qt::Horizontal).toString(),
            QStringLiteral("ttft_ms_p90"));
  EXPECT_DOUBLE_EQ(model.index(0, MapCellModel::kFirstFigure + 2).data(Qt::EditRole).toDouble(),
                   200.0);
  EXPECT_EQ(model.run_keys().size(), 3);
  // The incomplete cell: nvme-net has a row saying so and no key.
  model.set_cell(&m, 0, 2);
  ASSERT_EQ(model.rowCount(), 3);
  EXPECT_EQ(model.index(2, MapCellModel::kRun).data().toString(), QStringLiteral("not run yet"));
  EXPECT_EQ(model.run_keys().size(), 2);
  model.set_cell(&m, 5, 5);
  EXPECT_EQ(model.rowCount(), 0);
}

TEST(MapData, RefusesAMissingFile) {
  QTemporaryDir dir;
  const std::string e = load_error(dir.filePath(QStringLiteral("missing.json")));
  EXPECT_NE(e.find("missing.json"), std::string::npos) << e;
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;
}

TEST(MapData, RefusesTextThatIsNotJsonWithItsLine) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("broken.json"));
  ASSERT_TRUE(
      write_file(path, "{\n  \"x\": {\"name\": \"users\",\n  \"values\": [1, 2,, 3]}\n}\n"));
  const std::string e = load_error(path);
  EXPECT_NE(e.find("broken.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("not valid JSON"), std::string::npos) << e;
  // Cut short, as a map still being written.
  const QByteArray full = fixture_map_json();
  ASSERT_TRUE(write_file(path, full.left(full.size() / 2)));
  EXPECT_NE(load_error(path).find("not valid JSON"), std::string::npos);
}

TEST(MapData, RefusesJsonThatIsNotAMap) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("other.json"));
  ASSERT_TRUE(write_file(path, "[1, 2, 3]"));
  EXPECT_NE(load_error(path).find("not a kvsim map"), std::string::npos);
  ASSERT_TRUE(write_file(path, "{\"command\": \"sweep\", \"runs\": []}"));
  std::string e = load_error(path);
  EXPECT_NE(e.find("not a kvsim map"), std::string::npos) << e;
  EXPECT_NE(e.find("kvsim sweep"), std::string::npos) << e;
  // A map without its cells.
  QByteArray text = fixture_map_json();
  text.replace("\"cells\"", "\"cellz\"");
  ASSERT_TRUE(write_file(path, text));
  e = load_error(path);
  EXPECT_NE(e.find("no \"cells\" array"), std::string::npos) << e;
  // A cell outside the grid.
  text = fixture_map_json();
  text.replace("\"ix\": 2", "\"ix\": 7");
  ASSERT_TRUE(write_file(path, text));
  e = load_error(path);
  EXPECT_NE(e.find("\"ix\" in 0..2"), std::string::npos) << e;
  // A pair of a variant the map does not have.
  text = fixture_map_json();
  text.replace("\"numerator\": \"dram\"", "\"numerator\": \"hbm\"");
  ASSERT_TRUE(write_file(path, text));
  e = load_error(path);
  EXPECT_NE(e.find("among the variants"), std::string::npos) << e;
}

}  // namespace
}  // namespace kvsim::gui
