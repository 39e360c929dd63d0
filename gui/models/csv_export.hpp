#pragma once
// Any table model as CSV (RFC 4180 quoting): a header row from the horizontal headers (and a
// first column from the vertical headers when `row_headers`), then the display text of each cell.
#include <QAbstractItemModel>
#include <QString>

namespace kvsim::gui {

QString model_to_csv(const QAbstractItemModel& model, bool row_headers = false);

}  // namespace kvsim::gui
