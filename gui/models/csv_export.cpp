#include "gui/models/csv_export.hpp"

#include <QStringList>

namespace kvsim::gui {
namespace {

QString quote(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) &&
      !s.contains(QLatin1Char('\n')))
    return s;
  QString q = s;
  q.replace(QStringLiteral("\""), QStringLiteral("\"\""));
  return QLatin1Char('"') + q + QLatin1Char('"');
}

}  // namespace

QString model_to_csv(const QAbstractItemModel& model, bool row_headers) {
  QString out;
  QStringList cells;
  if (row_headers) cells << QString();
  for (int c = 0; c < model.columnCount(); ++c)
    cells << quote(model.headerData(c, Qt::Horizontal).toString());
  out += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (int r = 0; r < model.rowCount(); ++r) {
    cells.clear();
    if (row_headers) cells << quote(model.headerData(r, Qt::Vertical).toString());
    for (int c = 0; c < model.columnCount(); ++c)
      cells << quote(model.data(model.index(r, c)).toString());
    out += cells.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace kvsim::gui
