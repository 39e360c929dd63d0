#include "gui/app/map_view.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>

#include "sim/core/error.hpp"
#include "sim/planner/map_report.hpp"

namespace kvsim::gui {
namespace {

constexpr std::size_t kLevels = std::size(planner::kMapContourLevels);
// The contour lines' strokes, as the HTML report draws them (map_report.cpp, write_heatmap):
// 1x dotted, 2x solid, 3x dashed, 4x solid and widest.
constexpr std::array<double, kLevels> kLineWidth = {2.0, 2.5, 2.5, 3.0};
const QColor kInk(0x11, 0x11, 0x11);
constexpr double kLegendWidth = 132;

QPen contour_pen(std::size_t level) {
  QPen pen(kInk, kLineWidth[level]);
  pen.setJoinStyle(Qt::RoundJoin);
  if (level == 0) {
    pen.setCapStyle(Qt::FlatCap);
    pen.setDashPattern({1.0, 1.5});  // in pen widths: 2 on, 3 off at width 2
  } else if (level == 2) {
    pen.setCapStyle(Qt::FlatCap);
    pen.setDashPattern({2.4, 1.2});  // 6 on, 3 off at width 2.5
  } else {
    pen.setCapStyle(Qt::RoundCap);
  }
  return pen;
}

QString level_text(double level) { return QString::number(level, 'g', 6) + QLatin1Char('x'); }

QString axis_title(const MapAxisData& a) {
  return a.log ? a.name + QStringLiteral(" (log scale)") : a.name;
}

// Text with a halo, so it reads over the contour lines.
void halo_text(QPainter& p, const QPointF& baseline, const QFont& font, const QString& text,
               const QColor& ink = kInk, const QColor& halo = Qt::white, double width = 3.5) {
  QPainterPath path;
  path.addText(baseline, font, text);
  p.strokePath(path, QPen(halo, width, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  p.fillPath(path, ink);
}

// A gain written in its cell.
struct CellText {
  QRectF box;  // the text's extent
  QString text;
  QColor ink;
  QColor cell;
};

}  // namespace

MapCanvas::MapCanvas(QWidget* parent) : QWidget(parent), drawn_(kLevels, 0) {
  setObjectName(QStringLiteral("map_canvas"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void MapCanvas::set_map(const MapData* map, int pair) {
  map_ = map;
  sel_ix_ = -1;
  sel_iy_ = -1;
  set_pair(pair);
}

void MapCanvas::set_pair(int pair) {
  pair_ = map_ != nullptr && pair >= 0 && pair < static_cast<int>(map_->pairs.size()) ? pair : -1;
  grid_ = map_ != nullptr ? map_->gain_grid(pair_) : std::vector<double>{};
  update();
}

void MapCanvas::set_selected(int ix, int iy) {
  sel_ix_ = ix;
  sel_iy_ = iy;
  update();
}

MapCanvas::Geometry MapCanvas::geometry() const {
  Geometry g;
  if (map_ == nullptr) return g;
  const QFontMetricsF fm(font());
  const double fh = fm.height();
  const int nx = map_->nx();
  const int ny = map_->ny();
  double y_label_w = 0;
  for (const QString& v : map_->y.values) y_label_w = std::max(y_label_w, fm.horizontalAdvance(v));
  double x_label_w = 0;
  for (const QString& v : map_->x.values) x_label_w = std::max(x_label_w, fm.horizontalAdvance(v));
  const double top = fh * 1.3 + 14;  // the title
  const double left = 10 + fh + 10 + y_label_w + 8;
  const double right = kLegendWidth + 24;
  g.cw = std::max(4.0, (width() - left - right) / nx);
  g.x_rotated = x_label_w + 8 > g.cw;
  // Rotated labels at 45 degrees need about 1.4 line heights between them.
  g.x_step = g.x_rotated ? std::max(1, static_cast<int>(std::ceil(fh * 1.5 / g.cw))) : 1;
  const double x_label_h = g.x_rotated ? (x_label_w + fh) * 0.7071 : fh;
  const double bottom = 8 + x_label_h + 10 + fh + 8;
  g.ch = std::max(4.0, (height() - top - bottom) / ny);
  g.y_step = std::max(1, static_cast<int>(std::ceil((fh + 2) / g.ch)));
  g.plot = QRectF(left, top, g.cw * nx, g.ch * ny);
  g.legend_x = g.plot.right() + 24;
  return g;
}

QPointF MapCanvas::to_pixel(const Geometry& g, double gx, double gy) const {
  // Grid coordinates put cell centres at integers, y upwards (planner::contour_segments).
  return {g.plot.left() + (gx + 0.5) * g.cw,
          g.plot.top() + (static_cast<double>(map_->ny()) - 0.5 - gy) * g.ch};
}

QRectF MapCanvas::cell_rect(int ix, int iy) const {
  if (map_ == nullptr || ix < 0 || iy < 0 || ix >= map_->nx() || iy >= map_->ny()) return {};
  const Geometry g = geometry();
  return {g.plot.left() + ix * g.cw, g.plot.top() + (map_->ny() - 1 - iy) * g.ch, g.cw, g.ch};
}

bool MapCanvas::cell_at(const QPointF& pos, int* ix, int* iy) const {
  if (map_ == nullptr) return false;
  const Geometry g = geometry();
  if (!g.plot.contains(pos)) return false;
  const int cx = std::clamp(static_cast<int>((pos.x() - g.plot.left()) / g.cw), 0, map_->nx() - 1);
  const int row = std::clamp(static_cast<int>((pos.y() - g.plot.top()) / g.ch), 0, map_->ny() - 1);
  *ix = cx;
  *iy = map_->ny() - 1 - row;
  return true;
}

QString MapCanvas::tooltip_at(const QPointF& pos) const {
  int ix = 0;
  int iy = 0;
  if (!cell_at(pos, &ix, &iy)) return {};
  return map_->cell_text(ix, iy);
}

bool MapCanvas::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = tooltip_at(help->pos());
    int ix = 0;
    int iy = 0;
    if (text.isEmpty() || !cell_at(help->pos(), &ix, &iy)) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this, cell_rect(ix, iy).toAlignedRect());
    }
    return true;
  }
  return QWidget::event(event);
}

void MapCanvas::mousePressEvent(QMouseEvent* event) {
  int ix = 0;
  int iy = 0;
  if (event->button() == Qt::LeftButton && cell_at(event->position(), &ix, &iy)) {
    set_selected(ix, iy);
    emit cellClicked(ix, iy);
    return;
  }
  QWidget::mousePressEvent(event);
}

void MapCanvas::paintEvent(QPaintEvent* /*event*/) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  p.setRenderHint(QPainter::Antialiasing);
  std::fill(drawn_.begin(), drawn_.end(), 0);
  const QFont base = font();
  const QFontMetricsF fm(base);
  if (map_ == nullptr) {
    p.setPen(QColor(0x55, 0x55, 0x55));
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
               QStringLiteral("Open a map.json written by `kvsim map` (File > Open map...)"));
    return;
  }
  const Geometry g = geometry();
  const int nx = map_->nx();
  const int ny = map_->ny();

