// LogQueue: the plugin's per-decision log lines, written to slurmctld's log by a background thread.
// job_submit() runs with slurmctld's job write lock held, and Slurm's log path costs three system
// calls per line (poll, fstat, write): queueing the line instead keeps them off the locked path.
// The writer sleeps while the queue is empty (an idle controller pays nothing); the line that
// makes the queue non-empty wakes it, and it then waits kFlushPeriod to take the lines queued
// meanwhile as one batch, so a burst of decisions costs one wake-up, and a line reaches the log
// at most about kFlushPeriod later. Nothing is dropped: past kMaxQueued lines, Push writes the
// queue and its own line itself, in order.
// Thread-safety: all methods may be called from any thread; Push never waits for a write in
// progress on the writer thread longer than that write.
#ifndef FMTE_SLURM_PLUGIN_LOG_QUEUE_H_
#define FMTE_SLURM_PLUGIN_LOG_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fmte::slurm {

enum class LogLevel { kInfo, kVerbose };

class LogQueue {
 public:
  using WriteFn = void (*)(LogLevel level, const std::string& line);
  static constexpr std::chrono::milliseconds kFlushPeriod{100};
  static constexpr size_t kMaxQueued = 4096;

  explicit LogQueue(WriteFn write) : write_(write) {}
  ~LogQueue() { Stop(); }
  LogQueue(const LogQueue&) = delete;
  LogQueue& operator=(const LogQueue&) = delete;

  // Starts the writer thread (no-op when running). Returns false when it cannot be started: lines
  // are then written by Push itself.
  bool Start();
  // Writes what is queued and joins the writer thread. Push afterwards writes directly.
  void Stop();
  // Queues `line` (written by the writer thread), or writes it now when no writer runs.
  void Push(LogLevel level, std::string line);

 private:
  struct Line {
    LogLevel level;
    std::string text;
  };
  void Run();
  // Writes every queued line in order. REQUIRES: write_mu_ held, mu_ not held.
  void Drain(std::vector<Line>* batch);

  const WriteFn write_;
  std::mutex write_mu_;  // held while writing: lines reach the log in the order they were queued
  std::mutex mu_;        // guards the fields below
  std::condition_variable wake_;
  std::vector<Line> queue_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fmte::slurm

#endif  // FMTE_SLURM_PLUGIN_LOG_QUEUE_H_
