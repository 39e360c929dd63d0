// kvsim-gui: the desktop application. With --screenshot it runs headless (set
// QT_QPA_PLATFORM=offscreen): opens the scenario (or map), runs it (--run), renders the chosen
// view to a PNG and exits. Exit codes as the command line's: 0 ok, 2 bad input, 3 internal error.
#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QLabel>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gui/app/main_window.hpp"
#include "gui/app/map_view.hpp"
#include "gui/app/whatif_view.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/scenario_document.hpp"
#include "sim/core/version.hpp"

namespace {

// Processes events until the runner has finished its batch.
void wait_for_runs(kvsim::gui::RunController* runner) {
  QEventLoop loop;
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (!runner->busy()) loop.quit();
  });
  poll.start(50);
  loop.exec();
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("kvsim"));
  QApplication::setApplicationName(QStringLiteral("kvsim-gui"));
  QApplication::setApplicationVersion(QString::fromUtf8(kvsim::kVersion));

  QCommandLineParser cli;
  cli.setApplicationDescription(
      QStringLiteral("kvsim desktop application: edit scenarios, explore what-ifs, inspect runs"));
  cli.addHelpOption();
  cli.addVersionOption();
  const QCommandLineOption scenario_opt(
      QStringLiteral("scenario"), QStringLiteral("Scenario YAML to open"), QStringLiteral("FILE"));
  const QCommandLineOption db_opt(QStringLiteral("results"),
                                  QStringLiteral("Results database to open"),
                                  QStringLiteral("FILE"));
  const QCommandLineOption map_opt(
      QStringLiteral("map"), QStringLiteral("Break-even map (map.json from kvsim map) to open"),
      QStringLiteral("FILE"));
  const QCommandLineOption map_cell_opt(
      QStringLiteral("map-cell"),
      QStringLiteral("With --map: select the cell at IX,IY (0-based), as a click does"),
      QStringLiteral("IX,IY"));
  const QCommandLineOption map_pair_opt(
      QStringLiteral("map-pair"),
      QStringLiteral("With --map: the pair of variants to show, e.g. 'dram / vram-only'"),
      QStringLiteral("PAIR"));
  const QCommandLineOption run_opt(
      QStringLiteral("run"),
      QStringLiteral("Run the scenario (and, with --view whatif, the what-if sweep)"));
  const QCommandLineOption shot_opt(
      QStringLiteral("screenshot"),
      QStringLiteral("Render the window to a PNG (or SVG) after the runs and exit"),
      QStringLiteral("OUT"));
  const QCommandLineOption view_opt(
      QStringLiteral("view"),
      QStringLiteral("View to show: editor, whatif, map, run, results "
                     "(default: map with --map, else editor)"),
      QStringLiteral("VIEW"), QStringLiteral("editor"));
  const QCommandLineOption knob_opt(
      QStringLiteral("knob"), QStringLiteral("What-if knob (dotted path)"), QStringLiteral("PATH"),
      QStringLiteral("workload.clients.num_clients"));
  const QCommandLineOption values_opt(
      QStringLiteral("values"), QStringLiteral("What-if values: 'a, b, c' or 'from:to:count'"),
      QStringLiteral("VALUES"));
  const QCommandLineOption variants_opt(
      QStringLiteral("variants"),
      QStringLiteral("With --run: also run the KV-tier variants and compare them in the run view"));
  const QCommandLineOption size_opt(QStringLiteral("size"), QStringLiteral("Window size WxH"),
                                    QStringLiteral("WxH"), QStringLiteral("1440x900"));
  cli.addOptions({scenario_opt, db_opt, map_opt, map_cell_opt, map_pair_opt, run_opt, shot_opt,
                  view_opt, knob_opt, values_opt, variants_opt, size_opt});
  cli.process(app);

  kvsim::gui::MainWindow window;
  // The environment, read here once: the libraries take it as arguments.
  const char* catalog_env = std::getenv("KVSIM_CATALOG_DIR");
  const char* plain_env = std::getenv("KVSIM_PLAIN_STEPS");
  window.document()->set_program_options(catalog_env != nullptr ? catalog_env : "",
                                         plain_env == nullptr || std::string(plain_env) != "1");
  const QStringList size = cli.value(size_opt).split(QLatin1Char('x'));
  if (size.size() == 2 && size[0].toInt() > 0 && size[1].toInt() > 0)
    window.resize(size[0].toInt(), size[1].toInt());
  const bool headless = cli.isSet(shot_opt);
  const QString view =
      cli.isSet(view_opt) || !cli.isSet(map_opt) ? cli.value(view_opt) : QStringLiteral("map");
  int rc = 0;
  if (cli.isSet(scenario_opt) && !window.open_scenario(cli.value(scenario_opt))) rc = 2;
  if (cli.isSet(db_opt) && !window.open_results(cli.value(db_opt))) rc = 2;
  if (cli.isSet(map_opt)) {
    if (!window.open_map(cli.value(map_opt))) {
      rc = 2;
    } else {
      if (cli.isSet(map_pair_opt) && !window.map_view()->set_pair(cli.value(map_pair_opt))) {
        std::fprintf(stderr, "kvsim-gui: --map-pair %s: the map has no such pair\n",
                     qPrintable(cli.value(map_pair_opt)));
        return 2;
      }
      if (cli.isSet(map_cell_opt)) {
        const QStringList cell = cli.value(map_cell_opt).split(QLatin1Char(','));
        bool ok_x = false;
        bool ok_y = false;
        const int ix = cell.size() == 2 ? cell[0].trimmed().toInt(&ok_x) : -1;
        const int iy = cell.size() == 2 ? cell[1].trimmed().toInt(&ok_y) : -1;
        if (!ok_x || !ok_y || !window.map_view()->select_cell(ix, iy)) {
          std::fprintf(stderr, "kvsim-gui: --map-cell %s: expected IX,IY inside the map's grid\n",
                       qPrintable(cli.value(map_cell_opt)));
          return 2;
        }
      }
    }
  }
  if (!window.set_view(view)) {
    std::fprintf(stderr, "kvsim-gui: --view %s: expected editor, whatif, map, run or results\n",
                 qPrintable(view));
    return 2;
  }
  window.show();
  if (cli.isSet(run_opt) && rc == 0) {
    if (!window.run_scenario()) rc = 2;
    wait_for_runs(window.runner());
    if (cli.isSet(variants_opt) && rc == 0) {
      if (!window.run_variants()) rc = 2;
      wait_for_runs(window.runner());
    }
    if (view == QStringLiteral("whatif") && rc == 0) {
      window.whatif()->set_knob(cli.value(knob_opt), cli.value(values_opt));
      if (!window.run_whatif()) rc = 2;
      wait_for_runs(window.runner());
    }
    window.set_view(view);
  }
  if (!headless) return QApplication::exec();
  QApplication::processEvents();
  if (!window.screenshot(cli.value(shot_opt))) {
    std::fprintf(stderr, "kvsim-gui: cannot write %s\n", qPrintable(cli.value(shot_opt)));
    return 3;
  }
  if (rc != 0) std::fprintf(stderr, "kvsim-gui: %s\n", qPrintable(window.message_bar()->text()));
  return rc;
}
