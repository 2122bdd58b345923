// LogQueue: the decision lines reach the log complete and in order, written by the writer thread
// (not by the thread that pushed them, which in slurmctld holds the job lock), and directly when no
// writer runs or the writer is kMaxQueued lines behind.
#include "log_queue.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fmte::slurm {
namespace {

struct Written {
  std::mutex mu;
  std::vector<std::string> lines;
  std::vector<std::thread::id> writers;
  std::chrono::microseconds delay{0};  // a slow log file
};
Written* written = nullptr;

void Record(LogLevel level, const std::string& line) {
  if (written->delay.count() > 0) std::this_thread::sleep_for(written->delay);
  std::lock_guard<std::mutex> lock(written->mu);
  written->lines.push_back((level == LogLevel::kInfo ? "I " : "V ") + line);
  written->writers.push_back(std::this_thread::get_id());
}

class LogQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { written = &w_; }
  void TearDown() override { written = nullptr; }
  Written w_;
};

TEST_F(LogQueueTest, LinesFromManyThreadsArriveCompleteInOrderOnTheWriterThread) {
  LogQueue q(&Record);
  ASSERT_TRUE(q.Start());
  constexpr int kThreads = 4, kLines = 2000;
  std::vector<std::thread> pushers;
  std::vector<std::thread::id> pusher_ids;
  for (int t = 0; t < kThreads; ++t) {
    pushers.emplace_back([&q, t] {
      for (int i = 0; i < kLines; ++i)
        q.Push(i % 2 ? LogLevel::kVerbose : LogLevel::kInfo,
               std::to_string(t) + ":" + std::to_string(i));
    });
    pusher_ids.push_back(pushers.back().get_id());
  }
  for (std::thread& p : pushers) p.join();
  q.Stop();
  ASSERT_EQ(w_.lines.size(), static_cast<size_t>(kThreads * kLines));
  std::vector<int> next(kThreads, 0);
  for (const std::string& l : w_.lines) {  // "I 2:17": each thread's lines in push order
    const int t = l[2] - '0';
    const int i = std::stoi(l.substr(4));
    EXPECT_EQ(i, next[t]) << l;
    EXPECT_EQ(l[0], i % 2 ? 'V' : 'I') << l;
    next[t] = i + 1;
  }
  // 8,000 lines may overflow kMaxQueued between two flushes (Push then writes them itself), but
  // most are written by the writer thread.
  size_t by_pushers = 0;
  for (std::thread::id id : w_.writers)
    for (std::thread::id p : pusher_ids) by_pushers += id == p;
  EXPECT_LT(by_pushers, w_.lines.size());
}

TEST_F(LogQueueTest, PushWritesNothingOnTheCallingThreadWhileTheWriterRuns) {
  LogQueue q(&Record);
  ASSERT_TRUE(q.Start());
  for (int i = 0; i < 100; ++i) q.Push(LogLevel::kInfo, "line " + std::to_string(i));
  {
    std::lock_guard<std::mutex> lock(w_.mu);
    // Within one flush period nothing is written by Push itself.
    for (std::thread::id id : w_.writers) EXPECT_NE(id, std::this_thread::get_id());
  }
  q.Stop();  // drains
  ASSERT_EQ(w_.lines.size(), 100u);
  EXPECT_EQ(w_.lines.front(), "I line 0");
  EXPECT_EQ(w_.lines.back(), "I line 99");
  for (std::thread::id id : w_.writers) EXPECT_NE(id, std::this_thread::get_id());
}

TEST_F(LogQueueTest, WithoutAWriterLinesAreWrittenDirectly) {
  LogQueue q(&Record);
  q.Push(LogLevel::kInfo, "before start");
  ASSERT_EQ(w_.lines.size(), 1u);  // written at once, by this thread
  EXPECT_EQ(w_.writers[0], std::this_thread::get_id());
  ASSERT_TRUE(q.Start());
  q.Stop();
  q.Push(LogLevel::kVerbose, "after stop");
  ASSERT_EQ(w_.lines.size(), 2u);
  EXPECT_EQ(w_.lines[1], "V after stop");
  q.Stop();  // a second Stop is harmless
}

TEST_F(LogQueueTest, AFullQueueIsWrittenByPushInOrderAndNothingIsLost) {
  w_.delay = std::chrono::microseconds(50);  // the writer falls behind
  LogQueue q(&Record);
  ASSERT_TRUE(q.Start());
  const size_t n = LogQueue::kMaxQueued * 3;
  for (size_t i = 0; i < n; ++i) q.Push(LogLevel::kInfo, std::to_string(i));
  q.Stop();
  ASSERT_EQ(w_.lines.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(w_.lines[i], "I " + std::to_string(i));
}

}  // namespace
}  // namespace fmte::slurm