  // Title: which pair, and what the gain is a ratio of.
  QFont title = base;
  title.setBold(true);
  title.setPointSizeF(base.pointSizeF() * 1.15);
  p.setFont(title);
  p.setPen(kInk);
  const QString pair_name =
      pair_ >= 0 ? map_->pairs[static_cast<std::size_t>(pair_)].name : QStringLiteral("no pairs");
  p.drawText(QRectF(g.plot.left(), 4, width() - g.plot.left() - 8, fm.height() * 1.3 + 6),
             Qt::AlignLeft | Qt::AlignVCenter,
             QStringLiteral("%1: %2").arg(pair_name, map_->gain_meaning()));
  p.setFont(base);

  // Cells, with the gain written where it fits.
  QFont cell_font = base;
  cell_font.setPointSizeF(base.pointSizeF() * 0.95);
  const QFontMetricsF cfm(cell_font);
  std::vector<CellText> cell_texts;  // written after the lines, which they interrupt
  for (int iy = 0; iy < ny; ++iy) {
    for (int ix = 0; ix < nx; ++ix) {
      const std::size_t k = static_cast<std::size_t>(iy) * static_cast<std::size_t>(nx) +
                            static_cast<std::size_t>(ix);
      const double gain = k < grid_.size() ? grid_[k] : std::nan("");
      const QRectF r(g.plot.left() + ix * g.cw, g.plot.top() + (ny - 1 - iy) * g.ch, g.cw, g.ch);
      const QColor fill = map_gain_colour(gain);
      p.fillRect(r, fill);
      const QString text = map_gain_text(gain);
      if (std::isfinite(gain) && cfm.horizontalAdvance(text) + 6 <= g.cw &&
          cfm.height() + 2 <= g.ch) {
        const QSizeF ts(cfm.horizontalAdvance(text), cfm.height());
        cell_texts.push_back(
            {QRectF(r.center() - QPointF(ts.width() / 2, ts.height() / 2), ts), text,
             map_gain_dark(gain) ? QColor(Qt::white) : QColor(0x22, 0x22, 0x22), fill});
      }
    }
  }
  // Thin white lines between the cells.
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setPen(QPen(Qt::white, 1));
  for (int ix = 1; ix < nx; ++ix)
    p.drawLine(QPointF(g.plot.left() + ix * g.cw, g.plot.top()),
               QPointF(g.plot.left() + ix * g.cw, g.plot.bottom()));
  for (int iy = 1; iy < ny; ++iy)
    p.drawLine(QPointF(g.plot.left(), g.plot.top() + iy * g.ch),
               QPointF(g.plot.right(), g.plot.top() + iy * g.ch));
  p.setRenderHint(QPainter::Antialiasing);

