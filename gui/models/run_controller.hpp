#pragma once
// Runs a batch of simulations on a worker thread, one after another, so the window never
// freezes: progress after each run and, within a run, its simulated time; results delivered on
// the controller's (the GUI) thread through queued calls. Cancel stops the run in progress (the
// simulation checks a stop token every few thousand events) and discards it; runs already
// finished are kept.
#include <QMetaType>
#include <QObject>
#include <QString>
#include <stop_token>
#include <thread>
#include <vector>

#include "gui/models/run_data.hpp"

namespace kvsim::gui {

class RunController : public QObject {
  Q_OBJECT

 public:
  // kIdle: nothing ever ran. kRunning: a batch is in progress. kCancelling: cancel() was called,
  // the run in progress has not stopped yet. kCancelled / kFinished: how the last batch ended.
  enum class State { kIdle, kRunning, kCancelling, kCancelled, kFinished };
  Q_ENUM(State)

  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;  // cancels and waits for the worker
  RunController(const RunController&) = delete;
  RunController& operator=(const RunController&) = delete;

  // Starts the batch; false when one is already running. `tag` comes back with every signal of
  // the batch (e.g. "whatif", "single").
  bool start(std::vector<RunJob> jobs, const QString& tag);
  // Stops the run in progress (its partial results are dropped) and the rest of the batch.
  void cancel();
  bool busy() const { return busy_; }
  State state() const { return state_; }
  static QString state_name(State s);
  const QString& tag() const { return tag_; }

 signals:
  void progress(int done, int total);
  // The run in progress (index `run` of the batch) has simulated `simulated_s` seconds.
  void runProgress(int run, double simulated_s, const QString& tag);
  void runFinished(kvsim::gui::RunPtr run, const QString& tag);
  void runFailed(const QString& label, const QString& message, const QString& tag);
  void batchFinished(bool cancelled, const QString& tag);
  void stateChanged(kvsim::gui::RunController::State state);

 private:
  void join();
  void set_state(State s);

  std::thread worker_;
  std::stop_source stop_;
  bool busy_ = false;
  State state_ = State::kIdle;
  QString tag_;
};

}  // namespace kvsim::gui

Q_DECLARE_METATYPE(kvsim::gui::RunPtr)
