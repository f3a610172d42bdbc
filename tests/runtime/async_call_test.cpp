// runtime::AsyncCall: the function runs on another thread while the owner works, wait() returns
// after it and rethrows what it threw, and the thread is reused for the next call.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "runtime/async_call.h"

namespace ork::runtime {
namespace {

TEST(AsyncCallThreads, RunsOnAnotherThreadAndWaitSeesItsWrites) {
  AsyncCall call;
  const std::thread::id owner = std::this_thread::get_id();
  for (int round = 0; round < 200; ++round) {
    std::thread::id ran_on;
    int value = 0;
    call.start([&] {
      ran_on = std::this_thread::get_id();
      value = round + 1;
    });
    call.wait();
    EXPECT_NE(ran_on, owner);
    EXPECT_EQ(value, round + 1);  // written before wait() returned, read without a race
  }
}

TEST(AsyncCallThreads, OwnerAndCallRunAtTheSameTime) {
  AsyncCall call;
  std::atomic<bool> owner_started{false}, call_saw_owner{false};
  call.start([&] {
    for (int i = 0; i < 2000000 && !owner_started.load(); ++i) std::this_thread::yield();
    call_saw_owner = owner_started.load();
  });
  owner_started = true;
  call.wait();
  EXPECT_TRUE(call_saw_owner.load());
}

TEST(AsyncCallThreads, WaitRethrowsAndTheNextCallStillRuns) {
  AsyncCall call;
  call.start([] { throw std::runtime_error("npu part failed"); });
  EXPECT_THROW(call.wait(), std::runtime_error);
  int ran = 0;
  call.start([&] { ran = 1; });
  call.wait();
  EXPECT_EQ(ran, 1);
}

TEST(AsyncCallThreads, StartingTwiceWithoutWaitingIsAnError) {
  AsyncCall call;
  std::atomic<bool> release{false};
  call.start([&] {
    while (!release.load()) std::this_thread::yield();
  });
  EXPECT_THROW(call.start([] {}), Error);
  release = true;
  call.wait();
}

}  // namespace
}  // namespace ork::runtime