  // Contour lines at 1x..4x (planner::contour_segments, as the HTML report), each labelled at
  // the segment nearest its middle whose label clears the labels already placed and the gains
  // written in the cells (else the labels alone, else the middle segment).
  QFont label_font = base;
  label_font.setBold(true);
  const QFontMetricsF lfm(label_font);
  std::vector<QRectF> placed;
  std::vector<QString> placed_text;
  for (std::size_t l = 0; l < kLevels; ++l) {
    const double level = planner::kMapContourLevels[l];
    const auto segs =
        planner::contour_segments(grid_, static_cast<std::size_t>(nx),
                                  static_cast<std::size_t>(ny), level, planner::kMapContourTolerance);
    drawn_[l] = segs.size();
    if (segs.empty()) continue;
    p.setPen(contour_pen(l));
    for (const auto& s : segs) p.drawLine(to_pixel(g, s.x0, s.y0), to_pixel(g, s.x1, s.y1));
    const QString text = level_text(level);
    const QSizeF size(lfm.horizontalAdvance(text) + 4, lfm.height());
    // Candidates: the middle segment (in scan order, as the HTML report), then outwards.
    const std::size_t mid = segs.size() / 2;
    std::vector<std::size_t> order{mid};
    for (std::size_t off = 1; off < segs.size(); ++off) {
      if (mid + off < segs.size()) order.push_back(mid + off);
      if (off <= mid) order.push_back(mid - off);
    }
    const auto overlaps = [](const std::vector<QRectF>& rects, const QRectF& r) {
      return std::any_of(rects.begin(), rects.end(),
                         [&r](const QRectF& o) { return o.intersects(r); });
    };
    const auto on_text = [&cell_texts](const QRectF& r) {
      return std::any_of(cell_texts.begin(), cell_texts.end(),
                         [&r](const CellText& t) { return t.box.intersects(r); });
    };
    const auto candidate = [&](std::size_t i) {
      const QPointF c =
          (to_pixel(g, segs[i].x0, segs[i].y0) + to_pixel(g, segs[i].x1, segs[i].y1)) / 2;
      return QRectF(QPointF(c.x() - size.width() / 2, c.y() - size.height() / 2), size);
    };
    QRectF chosen = candidate(mid);  // kept when no candidate clears the labels
    int best = 0;                    // 1: clears the labels, 2: and the gains
    for (const std::size_t i : order) {
      const QRectF r = candidate(i);
      if (!g.plot.contains(r) || overlaps(placed, r)) continue;
      const int score = on_text(r) ? 1 : 2;
      if (score > best) {
        best = score;
        chosen = r;
        if (score == 2) break;
      }
    }
    placed.push_back(chosen);
    placed_text.push_back(text);
    // A line in several pieces (a ridge, a valley) gets a label on each far-off piece too: at most
    // two more, a third of the plot away from this level's other labels, where they clear all.
    const double apart = std::max(g.plot.width(), g.plot.height()) / 3;
    std::vector<QPointF> mine{chosen.center()};
    for (const std::size_t i : order) {
      if (mine.size() >= 3) break;
      const QRectF r = candidate(i);
      const bool far = std::all_of(mine.begin(), mine.end(), [&](const QPointF& o) {
        return std::hypot(o.x() - r.center().x(), o.y() - r.center().y()) >= apart;
      });
      if (!far || !g.plot.contains(r) || overlaps(placed, r) || on_text(r)) continue;
      mine.push_back(r.center());
      placed.push_back(r);
      placed_text.push_back(text);
    }
  }
  // The gains over the lines, then the lines' labels over everything.
  for (const CellText& t : cell_texts) {
    halo_text(p, QPointF(t.box.left(), t.box.top() + cfm.ascent()), cell_font, t.text, t.ink,
              t.cell, 3.0);
  }
  for (std::size_t k = 0; k < placed.size(); ++k) {
    halo_text(p, QPointF(placed[k].left() + 2, placed[k].top() + lfm.ascent()), label_font,
              placed_text[k]);
  }

