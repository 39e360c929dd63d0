#include "gui/models/map_data.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/core/error.hpp"
#include "sim/planner/map_report.hpp"

namespace kvsim::gui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const QString& path, const QString& message, int line = 0, int column = 0) {
  throw InputError(path.toStdString(), line, column, message.toStdString());
}

[[noreturn]] void not_a_map(const QString& path, const QString& what) {
  fail(path, QStringLiteral("not a kvsim map (map.json as `kvsim map` writes it): %1").arg(what));
}

// A number, or NaN for null and anything else.
double number(const QJsonValue& v) { return v.isDouble() ? v.toDouble() : kNaN; }

// The line and column (1-based) of a byte offset in `text`.
std::pair<int, int> line_column(const QByteArray& text, qsizetype offset) {
  int line = 1;
  int column = 1;
  for (qsizetype i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

MapAxisData read_axis(const QJsonObject& root, const QString& key, const QString& path) {
  const QJsonValue v = root.value(key);
  if (!v.isObject()) not_a_map(path, QStringLiteral("no \"%1\" axis object").arg(key));
  const QJsonObject o = v.toObject();
  MapAxisData a;
  a.name = o.value(QStringLiteral("name")).toString();
  a.log = o.value(QStringLiteral("log")).toBool();
  const QJsonValue values = o.value(QStringLiteral("values"));
  if (a.name.isEmpty() || !values.isArray() || values.toArray().isEmpty())
    not_a_map(path, QStringLiteral("the \"%1\" axis needs a \"name\" and a non-empty \"values\" "
                                   "array")
                        .arg(key));
  for (const auto& e : values.toArray()) {
    if (e.isString()) {
      a.values << e.toString();
    } else if (e.isDouble()) {
      a.values << QString::number(e.toDouble(), 'g', 10);
    } else {
      not_a_map(path,
                QStringLiteral("a value of the \"%1\" axis is neither text nor a number").arg(key));
    }
  }
  return a;
}

int variant_index(const std::vector<MapVariantInfo>& variants, const QString& name) {
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (variants[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// A cell's index from its "ix"/"iy" member, or -1 when it is not a whole number in [0, n).
int grid_index(const QJsonObject& cell, const QString& key, int n) {
  const QJsonValue v = cell.value(key);
  if (!v.isDouble()) return -1;
  const double d = v.toDouble();
  if (d != std::floor(d) || d < 0 || d >= n) return -1;
  return static_cast<int>(d);
}

MapVariantValues read_variant_values(const QJsonObject& o) {
  MapVariantValues v;
  v.complete = o.value(QStringLiteral("complete")).toBool();
  v.value = number(o.value(QStringLiteral("value")));
  v.min = number(o.value(QStringLiteral("min")));
  v.max = number(o.value(QStringLiteral("max")));
  for (const auto& s : o.value(QStringLiteral("seed_values")).toArray())
    v.seed_values.push_back(number(s));
  for (std::size_t f = 0; f < kMapFigures.size(); ++f)
    v.figures[f] = number(o.value(QString::fromUtf8(kMapFigures[f])));
  for (const auto& k : o.value(QStringLiteral("run_keys")).toArray()) {
    if (k.isString()) v.run_keys << k.toString();
  }
  v.capped = o.value(QStringLiteral("capped")).toBool();
  v.binding = o.value(QStringLiteral("binding")).toString();
  return v;
}

std::size_t grid_offset(int ix, int iy, int nx) {
  return static_cast<std::size_t>(iy) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(ix);
}

QString fixed(double v, int decimals) {
  return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("-");
}

}  // namespace

MapData parse_map(const QByteArray& text, const QString& path) {
  QJsonParseError err{};
  const QJsonDocument doc = QJsonDocument::fromJson(text, &err);
  if (err.error != QJsonParseError::NoError) {
    const auto [line, column] = line_column(text, err.offset);
    fail(path, QStringLiteral("not valid JSON: %1").arg(err.errorString()), line, column);
  }
  if (!doc.isObject()) not_a_map(path, QStringLiteral("the document is not a JSON object"));
  const QJsonObject root = doc.object();
  const QString command = root.value(QStringLiteral("command")).toString();
  if (!command.isEmpty() && command != QStringLiteral("map"))
    not_a_map(path, QStringLiteral("it is the JSON output of `kvsim %1`").arg(command));

  MapData m;
  m.path = path;
  m.scenario = root.value(QStringLiteral("scenario")).toString();
  m.metric = root.value(QStringLiteral("metric")).toString();
  m.higher_is_better = root.value(QStringLiteral("higher_is_better")).toBool(true);
  m.slo = root.value(QStringLiteral("slo")).toString();
  m.seeds = std::max(1, root.value(QStringLiteral("seeds")).toInt(1));
  m.db = root.value(QStringLiteral("db")).toString();
  m.x = read_axis(root, QStringLiteral("x"), path);
  m.y = read_axis(root, QStringLiteral("y"), path);

  const QJsonValue variants = root.value(QStringLiteral("variants"));
  if (!variants.isArray() || variants.toArray().isEmpty())
    not_a_map(path, QStringLiteral("no \"variants\" array"));
  for (const auto& v : variants.toArray()) {
    const QJsonObject o = v.toObject();
    const QString name = o.value(QStringLiteral("name")).toString();
    if (name.isEmpty()) not_a_map(path, QStringLiteral("a variant has no \"name\""));
    m.variants.push_back({name, o.value(QStringLiteral("description")).toString()});
  }

  const QJsonValue pairs = root.value(QStringLiteral("pairs"));
  if (!pairs.isArray()) not_a_map(path, QStringLiteral("no \"pairs\" array"));
  for (const auto& p : pairs.toArray()) {
    const QJsonObject o = p.toObject();
    MapPairInfo info;
    info.name = o.value(QStringLiteral("name")).toString();
    info.numerator = variant_index(m.variants, o.value(QStringLiteral("numerator")).toString());
    info.denominator = variant_index(m.variants, o.value(QStringLiteral("denominator")).toString());
    if (info.name.isEmpty() || info.numerator < 0 || info.denominator < 0)
      not_a_map(path, QStringLiteral("a pair needs a \"name\" and a \"numerator\" and "
                                     "\"denominator\" among the variants"));
    m.pairs.push_back(info);
  }

  const QJsonValue cells = root.value(QStringLiteral("cells"));
  if (!cells.isArray()) not_a_map(path, QStringLiteral("no \"cells\" array"));
  const int nx = m.nx();
  const int ny = m.ny();
  m.cells.resize(static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny));
  for (int iy = 0; iy < ny; ++iy) {
    for (int ix = 0; ix < nx; ++ix) {
      MapCellData& c = m.cells[grid_offset(ix, iy, nx)];
      c.ix = ix;
      c.iy = iy;
      c.variants.resize(m.variants.size());
      c.gains.assign(m.pairs.size(), kNaN);
    }
  }
  int k = 0;
  for (const auto& cv : cells.toArray()) {
    const QJsonObject o = cv.toObject();
    const int ix = grid_index(o, QStringLiteral("ix"), nx);
    const int iy = grid_index(o, QStringLiteral("iy"), ny);
    if (ix < 0 || iy < 0)
      not_a_map(path, QStringLiteral("cell %1 has no \"ix\" in 0..%2 and \"iy\" in 0..%3")
                          .arg(k)
                          .arg(nx - 1)
                          .arg(ny - 1));
    ++k;
    MapCellData& c = m.cells[grid_offset(ix, iy, nx)];
    c.present = true;
    c.complete = o.value(QStringLiteral("complete")).toBool();
    const QJsonObject vs = o.value(QStringLiteral("variants")).toObject();
    for (std::size_t v = 0; v < m.variants.size(); ++v) {
      const QJsonValue vv = vs.value(m.variants[v].name);
      if (vv.isObject()) c.variants[v] = read_variant_values(vv.toObject());
    }
    const QJsonObject gains = o.value(QStringLiteral("gains")).toObject();
    for (std::size_t p = 0; p < m.pairs.size(); ++p) {
      const QJsonValue g = gains.value(m.pairs[p].name);
      c.gains[p] = number(g.isObject() ? g.toObject().value(QStringLiteral("gain")) : g);
    }
  }
  return m;
}

MapData load_map(const QString& path) {
  QFile f(path);
  if (!QFileInfo(path).isFile()) fail(path, QStringLiteral("no such file"));
  if (!f.open(QIODevice::ReadOnly))
    fail(path, QStringLiteral("cannot read: %1").arg(f.errorString()));
  return parse_map(f.readAll(), path);
}

int MapData::missing_cells() const {
  return static_cast<int>(
      std::count_if(cells.begin(), cells.end(), [](const MapCellData& c) { return !c.complete; }));
}

std::vector<double> MapData::gain_grid(int pair) const {
  std::vector<double> out(cells.size(), kNaN);
  if (pair < 0 || pair >= static_cast<int>(pairs.size())) return out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].complete) out[i] = cells[i].gains[static_cast<std::size_t>(pair)];
  }
  return out;
}

