#pragma once
// A break-even map as `kvsim map` writes it to map.json (planner::map_json in
// sim/planner/map_report.cpp): the two axes, the KV-tier
// variants, the pairs of variants compared, and per cell every variant's value, summary figures
// and run keys and each pair's gain. Read with Qt's JSON parser; a file that is missing, not JSON
// or not shaped like a map is refused with an InputError naming the file and what is wrong.
//
// MapCellModel lists one cell's runs (variant, seed, run key, figures) as a table.
#include <QAbstractTableModel>
#include <QColor>
#include <QString>
#include <QStringList>
#include <array>
#include <limits>
#include <vector>

class QByteArray;

namespace kvsim::gui {

// The figures every cell reports per variant beside the map's metric, in map.json's names
// (map_report.cpp, kFigures).
inline constexpr std::array<const char*, 7> kMapFigures = {
    "requests_per_sec", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
    "tpot_ms_p50",      "tpot_ms_p90", "tpot_ms_p99"};

struct MapAxisData {
  QString name;        // "users", or a dotted scenario path
  QStringList values;  // the labels, as the map writes them ("4", "1361", "32GiB")
  bool log = false;
};

struct MapVariantInfo {
  QString name;
  QString description;
};

struct MapPairInfo {
  QString name;        // "nvme-net / vram-only": the numerator's gain over the denominator
  int numerator = -1;  // variant indices
  int denominator = -1;
};

static_assert(kMapFigures.size() == 7, "MapVariantValues::figures lists one NaN per figure");
inline constexpr double kMapNaN = std::numeric_limits<double>::quiet_NaN();

struct MapVariantValues {
  bool complete = false;
  double value = kMapNaN;  // the metric (mean over seeds) or, with an SLO, the most users
  double min = kMapNaN;    // the seeds' range (grid mode)
  double max = kMapNaN;
  std::vector<double> seed_values;  // grid mode: the metric of each done seed
  // kMapFigures' values in that order; NaN where absent.
  std::array<double, kMapFigures.size()> figures = {kMapNaN, kMapNaN, kMapNaN, kMapNaN,
                                                    kMapNaN, kMapNaN, kMapNaN};
  QStringList run_keys;  // grid: one per seed; SLO: every run of the search
  bool capped = false;   // SLO: the search reached the users axis' top
  QString binding;       // SLO: the binding constraint
};

struct MapCellData {
  int ix = 0;
  int iy = 0;
  bool present = false;                    // the file has the cell
  bool complete = false;                   // every variant of the cell has run
  std::vector<MapVariantValues> variants;  // by variant index
  std::vector<double> gains;               // by pair index; NaN where there is none
};

struct MapData {
  QString path;  // the file read
  QString scenario;
  QString metric;  // "requests_per_sec", ...; "max_users" with an SLO
  bool higher_is_better = true;
  QString slo;  // "" without an SLO
  int seeds = 1;
  QString db;  // the results database as the file names it
  MapAxisData x;
  MapAxisData y;
  std::vector<MapVariantInfo> variants;
  std::vector<MapPairInfo> pairs;
  std::vector<MapCellData> cells;  // row-major, cells[iy * nx + ix]; every cell of the grid

  int nx() const { return static_cast<int>(x.values.size()); }
  int ny() const { return static_cast<int>(y.values.size()); }
  const MapCellData& cell(int ix, int iy) const {
    return cells[static_cast<std::size_t>(iy) * static_cast<std::size_t>(nx()) +
                 static_cast<std::size_t>(ix)];
  }
  int missing_cells() const;
  // The gains of a pair, row-major like the cells (NaN where incomplete): the grid
  // planner::contour_segments takes.
  std::vector<double> gain_grid(int pair) const;
  // The pair a map opens on: the last variant over the first (nvme-net / vram-only), else the
  // first pair; -1 when the map has no pairs.
  int default_pair() const;
  int pair_index(const QString& name) const;
  // A value of the metric as the map's report writes it (whole users with an SLO).
  QString value_text(double v) const;
  // What the map's heatmap says it shows: "gain in requests_per_sec" or "gain in users meeting
  // ttft_ms_p90<=500".
  QString gain_meaning() const;
  // A cell's hover text: x and y, each variant's value and figures, each pair's gain.
  QString cell_text(int ix, int iy) const;
  // The results database to open: the path as written when it exists (or is absolute), else
  // beside map.json (resolved from its folder, then by file name); "" when the map names none.
  QString db_path() const;
};

// Reads map.json; throws InputError naming the file: missing, not JSON (with the line and
// column), or not a map (what is missing or malformed).
MapData load_map(const QString& path);
// The same from text already read; `path` names it in messages.
MapData parse_map(const QByteArray& text, const QString& path);

// A gain's colour in the heatmap: the palette of `kvsim map`'s HTML report
// (planner::map_gain_colour in sim/planner/map_report.hpp): #f7f7f7 at 1x, light to dark blue at
// 2x, 3x and 4x (#9ecae1, #4292c6, #084594; interpolated on log2 of the gain, 4x and above the
// darkest), red #d6604d at 0.5x and below, grey #d9d9d9 where there is no gain.
QColor map_gain_colour(double gain);
// Whether a gain's cell is dark enough to need white text (planner::map_gain_dark).
bool map_gain_dark(double gain);
// "1.23", or "-" where there is no gain.
QString map_gain_text(double gain);

// One cell's runs: a row per run key of each variant, with the variant's value and figures.
class MapCellModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kVariant,
    kRun,
    kValue,
    kFirstFigure,
    kRunKey = kFirstFigure + static_cast<int>(kMapFigures.size()),
    kColumns
  };

  explicit MapCellModel(QObject* parent = nullptr);
  // Shows cell (ix, iy) of `map` (kept by pointer; nullptr or an out-of-range cell clears).
  void set_cell(const MapData* map, int ix, int iy);
  void clear() { set_cell(nullptr, -1, -1); }
  QStringList run_keys() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    int variant = 0;
    int run = 0;  // seed (grid) or probe (SLO) index
    QString key;
  };
  const MapData* map_ = nullptr;
  int ix_ = -1;
  int iy_ = -1;
  std::vector<Row> rows_;
};

}  // namespace kvsim::gui