  // The clicked cell: an orange frame (no contour line is orange).
  if (sel_ix_ >= 0 && sel_iy_ >= 0 && sel_ix_ < nx && sel_iy_ < ny) {
    p.setPen(QPen(QColor(230, 159, 0), 3.5, Qt::SolidLine, Qt::SquareCap, Qt::MiterJoin));
    p.setBrush(Qt::NoBrush);
    p.drawRect(cell_rect(sel_ix_, sel_iy_).adjusted(1.75, 1.75, -1.75, -1.75));
  }

  // Axes: the values of every x_step-th column and y_step-th row, then the titles.
  p.setFont(base);
  p.setPen(kInk);
  const double fh = fm.height();
  for (int ix = 0; ix < nx; ix += g.x_step) {
    const QString v = map_->x.values[ix];
    const double cx = g.plot.left() + (ix + 0.5) * g.cw;
    if (g.x_rotated) {
      p.save();
      p.translate(cx + fh * 0.35, g.plot.bottom() + 6);
      p.rotate(-45);
      p.drawText(QPointF(-fm.horizontalAdvance(v), fm.ascent()), v);
      p.restore();
    } else {
      p.drawText(QRectF(cx - g.cw / 2, g.plot.bottom() + 6, g.cw, fh), Qt::AlignCenter, v);
    }
  }
  for (int iy = 0; iy < ny; iy += g.y_step) {
    const double cy = g.plot.top() + (ny - 0.5 - iy) * g.ch;
    p.drawText(QRectF(0, cy - fh / 2, g.plot.left() - 8, fh), Qt::AlignRight | Qt::AlignVCenter,
               map_->y.values[iy]);
  }
  const QString xt = fm.elidedText(axis_title(map_->x), Qt::ElideLeft, g.plot.width());
  p.drawText(QRectF(g.plot.left(), height() - fh - 8, g.plot.width(), fh), Qt::AlignCenter, xt);
  const QString yt = fm.elidedText(axis_title(map_->y), Qt::ElideLeft, g.plot.height());
  p.save();
  p.translate(10, g.plot.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-g.plot.height() / 2, 0, g.plot.height(), fh), Qt::AlignCenter, yt);
  p.restore();

  paint_legend(p, g);
}

