#pragma once
// The outputs of a break-even map (offload_map.hpp): a self-contained HTML page (one heatmap per
// pair of variants with contour lines at 1x, 2x, 3x and 4x and every cell's values on hover; inline
// CSS and SVG, no scripts, nothing fetched), the grid as JSON (docs/results.md) and CSV, and a text
// table per pair for the terminal. The contour lines come from contour_segments, which the GUI
// draws too.
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/json_writer.hpp"
#include "sim/planner/offload_map.hpp"

namespace kvsim::planner {

// The gain levels a map draws as contour lines.
inline constexpr double kMapContourLevels[] = {1.0, 2.0, 3.0, 4.0};

// Gains within this fraction of a level count as at the level when its line is drawn: one seed's
// run-to-run noise (the gain of two variants that do the same thing scatters by about +-2 % over
// the seed deployment's maps), so a region where offload changes nothing has no 1x line wandering
// through it; a line moves by at most this much.
inline constexpr double kMapContourTolerance = 0.02;

// A gain's colour in a map (the HTML page and the GUI): white at 1x, light to dark blue at 2x,
// 3x and 4x (and above), red towards 0.5x (and below), interpolated in log2(gain); grey (217)
// for no gain (NaN, not positive). Blues and red from ColorBrewer's RdBu scheme.
struct MapRgb {
  int r = 0;
  int g = 0;
  int b = 0;
};
MapRgb map_gain_colour(double gain);
// Whether text on that colour should be white (the dark blues, from about 2.6x).
bool map_gain_dark(double gain);

// One straight piece of a contour line, in grid coordinates: (0, 0) is the centre of the cell
// (ix 0, iy 0) and (nx - 1, ny - 1) the centre of the last.
struct ContourSegment {
  double x0 = 0;
  double y0 = 0;
  double x1 = 0;
  double y1 = 0;
};

// Marching squares (Lorensen and Cline 1987, in its 2-D form) over values sampled at the cell
// centres, row-major (values[iy * nx + ix]): within each square of four neighbouring centres the
// line where the bilinear interpolant crosses `level`, cut at the square's edges by linear
// interpolation; the two saddle cases are resolved by the mean of the four corners. A square with
// a NaN corner has no line. Values within `tolerance` x level of the level are taken as the level
// (and so as above it).
std::vector<ContourSegment> contour_segments(const std::vector<double>& values, std::size_t nx,
                                             std::size_t ny, double level,
                                             double tolerance = 0.0);

// The pairs (i, j), i < j, of variant indices a map compares: variant j's gain over variant i.
std::vector<std::pair<std::size_t, std::size_t>> map_pairs(const MapResult& map);

// The gains of variant j over variant i, row-major like the cells.
std::vector<double> gain_grid(const MapResult& map, std::size_t i, std::size_t j);

// "nvme-net / vram-only"
std::string pair_name(const MapResult& map, std::size_t i, std::size_t j);

io::Json map_json(const MapResult& map);
void write_map_csv(std::ostream& os, const MapResult& map);
void write_map_html(std::ostream& os, const MapResult& map);
// The text report: the question, one gain table per pair (y from the top down), the range and
// the cells at or above each contour level, and what this invocation ran.
std::string format_map_text(const MapResult& map);

}  // namespace kvsim::planner
