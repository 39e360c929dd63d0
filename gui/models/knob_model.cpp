#include "gui/models/knob_model.hpp"

#include <array>
#include <functional>
#include <string_view>

#include "gui/models/scenario_document.hpp"
#include "sim/scenario/tables.hpp"

namespace kvsim::gui {
namespace {

using scenario::Field;
using scenario::FieldKind;
using scenario::StructTable;

// Path patterns of the knobs planners change most: '*' is one segment, a trailing '**' any rest.
constexpr std::array<std::string_view, 26> kCommon = {
    "seed",
    "hardware.servers.*.count",
    "hardware.servers.*.gpus_per_server",
    "hardware.servers.*.gpu.name",
    "hardware.servers.*.gpu.memory",
    "hardware.servers.*.gpu.host_link.**",
    "hardware.servers.*.host.**",
    "hardware.servers.*.nic.**",
    "hardware.servers.*.local_nvme.**",
    "hardware.remote_store.**",
    "model.name",
    "engine.max_num_seqs",
    "engine.max_num_batched_tokens",
    "engine.gpu_memory_utilization",
    "engine.max_model_len",
    "engine.block_size",
    "engine.enable_prefix_caching",
    "engine.num_gpu_blocks_override",
    "kv_offload.**",
    "routing.**",
    "compute.kind",
    "workload.clients.**",
    "workload.generation.num_conversations",
    "workload.generation.prompt_input.**",
    "workload.generation.prompt_output.**",
    "workload.trace.**",
};

bool glob_match(std::string_view pattern, std::string_view path) {
  while (true) {
    const auto pdot = pattern.find('.');
    const auto seg = pattern.substr(0, pdot);
    if (seg == "**") return !path.empty();
    const auto dot = path.find('.');
    const auto part = path.substr(0, dot);
    if (seg != "*" && seg != part) return false;
    if (pdot == std::string_view::npos || dot == std::string_view::npos) {
      return pdot == std::string_view::npos && dot == std::string_view::npos;
    }
    pattern = pattern.substr(pdot + 1);
    path = path.substr(dot + 1);
  }
}

bool is_common(const std::string& path) {
  for (const auto p : kCommon) {
    if (glob_match(p, path)) return true;
  }
  return false;
}

std::optional<double> numeric_value(const Field& f, const void* owner) {
  const void* m = f.get(owner);
  const double scale = axis_unit(f.kind).scale;
  switch (f.kind) {
    case FieldKind::kInt:
      return static_cast<double>(*static_cast<const int*>(m));
    case FieldKind::kInt64:
      return static_cast<double>(*static_cast<const std::int64_t*>(m));
    case FieldKind::kUint64:
      return static_cast<double>(*static_cast<const std::uint64_t*>(m));
    case FieldKind::kDouble:
      return *static_cast<const double*>(m);
    case FieldKind::kBytes:
      return static_cast<const Bytes*>(m)->as_double() / scale;
    case FieldKind::kByteRate:
      return static_cast<const BytesPerSec*>(m)->value / scale;
    case FieldKind::kFlopRate:
      return static_cast<const FlopsPerSec*>(m)->value / scale;
    case FieldKind::kTime:
      return static_cast<double>(*static_cast<const SimTime*>(m)) / scale;
    default:
      return std::nullopt;
  }
}

using Visit = std::function<void(const std::string& path, const Field& field, const void* owner)>;

void walk(const StructTable& table, const void* owner, const std::string& prefix,
          const Visit& visit) {
  for (const Field& f : table.fields) {
    const std::string path = prefix + f.key;
    switch (f.kind) {
      case FieldKind::kStruct:
        walk(*f.nested, f.get(owner), path + ".", visit);
        break;
      case FieldKind::kGroup:
        walk(*f.nested, owner, path + ".", visit);
        break;
      case FieldKind::kOptionalStruct: {
        void* m = const_cast<void*>(f.get(owner));
        if (f.has_value(m)) walk(*f.nested, f.value(m), path + ".", visit);
        break;
      }
      case FieldKind::kStructList: {
        void* m = const_cast<void*>(f.get(owner));
        const std::size_t n = f.size(m);
        for (std::size_t i = 0; i < n; ++i)
          walk(*f.nested, f.at(m, i), path + "." + std::to_string(i) + ".", visit);
        break;
      }
      case FieldKind::kStringList:
      case FieldKind::kDoubleList:
        break;
      default:
        visit(path, f, owner);
    }
  }
}

bool skipped_top_level(const std::string& path) {
  return path == "name" || path == "description" || path.rfind("output.", 0) == 0;
}

Knob make_knob(const std::string& path, const Field& f, const void* owner) {
  Knob k;
  k.path = path;
  k.field = &f;
  k.value = scenario::scalar_text(f, owner);
  k.number = numeric_value(f, owner);
  k.editable = f.kind != FieldKind::kDistribution;
  k.common = is_common(path);
  return k;
}

}  // namespace

AxisUnit axis_unit(FieldKind kind) {
  switch (kind) {
    case FieldKind::kBytes:
      return {"GiB", 1024.0 * 1024.0 * 1024.0};
    case FieldKind::kByteRate:
      return {"GB/s", 1e9};
    case FieldKind::kFlopRate:
      return {"TFLOP/s", 1e12};
    case FieldKind::kTime:
      return {"ms", 1e6};
    default:
      return {"", 1.0};
  }
}

bool is_numeric_kind(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInt:
    case FieldKind::kInt64:
    case FieldKind::kUint64:
    case FieldKind::kDouble:
    case FieldKind::kBytes:
    case FieldKind::kByteRate:
    case FieldKind::kFlopRate:
    case FieldKind::kTime:
      return true;
    default:
      return false;
  }
}