int MapData::default_pair() const {
  if (pairs.empty()) return -1;
  const int last = static_cast<int>(variants.size()) - 1;
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p].numerator == last && pairs[p].denominator == 0) return static_cast<int>(p);
  }
  return 0;
}

int MapData::pair_index(const QString& name) const {
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p].name == name) return static_cast<int>(p);
  }
  return -1;
}

QString MapData::value_text(double v) const {
  if (!std::isfinite(v)) return QStringLiteral("-");
  if (!slo.isEmpty()) return fixed(v, 0);
  const double a = std::abs(v);
  return fixed(v, a >= 100 ? 0 : (a >= 10 ? 1 : (a >= 1 ? 2 : 3)));
}

QString MapData::gain_meaning() const {
  if (!slo.isEmpty()) return QStringLiteral("gain in users meeting %1").arg(slo);
  return QStringLiteral("gain in %1%2")
      .arg(metric,
           higher_is_better ? QString() : QStringLiteral(" (lower is better: inverse ratio)"));
}

QString MapData::cell_text(int ix, int iy) const {
  if (ix < 0 || iy < 0 || ix >= nx() || iy >= ny()) return {};
  const MapCellData& c = cell(ix, iy);
  QStringList lines;
  lines << QStringLiteral("%1 = %2").arg(x.name, x.values[ix]);
  lines << QStringLiteral("%1 = %2").arg(y.name, y.values[iy]);
  const QString unit = slo.isEmpty() ? metric : QStringLiteral("users meeting the SLO");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const MapVariantValues& vc = c.variants[v];
    QString t = variants[v].name + QStringLiteral(": ");
    if (!vc.complete) {
      lines << t + QStringLiteral("not run yet");
      continue;
    }
    t += value_text(vc.value) + QLatin1Char(' ') + unit;
    if (slo.isEmpty() && seeds > 1)
      t += QStringLiteral(" (seeds %1 to %2)").arg(value_text(vc.min), value_text(vc.max));
    if (!slo.isEmpty() && vc.capped) t += QStringLiteral(" (capped)");
    const auto& f = vc.figures;
    t += QStringLiteral("; %1 req/s, TTFT p50/p90 %2/%3 ms, TPOT p50/p90 %4/%5 ms")
             .arg(fixed(f[0], 3), fixed(f[1], 0), fixed(f[2], 0), fixed(f[4], 1), fixed(f[5], 1));
    lines << t;
  }
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    lines << QStringLiteral("%1: %2x").arg(pairs[p].name, map_gain_text(c.gains[p]));
  }
  return lines.join(QLatin1Char('\n'));
}

