#include "gui/models/run_controller.hpp"

#include <exception>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/cluster/simulation.hpp"

namespace kvsim::gui {
namespace {

// Progress signals within a run: one per this many usage samples (simulated seconds).
constexpr int kProgressEvery = 25;

}  // namespace

RunController::RunController(QObject* parent) : QObject(parent) { qRegisterMetaType<RunPtr>(); }

RunController::~RunController() {
  stop_.request_stop();
  join();
}

void RunController::join() {
  if (worker_.joinable()) worker_.join();
}

QString RunController::state_name(State s) {
  switch (s) {
    case State::kIdle:
      return QStringLiteral("idle");
    case State::kRunning:
      return QStringLiteral("running");
    case State::kCancelling:
      return QStringLiteral("cancelling");
    case State::kCancelled:
      return QStringLiteral("cancelled");
    case State::kFinished:
      return QStringLiteral("finished");
  }
  return {};
}

void RunController::set_state(State s) {
  if (s == state_) return;
  state_ = s;
  emit stateChanged(s);
}

void RunController::cancel() {
  if (!busy_) return;
  stop_.request_stop();
  set_state(State::kCancelling);
}

bool RunController::start(std::vector<RunJob> jobs, const QString& tag) {
  if (busy_) return false;
  join();  // the previous batch's thread has finished its work; reclaim it
  busy_ = true;
  tag_ = tag;
  stop_ = std::stop_source();
  set_state(State::kRunning);
  const int total = static_cast<int>(jobs.size());
  emit progress(0, total);
  worker_ = std::thread([this, jobs = std::move(jobs), total, tag, stop = stop_.get_token()] {
    int done = 0;
    bool cancelled = false;
    for (const RunJob& job : jobs) {
      if (stop.stop_requested()) {
        cancelled = true;
        break;
      }
      RunPtr run;
      QString error;
      int samples = 0;
      const int index = done;
      auto on_progress = [this, &samples, index, tag](double simulated_s) {
        if (++samples % kProgressEvery != 0) return;
        QMetaObject::invokeMethod(
            this, [this, index, simulated_s, tag] { emit runProgress(index, simulated_s, tag); },
            Qt::QueuedConnection);
      };
      try {
        run = run_job(job, stop, on_progress);
      } catch (const cluster::RunCancelled&) {
        cancelled = true;  // the partial run is dropped
        break;
      } catch (const InputError& e) {
        error = e.diagnostics().empty()
                    ? QString::fromUtf8(e.what())
                    : QString::fromStdString(e.diagnostics().front().to_string());
      } catch (const std::exception& e) {
        error = QStringLiteral("internal error: ") + QString::fromUtf8(e.what());
      }
      ++done;
      const QString label = QString::fromStdString(job.label);
      QMetaObject::invokeMethod(
          this,
          [this, run, error, label, done, total, tag] {
            if (run) {
              emit runFinished(run, tag);
            } else {
              emit runFailed(label, error, tag);
            }
            emit progress(done, total);
          },
          Qt::QueuedConnection);
    }
    QMetaObject::invokeMethod(
        this,
        [this, cancelled, tag] {
          busy_ = false;
          set_state(cancelled ? State::kCancelled : State::kFinished);
          emit batchFinished(cancelled, tag);
        },
        Qt::QueuedConnection);
  });
  return true;
}

}  // namespace kvsim::gui
