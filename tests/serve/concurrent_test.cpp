// Many clients at once against the real `ork serve` (--parallel 4): 32 clients connecting at the
// same moment, twice, all stream to [DONE] (4 generate, the rest queue), no slot leaks, RSS bounded
// (from the server's /proc/PID/status); four requests at once give the texts they give alone
// (continuous batching); clients that disconnect mid-stream free their slots. The names say
// Concurrent: scripts/test.sh runs these under ThreadSanitizer too (it leaves ServeConcurrent out
// while the server runs on an uninstrumented cpp-httplib).
#include <httplib.h>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve/serve_process.h"

namespace ork {
namespace {

using json = nlohmann::json;

json health(int port) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/health");
  return r ? json::parse(r->body) : json();
}

// Polls /health until no slot is busy (the server frees a slot right after a request's last byte).
json idle_health(int port) {
  json h;
  for (int i = 0; i < 2000; ++i) {
    h = health(port);
    if (h.value("slots_busy", -1) == 0 && h.value("requests_waiting", -1) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return h;
}

// The server's resident memory (VmRSS of /proc/PID/status) in KiB, or -1.
int64_t rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// 32 clients connect at the same moment (a barrier before each opens its connection), each streams
// one chat completion; a second wave of 32 follows. Every response ends with [DONE], no slot stays
// busy, and the server's RSS after the second wave is within 8 MiB of the first's (no growth per
// request: what a wave allocates is reused by the next).
TEST(ServeConcurrent, ThirtyTwoSimultaneousStreamsCompleteNoSlotLeaksRssBounded) {
  testing::ServeProcess s({"--parallel", "4", "--ctx", "256"});
  ASSERT_GT(s.port(), 0);
  constexpr int kClients = 32;
  auto wave = [&](int w) {
    std::atomic<int> complete{0};
    std::vector<std::string> texts(kClients);
    std::barrier start(kClients);
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i) {
      threads.emplace_back([&, i] {
        httplib::Client c("127.0.0.1", s.port());
        c.set_read_timeout(600, 0);
        c.set_connection_timeout(60, 0);
        const json body = {{"messages", {{{"role", "user"}, {"content", "Client " + std::to_string(i % 4)}}}},
                           {"max_tokens", 16}, {"temperature", 0}, {"stream", true}};
        start.arrive_and_wait();
        auto r = c.Post("/v1/chat/completions", body.dump(), "application/json");
        if (r && r->status == 200 && r->body.size() >= 14 &&
            r->body.compare(r->body.size() - 14, 14, "data: [DONE]\n\n") == 0) {
          ++complete;
          texts[size_t(i)] = r->body;
        } else {
          texts[size_t(i)] = r ? "status " + std::to_string(r->status) + ": " + r->body.substr(0, 200)
                               : "error " + httplib::to_string(r.error());
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(complete.load(), kClients) << "wave " << w;
    for (const std::string& t : texts) {
      if (t.rfind("data: ", 0) != 0) ADD_FAILURE() << "wave " << w << ": " << t;
    }
    const json h = idle_health(s.port());
    EXPECT_EQ(h["slots_busy"], 0);
    EXPECT_EQ(h["slots_idle"], 4);
    EXPECT_EQ(h["requests_waiting"], 0);
    return rss_kib(s.pid());
  };
  const int64_t rss1 = wave(1);
  const int64_t rss2 = wave(2);
  ASSERT_GT(rss1, 0);
  EXPECT_LE(rss2, rss1 + 8 * 1024) << "RSS grew from " << rss1 << " to " << rss2 << " KiB";
  EXPECT_LT(rss2, 128 * 1024) << "RSS " << rss2 << " KiB";
  std::printf("ork serve RSS after wave 1: %lld KiB, after wave 2: %lld KiB\n", (long long)rss1, (long long)rss2);
  EXPECT_EQ(s.stop(), 0);
}

// Continuous batching changes no text: four seeded sampling requests sent at once (their decode steps
// batched, /health's decode_rows_max says so) give the texts each gives alone; and the same with
// --no-cont-batching. On a loaded machine the four may not overlap (one finishes before another is
// read): the round is repeated, up to three times, until some decode step batched two of them; the
// texts are compared in every round.
TEST(ServeConcurrent, BatchedRequestsGiveTheTextsTheyGiveAlone) {
  constexpr int kRequests = 4;
  auto body = [](int i) {
    return json{{"prompt", "Request " + std::to_string(i) + " of the"}, {"max_tokens", 24}, {"temperature", 0.9},
                {"seed", 100 + i}}
        .dump();
  };
  auto text = [](const httplib::Result& r) {
    return r && r->status == 200 ? json::parse(r->body)["choices"][0]["text"].get<std::string>()
                                 : std::string("error");
  };
  std::vector<std::string> alone(kRequests);
  {
    testing::ServeProcess s({"--parallel", "1", "--ctx", "256"});
    ASSERT_GT(s.port(), 0);
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(600, 0);
    for (int i = 0; i < kRequests; ++i) alone[size_t(i)] = text(c.Post("/v1/completions", body(i), "application/json"));
    EXPECT_EQ(s.stop(), 0);
  }
  for (const bool batching : {true, false}) {
    std::vector<std::string> args = {"--parallel", std::to_string(kRequests), "--ctx", "256"};
    if (!batching) args.push_back("--no-cont-batching");
    testing::ServeProcess s(args);
    ASSERT_GT(s.port(), 0);
    json h;
    for (int round = 0; round < (batching ? 3 : 1); ++round) {
      std::vector<std::string> got(kRequests);
      std::vector<std::thread> threads;
      std::barrier start(kRequests);
      for (int i = 0; i < kRequests; ++i) {
        threads.emplace_back([&, i] {
          httplib::Client c("127.0.0.1", s.port());
          c.set_read_timeout(600, 0);
          start.arrive_and_wait();
          got[size_t(i)] = text(c.Post("/v1/completions", body(i), "application/json"));
        });
      }
      for (std::thread& t : threads) t.join();
      for (int i = 0; i < kRequests; ++i) {
        EXPECT_NE(alone[size_t(i)], "error");
        EXPECT_EQ(got[size_t(i)], alone[size_t(i)])
            << "request " << i << (batching ? " batched" : " unbatched") << ", round " << round;
      }
      h = idle_health(s.port());
      if (h.value("decode_rows_max", 0) >= 2) break;
    }
    if (batching) {
      EXPECT_GE(h.value("decode_rows_max", 0), 2) << h.dump();
      EXPECT_GT(h.value("decode_steps", 0), 0) << h.dump();
    } else {
      EXPECT_FALSE(h.contains("decode_steps")) << h.dump();
    }
    EXPECT_EQ(s.stop(), 0);
  }
}

TEST(ServeConcurrent, DisconnectingClientsFreeTheirSlots) {
  testing::ServeProcess s({"--parallel", "2", "--ctx", "4096"});
  ASSERT_GT(s.port(), 0);
  std::vector<std::thread> threads;
  std::atomic<int> got_data{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", s.port());
      // A reply that would run until the 4096-token context is full; the client leaves after the
      // first bytes (the content receiver returning false closes the connection).
      const json body = {{"prompt", "of the morning of the morning of the"}, {"temperature", 0}, {"stream", true}};
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/completions";
      req.body = body.dump();
      req.set_header("Content-Type", "application/json");
      req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
        ++got_data;
        return false;
      };
      (void)c.send(req);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(got_data.load(), 4);
  const json h = idle_health(s.port());
  EXPECT_EQ(h["slots_busy"], 0);
  // Still serving.
  httplib::Client c("127.0.0.1", s.port());
  auto r = c.Post("/v1/completions", R"({"prompt":"ok","max_tokens":2})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(s.stop(), 0);
}

}  // namespace
}  // namespace ork
