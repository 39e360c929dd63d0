#pragma once
// Runs a batch of simulations on a worker thread, one after another, so the window never
// freezes: progress after each run, results delivered on the controller's (the GUI) thread
// through queued calls, and a cancel flag checked between runs (one run takes ~0.1-2 s).
#include <QMetaType>
#include <QObject>
#include <QString>
#include <atomic>
#include <thread>
#include <vector>

#include "kvsim/gui/run_data.hpp"

namespace kvsim::gui {

class RunController : public QObject {
  Q_OBJECT

 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;  // cancels and waits for the worker
  RunController(const RunController&) = delete;
  RunController& operator=(const RunController&) = delete;

  // Starts the batch; false when one is already running. `tag` comes back with every signal of
  // the batch (e.g. "whatif", "single").
  bool start(std::vector<RunJob> jobs, const QString& tag);
  // Asks the worker to stop after the run in progress.
  void cancel();
  bool busy() const { return busy_; }
  const QString& tag() const { return tag_; }

 signals:
  void progress(int done, int total);
  void runFinished(kvsim::gui::RunPtr run, const QString& tag);
  void runFailed(const QString& label, const QString& message, const QString& tag);
  void batchFinished(bool cancelled, const QString& tag);

 private:
  void join();

  std::thread worker_;
  std::atomic<bool> cancel_{false};
  bool busy_ = false;
  QString tag_;
};

}  // namespace kvsim::gui

Q_DECLARE_METATYPE(kvsim::gui::RunPtr)
