#pragma once
// The Map tab: a break-even map from `kvsim map` (map.json) as a heatmap of one pair of KV-tier
// variants (a combo box picks the pair): cells coloured by the gain (white at 1x, blues up to
// 4x, red below 1x, grey where incomplete, the palette of the map's HTML report), the gain
// written in each cell where it fits, contour lines at 1x, 2x, 3x and 4x from
// planner::contour_segments with their labels, axis values and titles, and a legend. Hovering a
// cell shows its values; clicking it lists its runs below the map, and "Open runs in Results
// database" shows them in the results view, filtered to their run keys.
#include <QWidget>
#include <memory>
#include <vector>

#include "gui/models/map_data.hpp"

class QComboBox;
class QLabel;
class QPushButton;
class QTableView;

namespace kvsim::gui {

// The heatmap itself, painted with QPainter.
class MapCanvas : public QWidget {
  Q_OBJECT

 public:
  explicit MapCanvas(QWidget* parent = nullptr);
  // Draws `map` (kept by pointer; nullptr draws a hint) with pair `pair`.
  void set_map(const MapData* map, int pair);
  void set_pair(int pair);
  int pair() const { return pair_; }
  // Outlines a cell (a click's); -1, -1 for none.
  void set_selected(int ix, int iy);
  // Where cell (ix, iy) is drawn at the widget's current size (empty without a map).
  QRectF cell_rect(int ix, int iy) const;
  // The cell under a point of the widget; false outside the grid.
  bool cell_at(const QPointF& pos, int* ix, int* iy) const;
  // The hover text at a point of the widget ("" outside the grid).
  QString tooltip_at(const QPointF& pos) const;
  // The contour segments the last paint drew, per level of planner::kMapContourLevels.
  const std::vector<std::size_t>& drawn_segments() const { return drawn_; }

  QSize sizeHint() const override { return {900, 560}; }
  QSize minimumSizeHint() const override { return {360, 240}; }

 signals:
  void cellClicked(int ix, int iy);

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  // The geometry of the plot at the current size and fonts.
  struct Geometry {
    QRectF plot;    // the cells
    double cw = 0;  // cell width and height
    double ch = 0;
    bool x_rotated = false;  // x labels at an angle (they do not fit level)
    int x_step = 1;          // every x_step-th x label, every y_step-th y label
    int y_step = 1;
    double legend_x = 0;  // the legend's left edge
  };
  Geometry geometry() const;
  QPointF to_pixel(const Geometry& g, double gx, double gy) const;
  void paint_legend(QPainter& p, const Geometry& g) const;

  const MapData* map_ = nullptr;
  int pair_ = -1;
  std::vector<double> grid_;
  int sel_ix_ = -1;
  int sel_iy_ = -1;
  std::vector<std::size_t> drawn_;
};

class MapView : public QWidget {
  Q_OBJECT

 public:
  explicit MapView(QWidget* parent = nullptr);
  ~MapView() override;

  // Opens map.json; on failure the message is shown in the view (the map shown before stays)
  // and false returned.
  bool open(const QString& path);
  // Shows the pair called `name` ("nvme-net / vram-only"); false when the map has none.
  bool set_pair(const QString& name);
  // Lists a cell's runs below the map, as a click on it does; false outside the grid.
  bool select_cell(int ix, int iy);
  // Asks for the selected cell's runs in the results view (openRuns); false when there are
  // none or the map names no database.
  bool open_runs();

  const MapData* map() const { return map_.get(); }
  // Why the last open failed, as plain text ("" after a success).
  const QString& last_error() const { return error_; }
  MapCanvas* canvas() const { return canvas_; }
  QComboBox* pair_box() const { return pair_; }
  QLabel* status_label() const { return status_; }
  QLabel* cell_label() const { return cell_label_; }
  MapCellModel* cell_model() const { return cell_model_; }
  QTableView* cell_table() const { return cell_table_; }
  QPushButton* open_runs_button() const { return open_runs_; }

 signals:
  // "Open map..." was pressed.
  void openRequested();
  // Show these runs of the database `db` in the results view.
  void openRuns(const QString& db, const QStringList& run_keys);

 private:
  std::unique_ptr<MapData> map_;
  QString error_;
  MapCanvas* canvas_;
  QPushButton* open_;
  QComboBox* pair_;
  QLabel* status_;
  QLabel* cell_label_;
  MapCellModel* cell_model_;
  QTableView* cell_table_;
  QPushButton* open_runs_;
};

}  // namespace kvsim::gui
