#pragma once
// A small break-even map written by hand in the shape of `kvsim map`'s map.json (planner::map_json)
// so that the map tests know every value without running the simulator: a 3 x 3 grid, variants
// vram-only, dram and nvme-net, users 4/16/64 across and prefix tokens 1000/4000/16000 up.
// vram-only serves 2 requests/s in every cell; the other variants serve 2 x their gain over it.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <array>

namespace kvsim::gui::test {

// Gains over vram-only, [iy][ix] (iy = 0 is the bottom row, 1000 prefix tokens).
inline constexpr std::array<std::array<double, 3>, 3> kNvmeGain = {
    {{0.8, 1.5, 2.5}, {1.2, 2.2, 3.5}, {1.8, 3.2, 4.5}}};
inline constexpr std::array<std::array<double, 3>, 3> kDramGain = {
    {{0.9, 1.1, 1.3}, {1.0, 1.4, 1.6}, {1.2, 1.5, 1.9}}};
inline const char* const kYName = "workload.generation.prompt_input.prefix_num_tokens.average";

// A run key that names its cell and variant: "k-nvme-net-2-1-s0".
inline QString fixture_run_key(const QString& variant, int ix, int iy) {
  return QStringLiteral("k-%1-%2-%3-s0").arg(variant).arg(ix).arg(iy);
}

// The map's JSON; the cell (incomplete_ix, incomplete_iy) has not run nvme-net yet.
inline QByteArray fixture_map_json(const QString& db = QStringLiteral("map.db"),
                                   int incomplete_ix = -1, int incomplete_iy = -1) {
  const QStringList variants = {QStringLiteral("vram-only"), QStringLiteral("dram"),
                                QStringLiteral("nvme-net")};
  QJsonObject root;
  root[QStringLiteral("schema_version")] = 1;
  root[QStringLiteral("command")] = QStringLiteral("map");
  root[QStringLiteral("scenario")] = QStringLiteral("fixture");
  root[QStringLiteral("db")] = db;
  root[QStringLiteral("metric")] = QStringLiteral("requests_per_sec");
  root[QStringLiteral("higher_is_better")] = true;
  root[QStringLiteral("slo")] = QJsonValue::Null;
  root[QStringLiteral("seeds")] = 1;
  root[QStringLiteral("x")] =
      QJsonObject{{QStringLiteral("name"), QStringLiteral("users")},
                  {QStringLiteral("log"), true},
                  {QStringLiteral("values"),
                   QJsonArray{QStringLiteral("4"), QStringLiteral("16"), QStringLiteral("64")}}};
  root[QStringLiteral("y")] = QJsonObject{
      {QStringLiteral("name"), QString::fromUtf8(kYName)},
      {QStringLiteral("log"), true},
      {QStringLiteral("values"),
       QJsonArray{QStringLiteral("1000"), QStringLiteral("4000"), QStringLiteral("16000")}}};
  QJsonArray vj;
  for (const QString& v : variants)
    vj.append(
        QJsonObject{{QStringLiteral("name"), v},
                    {QStringLiteral("description"), QStringLiteral("the %1 variant").arg(v)}});
  root[QStringLiteral("variants")] = vj;
  // Pairs as map_pairs orders them: (0, 1), (0, 2), (1, 2).
  const auto pair = [](const QString& num, const QString& den) {
    return QJsonObject{{QStringLiteral("name"), num + QStringLiteral(" / ") + den},
                       {QStringLiteral("numerator"), num},
                       {QStringLiteral("denominator"), den}};
  };
  root[QStringLiteral("pairs")] =
      QJsonArray{pair(variants[1], variants[0]), pair(variants[2], variants[0]),
                 pair(variants[2], variants[1])};
  QJsonArray cells;
  for (int iy = 0; iy < 3; ++iy) {
    for (int ix = 0; ix < 3; ++ix) {
      const bool incomplete = ix == incomplete_ix && iy == incomplete_iy;
      const double gd = kDramGain[static_cast<std::size_t>(iy)][static_cast<std::size_t>(ix)];
      const double gn = kNvmeGain[static_cast<std::size_t>(iy)][static_cast<std::size_t>(ix)];
      const std::array<double, 3> value = {2.0, 2.0 * gd, 2.0 * gn};
      QJsonObject vs;
      for (std::size_t v = 0; v < 3; ++v) {
        const bool done = !(incomplete && v == 2);
        QJsonObject o;
        o[QStringLiteral("complete")] = done;
        o[QStringLiteral("value")] = done ? QJsonValue(value[v]) : QJsonValue(QJsonValue::Null);
        o[QStringLiteral("seed_values")] = done ? QJsonArray{value[v]} : QJsonArray{};
        o[QStringLiteral("requests_per_sec")] = done ? QJsonValue(value[v]) : QJsonValue();
        o[QStringLiteral("ttft_ms_p50")] = 100.0 / value[v];
        o[QStringLiteral("ttft_ms_p90")] = 400.0 / value[v];
        o[QStringLiteral("ttft_ms_p99")] = 900.0 / value[v];
        o[QStringLiteral("tpot_ms_p50")] = 20.0;
        o[QStringLiteral("tpot_ms_p90")] = 25.0;
        o[QStringLiteral("tpot_ms_p99")] = 30.0;
        o[QStringLiteral("run_keys")] =
            done ? QJsonArray{fixture_run_key(variants[static_cast<int>(v)], ix, iy)}
                 : QJsonArray{};
        vs[variants[static_cast<int>(v)]] = o;
      }
      const auto gain = [incomplete](double g, bool uses_nvme) {
        return QJsonObject{{QStringLiteral("gain"), incomplete && uses_nvme
                                                        ? QJsonValue(QJsonValue::Null)
                                                        : QJsonValue(g)}};
      };
      cells.append(QJsonObject{
          {QStringLiteral("ix"), ix},
          {QStringLiteral("iy"), iy},
          {QStringLiteral("x"),
           root[QStringLiteral("x")].toObject()[QStringLiteral("values")].toArray()[ix]},
          {QStringLiteral("y"),
           root[QStringLiteral("y")].toObject()[QStringLiteral("values")].toArray()[iy]},
          {QStringLiteral("complete"), !incomplete},
          {QStringLiteral("variants"), vs},
          {QStringLiteral("gains"),
           QJsonObject{{QStringLiteral("dram / vram-only"), gain(gd, false)},
                       {QStringLiteral("nvme-net / vram-only"), gain(gn, true)},
                       {QStringLiteral("nvme-net / dram"), gain(gn / gd, true)}}}});
    }
  }
  root[QStringLiteral("cells")] = cells;
  root[QStringLiteral("missing_cells")] = incomplete_ix >= 0 ? 1 : 0;
  return QJsonDocument(root).toJson();
}

inline bool write_file(const QString& path, const QByteArray& text) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(text) == text.size();
}

}  // namespace kvsim::gui::test