void MapCanvas::paint_legend(QPainter& p, const Geometry& g) const {
  const QFontMetricsF fm(font());
  const double fh = fm.height();
  const double x = g.legend_x;
  double y = g.plot.top();
  p.setPen(kInk);
  p.drawText(QPointF(x, y + fm.ascent()), QStringLiteral("gain"));
  y += fh + 4;
  // The colour bar, 4x at the top to 0.5x at the bottom on a log scale.
  const double bar_h = std::clamp(g.plot.height() * 0.45, 90.0, 220.0);
  const double bar_w = 16;
  constexpr int kSteps = 60;
  for (int k = 0; k < kSteps; ++k) {
    const double t = 2.0 - 3.0 * (k + 0.5) / kSteps;
    p.fillRect(QRectF(x, y + bar_h * k / kSteps, bar_w, bar_h / kSteps + 0.5),
               map_gain_colour(std::exp2(t)));
  }
  p.setPen(QPen(QColor(0x88, 0x88, 0x88), 0.8));
  p.drawRect(QRectF(x, y, bar_w, bar_h));
  p.setPen(kInk);
  for (const double gain : {0.5, 1.0, 2.0, 3.0, 4.0}) {
    const double ty = y + bar_h * (2.0 - std::log2(gain)) / 3.0;
    p.drawLine(QPointF(x + bar_w, ty), QPointF(x + bar_w + 4, ty));
    p.drawText(QPointF(x + bar_w + 7, ty + fm.ascent() / 2 - 1), level_text(gain));
  }
  y += bar_h + fh;
  // The lines.
  p.drawText(QPointF(x, y + fm.ascent()), QStringLiteral("contour lines"));
  y += fh + 2;
  for (std::size_t l = 0; l < kLevels; ++l) {
    const double cy = y + fh / 2;
    p.setPen(contour_pen(l));
    p.drawLine(QPointF(x + 2, cy), QPointF(x + 40, cy));
    p.setPen(kInk);
    p.drawText(QPointF(x + 48, cy + fm.ascent() / 2 - 1),
               QStringLiteral("%1 gain").arg(level_text(planner::kMapContourLevels[l])));
    y += fh + 3;
  }
  y += fh / 2;
  p.fillRect(QRectF(x + 2, y + 1, 16, fh - 2), map_gain_colour(std::nan("")));
  p.drawText(QPointF(x + 24, y + fm.ascent()), QStringLiteral("not complete"));
}