std::vector<Knob> collect_knobs(const scenario::Scenario& sc) {
  std::vector<Knob> out;
  walk(scenario::scenario_table(), &sc, "",
       [&](const std::string& path, const Field& f, const void* owner) {
         if (!skipped_top_level(path)) out.push_back(make_knob(path, f, owner));
       });
  return out;
}

std::optional<Knob> find_knob(const scenario::Scenario& sc, const std::string& path) {
  std::optional<Knob> found;
  walk(scenario::scenario_table(), &sc, "",
       [&](const std::string& p, const Field& f, const void* owner) {
         if (!found && p == path) found = make_knob(p, f, owner);
       });
  return found;
}

KnobModel::KnobModel(ScenarioDocument* doc, QObject* parent)
    : QAbstractTableModel(parent), doc_(doc) {
  connect(doc_, &ScenarioDocument::scenarioChanged, this, &KnobModel::refresh);
  refresh();
}

int KnobModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(knobs_.size());
}

int KnobModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant KnobModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Knob& k = knobs_[static_cast<std::size_t>(index.row())];
  const Field& f = *k.field;
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
      switch (index.column()) {
        case kKey:
          return QString::fromStdString(k.path);
        case kValue:
          return QString::fromStdString(k.value);
        case kKind: {
          QString kind = QString::fromUtf8(scenario::field_kind_name(f.kind));
          const auto unit = axis_unit(f.kind);
          if (*unit.name != '\0') kind += QStringLiteral(" (%1)").arg(QString::fromUtf8(unit.name));
          return kind;
        }
        case kDescription:
          return QString::fromStdString(f.doc);
        default:
          return {};
      }
    case Qt::ToolTipRole: {
      QString tip = QString::fromStdString(f.doc);
      if (!f.range.empty()) {
        tip += QStringLiteral("\nAllowed: ") +
               QString::fromStdString(
                   f.range.describe([&f](double b) { return scenario::format_bound(f, b); }));
      }
      if (!k.editable) tip += QStringLiteral("\nEdit distributions in the YAML text.");
      return tip;
    }
    case kChoicesRole: {
      QStringList names;
      if (f.kind == FieldKind::kEnum) {
        for (const auto& n : f.enum_names) names << QString::fromStdString(n);
      } else if (f.kind == FieldKind::kBool) {
        names << QStringLiteral("true") << QStringLiteral("false");
      }
      return names;
    }
    case kCommonRole:
      return k.common;
    case kPathRole:
      return QString::fromStdString(k.path);
    case kNumericRole:
      return is_numeric_kind(f.kind);
    default:
      return {};
  }
}

QVariant KnobModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kKey:
      return QStringLiteral("Key");
    case kValue:
      return QStringLiteral("Value");
    case kKind:
      return QStringLiteral("Kind (unit)");
    case kDescription:
      return QStringLiteral("Meaning");
    default:
      return {};
  }
}

Qt::ItemFlags KnobModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  Qt::ItemFlags fl = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
  if (index.column() == kValue && knobs_[static_cast<std::size_t>(index.row())].editable)
    fl |= Qt::ItemIsEditable;
  return fl;
}

bool KnobModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !index.isValid() || index.column() != kValue) return false;
  const Knob& k = knobs_[static_cast<std::size_t>(index.row())];
  if (!k.editable) return false;
  const std::string text = value.toString().trimmed().toStdString();
  if (text == k.value) return true;
  const std::string path = k.path;  // refresh() may replace knobs_
  if (!doc_->set_value(path, text)) {
    emit editRejected(QString::fromStdString(path) + QStringLiteral(": ") + doc_->last_error());
    return false;
  }
  return true;
}

int KnobModel::row_of(const std::string& path) const {
  for (std::size_t i = 0; i < knobs_.size(); ++i) {
    if (knobs_[i].path == path) return static_cast<int>(i);
  }
  return -1;
}

void KnobModel::refresh() {
  // A text that does not decode keeps the last good form, so typing does not empty it.
  if (!doc_->scenario()) return;
  std::vector<Knob> next = collect_knobs(*doc_->scenario());
  bool same = next.size() == knobs_.size();
  for (std::size_t i = 0; same && i < next.size(); ++i) same = next[i].path == knobs_[i].path;
  if (!same) {
    beginResetModel();
    knobs_ = std::move(next);
    endResetModel();
    return;
  }
  int first = -1;
  int last = -1;
  for (std::size_t i = 0; i < next.size(); ++i) {
    if (next[i].value != knobs_[i].value) {
      if (first < 0) first = static_cast<int>(i);
      last = static_cast<int>(i);
    }
    knobs_[i] = std::move(next[i]);
  }
  if (first >= 0) emit dataChanged(index(first, kValue), index(last, kValue));
}

}  // namespace kvsim::gui