QString MapData::db_path() const {
  if (db.isEmpty()) return {};
  const QFileInfo as_written(db);
  if (as_written.isFile()) return as_written.absoluteFilePath();
  const QDir folder = QFileInfo(path).absoluteDir();
  if (!as_written.isAbsolute() && QFileInfo(folder.filePath(db)).isFile())
    return QFileInfo(folder.filePath(db)).absoluteFilePath();
  // A folder moved or opened from elsewhere: the database beside map.json, as `kvsim map` puts it.
  QString beside = folder.filePath(as_written.fileName());
  if (QFileInfo(beside).isFile()) return beside;
  return as_written.isAbsolute() ? db : folder.filePath(db);
}

QColor map_gain_colour(double gain) {
  const planner::MapRgb c = planner::map_gain_colour(gain);
  return {c.r, c.g, c.b};
}

bool map_gain_dark(double gain) { return planner::map_gain_dark(gain); }

QString map_gain_text(double gain) { return fixed(gain, 2); }

MapCellModel::MapCellModel(QObject* parent) : QAbstractTableModel(parent) {}

void MapCellModel::set_cell(const MapData* map, int ix, int iy) {
  beginResetModel();
  rows_.clear();
  map_ = map;
  ix_ = ix;
  iy_ = iy;
  if (map_ == nullptr || ix < 0 || iy < 0 || ix >= map_->nx() || iy >= map_->ny()) {
    map_ = nullptr;
    ix_ = -1;
    iy_ = -1;
  } else {
    const MapCellData& c = map_->cell(ix, iy);
    for (std::size_t v = 0; v < c.variants.size(); ++v) {
      const QStringList& keys = c.variants[v].run_keys;
      for (int r = 0; r < keys.size(); ++r) rows_.push_back({static_cast<int>(v), r, keys[r]});
      // A variant not run yet still has a row, saying so.
      if (keys.isEmpty()) rows_.push_back({static_cast<int>(v), -1, QString()});
    }
  }
  endResetModel();
}

