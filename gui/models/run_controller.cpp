#include "kvsim/gui/run_controller.hpp"

#include <exception>

#include "kvsim/core/error.hpp"

namespace kvsim::gui {

RunController::RunController(QObject* parent) : QObject(parent) { qRegisterMetaType<RunPtr>(); }

RunController::~RunController() {
  cancel_ = true;
  join();
}

void RunController::join() {
  if (worker_.joinable()) worker_.join();
}

void RunController::cancel() { cancel_ = true; }

bool RunController::start(std::vector<RunJob> jobs, const QString& tag) {
  if (busy_) return false;
  join();  // the previous batch's thread has finished its work; reclaim it
  busy_ = true;
  tag_ = tag;
  cancel_ = false;
  const int total = static_cast<int>(jobs.size());
  emit progress(0, total);
  worker_ = std::thread([this, jobs = std::move(jobs), total, tag] {
    int done = 0;
    for (const RunJob& job : jobs) {
      if (cancel_) break;
      RunPtr run;
      QString error;
      try {
        run = run_job(job);
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
    const bool cancelled = cancel_ && done < total;
    QMetaObject::invokeMethod(
        this,
        [this, cancelled, tag] {
          busy_ = false;
          emit batchFinished(cancelled, tag);
        },
        Qt::QueuedConnection);
  });
  return true;
}

}  // namespace kvsim::gui
