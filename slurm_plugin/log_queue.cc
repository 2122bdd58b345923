#include "log_queue.h"

#include <exception>
#include <utility>

namespace fmte::slurm {

bool LogQueue::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) return true;
  try {
    stopping_ = false;
    thread_ = std::thread([this] { Run(); });
    running_ = true;
  } catch (const std::exception&) {  // no thread (resource limits): Push writes directly
    running_ = false;
  }
  return running_;
}

void LogQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_) return;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();  // the writer drains the queue before it returns
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
}

void LogQueue::Push(LogLevel level, std::string line) {
  bool queued = false, first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ && !stopping_ && queue_.size() < kMaxQueued) {
      first = queue_.empty();
      queue_.push_back(Line{level, std::move(line)});
      queued = true;
    }
  }
  if (queued) {
    if (first) wake_.notify_one();  // later lines of the batch find the writer on its way
    return;
  }
  // No writer, or it is behind by kMaxQueued lines: write the queue and this line here, in order.
  std::lock_guard<std::mutex> write_lock(write_mu_);
  std::vector<Line> batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(queue_);
  }
  batch.push_back(Line{level, std::move(line)});
  Drain(&batch);
}

void LogQueue::Run() {
  std::vector<Line> batch;
  while (true) {
    bool last;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // A line came: let the burst it may belong to gather, then write it as one batch.
      wake_.wait_for(lock, kFlushPeriod, [this] { return stopping_; });
      last = stopping_;
    }
    // write_mu_ before taking the batch, so that a Push writing past kMaxQueued keeps the order.
    std::lock_guard<std::mutex> write_lock(write_mu_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch.swap(queue_);
    }
    Drain(&batch);
    if (last) return;
  }
}

void LogQueue::Drain(std::vector<Line>* batch) {
  for (const Line& l : *batch) write_(l.level, l.text);
  batch->clear();  // keeps its capacity for the next swap
}

}  // namespace fmte::slurm