QStringList MapCellModel::run_keys() const {
  QStringList out;
  for (const Row& r : rows_) {
    if (!r.key.isEmpty()) out << r.key;
  }
  return out;
}

int MapCellModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MapCellModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant MapCellModel::data(const QModelIndex& index, int role) const {
  if (map_ == nullptr || !index.isValid() || index.row() >= rowCount() ||
      index.column() >= kColumns)
    return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const MapVariantValues& vc = map_->cell(ix_, iy_).variants[static_cast<std::size_t>(row.variant)];
  const int col = index.column();
  // The seed's own value in grid mode; the variant's value (mean, or most users) otherwise.
  double value = vc.complete ? vc.value : std::numeric_limits<double>::quiet_NaN();
  if (map_->slo.isEmpty() && row.run >= 0 &&
      static_cast<std::size_t>(row.run) < vc.seed_values.size() && map_->seeds > 1)
    value = vc.seed_values[static_cast<std::size_t>(row.run)];
  if (role == Qt::DisplayRole || role == Qt::EditRole) {
    const bool display = role == Qt::DisplayRole;
    if (col == kVariant) return map_->variants[static_cast<std::size_t>(row.variant)].name;
    if (col == kRun) {
      if (row.run < 0) return display ? QStringLiteral("not run yet") : QVariant();
      return display
                 ? QStringLiteral("%1 %2")
                       .arg(map_->slo.isEmpty() ? QStringLiteral("seed") : QStringLiteral("run"))
                       .arg(row.run + 1)
                 : QVariant(row.run + 1);
    }
    if (col == kRunKey) return row.key;
    const double v =
        col == kValue ? value : vc.figures[static_cast<std::size_t>(col - kFirstFigure)];
    if (!display) return std::isfinite(v) ? QVariant(v) : QVariant();
    if (col == kValue) return map_->value_text(v);
    return std::isfinite(v) ? QString::number(v, 'g', 5) : QStringLiteral("-");
  }
  if (role == Qt::TextAlignmentRole && col >= kValue && col < kRunKey)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && col == kVariant)
    return map_->variants[static_cast<std::size_t>(row.variant)].description;
  return {};
}

QVariant MapCellModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= kColumns) return {};
  if (role == Qt::ToolTipRole && section >= kFirstFigure && section < kRunKey)
    return QStringLiteral("The variant's figure in this cell (mean over its seeds)");
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kVariant:
      return QStringLiteral("variant");
    case kRun:
      return QStringLiteral("run");
    case kValue:
      if (map_ == nullptr) return QStringLiteral("value");
      if (!map_->slo.isEmpty()) return QStringLiteral("users meeting SLO");
      return map_->seeds > 1 ? map_->metric + QStringLiteral(", this seed") : map_->metric;
    case kRunKey:
      return QStringLiteral("run_key");
    default:
      return QString::fromUtf8(kMapFigures[static_cast<std::size_t>(section - kFirstFigure)]);
  }
}

}  // namespace kvsim::gui