MapView::MapView(QWidget* parent)
    : QWidget(parent),
      canvas_(new MapCanvas(this)),
      open_(new QPushButton(QStringLiteral("Open map..."), this)),
      pair_(new QComboBox(this)),
      status_(new QLabel(
          QStringLiteral("Open a map.json written by `kvsim map` (File > Open map...)."), this)),
      cell_label_(new QLabel(this)),
      cell_model_(new MapCellModel(this)),
      cell_table_(new QTableView(this)),
      open_runs_(new QPushButton(QStringLiteral("Open runs in Results database"), this)) {
  open_->setObjectName(QStringLiteral("map_open"));
  pair_->setObjectName(QStringLiteral("map_pair"));
  pair_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  status_->setObjectName(QStringLiteral("map_status"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cell_label_->setObjectName(QStringLiteral("map_cell"));
  cell_label_->setWordWrap(true);
  cell_label_->setText(QStringLiteral("Click a cell to list its runs."));
  cell_table_->setObjectName(QStringLiteral("map_cell_runs"));
  cell_table_->setModel(cell_model_);
  cell_table_->verticalHeader()->hide();
  cell_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  cell_table_->horizontalHeader()->setStretchLastSection(true);
  cell_table_->setToolTip(QStringLiteral("Double-click a run to show it in the Results database"));
  // Room for a cell's three or four variants without scrolling.
  cell_table_->setMinimumHeight(cell_table_->horizontalHeader()->sizeHint().height() +
                                4 * cell_table_->verticalHeader()->defaultSectionSize() + 4);
  open_runs_->setObjectName(QStringLiteral("map_open_runs"));
  open_runs_->setEnabled(false);

  auto* bar = new QHBoxLayout();
  bar->addWidget(open_);
  bar->addWidget(new QLabel(QStringLiteral("Pair"), this));
  bar->addWidget(pair_);
  bar->addWidget(status_, 1);
  auto* below = new QWidget(this);
  auto* below_layout = new QVBoxLayout(below);
  below_layout->setContentsMargins(0, 0, 0, 0);
  auto* cell_bar = new QHBoxLayout();
  cell_bar->addWidget(cell_label_, 1);
  cell_bar->addWidget(open_runs_);
  below_layout->addLayout(cell_bar);
  below_layout->addWidget(cell_table_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(canvas_);
  split->addWidget(below);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setCollapsible(0, false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  connect(open_, &QPushButton::clicked, this, &MapView::openRequested);
  connect(pair_, &QComboBox::currentIndexChanged, this, [this](int i) { canvas_->set_pair(i); });
  connect(canvas_, &MapCanvas::cellClicked, this, &MapView::select_cell);
  connect(open_runs_, &QPushButton::clicked, this, &MapView::open_runs);
  connect(cell_table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    const QString key =
        cell_model_->index(i.row(), MapCellModel::kRunKey).data(Qt::EditRole).toString();
    if (map_ && !key.isEmpty() && !map_->db_path().isEmpty())
      emit openRuns(map_->db_path(), QStringList{key});
  });
}

MapView::~MapView() = default;

bool MapView::open(const QString& path) {
  std::unique_ptr<MapData> loaded;
  try {
    loaded = std::make_unique<MapData>(load_map(path));
  } catch (const InputError& e) {
    const std::string msg =
        e.diagnostics().empty() ? e.what() : e.diagnostics().front().to_string();
    error_ = QStringLiteral("Cannot open %1").arg(QString::fromStdString(msg));
    status_->setText(
        QStringLiteral("<span style='color:#b00020'>%1</span>").arg(error_.toHtmlEscaped()));
    return false;
  }
  error_.clear();
  // The cell table and the canvas point into the map: let go of the old one first.
  cell_model_->clear();
  canvas_->set_map(nullptr, -1);
  map_ = std::move(loaded);
  {
    const QSignalBlocker block(pair_);
    pair_->clear();
    for (const MapPairInfo& pr : map_->pairs) pair_->addItem(pr.name);
    pair_->setCurrentIndex(map_->default_pair());
  }
  canvas_->set_map(map_.get(), map_->default_pair());
  // With one seed a run's value is the figure beside it: shown once.
  const bool repeated = map_->slo.isEmpty() && map_->seeds == 1 &&
                        std::any_of(kMapFigures.begin(), kMapFigures.end(), [this](const char* f) {
                          return map_->metric == QString::fromUtf8(f);
                        });
  cell_table_->setColumnHidden(MapCellModel::kValue, repeated);
  cell_table_->resizeColumnsToContents();
  cell_label_->setText(QStringLiteral("Click a cell to list its runs."));
  open_runs_->setEnabled(false);
  const int missing = map_->missing_cells();
  QString text = QStringLiteral("%1: %2, %3 x %4 cells, %5 variants, %6 seed%7 per cell")
                     .arg(QFileInfo(path).fileName(), map_->scenario)
                     .arg(map_->nx())
                     .arg(map_->ny())
                     .arg(map_->variants.size())
                     .arg(map_->seeds)
                     .arg(map_->seeds > 1 ? QStringLiteral("s") : QString());
  if (missing > 0)
    text +=
        QStringLiteral("; %1 cells not complete (grey): run the map's other shards").arg(missing);
  status_->setText(text.toHtmlEscaped());
  status_->setToolTip(QFileInfo(path).absoluteFilePath());
  return true;
}

bool MapView::set_pair(const QString& name) {
  if (!map_) return false;
  const int i = map_->pair_index(name);
  if (i < 0) return false;
  pair_->setCurrentIndex(i);
  return true;
}

bool MapView::select_cell(int ix, int iy) {
  if (!map_ || ix < 0 || iy < 0 || ix >= map_->nx() || iy >= map_->ny()) return false;
  canvas_->set_selected(ix, iy);
  cell_model_->set_cell(map_.get(), ix, iy);
  cell_table_->resizeColumnsToContents();
  const MapCellData& c = map_->cell(ix, iy);
  QString text = QStringLiteral("<b>%1 = %2, %3 = %4</b>: %5 run%6")
                     .arg(map_->x.name.toHtmlEscaped(), map_->x.values[ix].toHtmlEscaped(),
                          map_->y.name.toHtmlEscaped(), map_->y.values[iy].toHtmlEscaped())
                     .arg(cell_model_->run_keys().size())
                     .arg(cell_model_->run_keys().size() == 1 ? QString() : QStringLiteral("s"));
  for (std::size_t p = 0; p < map_->pairs.size(); ++p) {
    text += QStringLiteral("; %1 %2x")
                .arg(map_->pairs[p].name.toHtmlEscaped(), map_gain_text(c.gains[p]));
  }
  if (!c.complete) text += QStringLiteral(" (not complete)");
  cell_label_->setText(text);
  const QString db = map_->db_path();
  open_runs_->setEnabled(!cell_model_->run_keys().isEmpty() && !db.isEmpty());
  open_runs_->setToolTip(db.isEmpty() ? QStringLiteral("The map names no results database")
                                      : QStringLiteral("Show these runs of %1").arg(db));
  return true;
}

bool MapView::open_runs() {
  if (!map_) return false;
  const QStringList keys = cell_model_->run_keys();
  const QString db = map_->db_path();
  if (keys.isEmpty() || db.isEmpty()) return false;
  emit openRuns(db, keys);
  return true;
}

}  // namespace kvsim::gui
