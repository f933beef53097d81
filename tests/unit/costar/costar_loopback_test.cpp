// Costar end to end on 127.0.0.1: the real binary (COSTAR_BIN) as client and server, plus tiny
// in-test peers that corrupt one byte, never answer, or refuse, to check the failure reports.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "models/core/stream_pattern.h"

namespace {

using json = nlohmann::json;
using vtoe::core::StreamPattern;

std::string temp_path(const std::string& stem) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return "/tmp/costar_test_" + std::to_string(getpid()) + "_" + info->name() + "_" + stem;
}

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  json j = json::parse(f, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path;
  std::remove(path.c_str());
  return j;
}

// A costar process with stdout (and stderr) on pipes.
class Proc {
 public:
  explicit Proc(std::vector<std::string> args) {
    args.insert(args.begin(), COSTAR_BIN);
    int out[2], err[2];
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Proc() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(out_);
    close(err_);
  }

  // Server: waits for "listen 127.0.0.1:PORT" and returns PORT.
  int listen_port() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
      const auto nl = stdout_.find('\n');
      if (nl != std::string::npos) {
        const std::string line = stdout_.substr(0, nl);
        const auto colon = line.rfind(':');
        if (line.rfind("listen ", 0) == 0 && colon != std::string::npos) return std::atoi(line.c_str() + colon + 1);
        ADD_FAILURE() << "unexpected first line: " << line;
        return -1;
      }
      pump(100);
    }
    ADD_FAILURE() << "server printed no listen line; stderr: " << stderr_;
    return -1;
  }

  // Reads all output and waits for the exit status (kills the process after timeout_s).
  int wait(double timeout_s = 8) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!(out_eof_ && err_eof_)) {
      if (std::chrono::steady_clock::now() > until) {
        ADD_FAILURE() << "costar did not exit in time; stdout so far:\n" << stdout_;
        kill(pid_, SIGKILL);
        break;
      }
      pump(100);
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  const std::string& out() const { return stdout_; }
  const std::string& err() const { return stderr_; }

 private:
  void pump(int ms) {
    pollfd fds[2] = {{out_eof_ ? -1 : out_, POLLIN, 0}, {err_eof_ ? -1 : err_, POLLIN, 0}};
    if (poll(fds, 2, ms) <= 0) return;
    char buf[4096];
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? stdout_ : stderr_).append(buf, static_cast<std::size_t>(n));
      } else {
        (i == 0 ? out_eof_ : err_eof_) = true;
      }
    }
  }

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool out_eof_ = false, err_eof_ = false, reaped_ = false;
  std::string stdout_, stderr_;
};

std::string target(int port) { return "127.0.0.1:" + std::to_string(port); }

// A loopback socket bound to an ephemeral port; listening when asked.
struct TestSocket {
  int fd = -1;
  int port = 0;
  explicit TestSocket(bool listening) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    if (listening) {
      EXPECT_EQ(listen(fd, 16), 0);
    }
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~TestSocket() { close(fd); }
};

bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

std::vector<std::uint8_t> corrupted_pattern(std::size_t n, std::size_t flip_at) {
  std::vector<std::uint8_t> data(n);
  StreamPattern::fill(0, data.data(), n);
  data[flip_at] ^= 0x5a;
  return data;
}

TEST(Costar, SinkVerifiesEightConnectionsOfFourMiB) {
  const std::string sjson = temp_path("server.json"), cjson = temp_path("client.json");
  Proc server({"server", "--listen", "127.0.0.1:0", "--mode", "sink", "--once", "8", "--json", sjson});
  const int port = server.listen_port();
  ASSERT_GT(port, 0);
  Proc client({"client", "--target", target(port), "--connections", "8", "--threads", "3", "--bytes", "4MiB",
               "--mode", "send", "--json", cjson});
  EXPECT_EQ(client.wait(), 0) << client.out() << client.err();
  EXPECT_EQ(server.wait(), 0) << server.out() << server.err();
  EXPECT_NE(client.out().find("total connections 8 failed 0 bytes 33554432 "), std::string::npos) << client.out();

  const json c = read_json(cjson);
  EXPECT_EQ(c["role"], "client");
  EXPECT_EQ(c["mode"], "send");
  ASSERT_EQ(c["connections"].size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const json& k = c["connections"][i];
    EXPECT_EQ(k["id"], i);
    EXPECT_EQ(k["remote"], target(port));
    EXPECT_EQ(k["bytes_sent"], 4u << 20);
    EXPECT_EQ(k["bytes_received"], 0u);
    EXPECT_EQ(k["verified"], true);
    EXPECT_TRUE(k["error"].is_null());
    EXPECT_GT(k["seconds"].get<double>(), 0.0);
    EXPECT_GT(k["mbps"].get<double>(), 0.0);
  }
  EXPECT_EQ(c["total"]["bytes"], 32u << 20);
  EXPECT_EQ(c["total"]["connections"], 8u);
  EXPECT_EQ(c["total"]["failed"], 0u);
  const double secs = c["total"]["seconds"].get<double>();
  EXPECT_GT(secs, 0.0);
  EXPECT_NEAR(c["total"]["mbps"].get<double>(), (32u << 20) * 8.0 / secs / 1e6, 1e-6);

  const json s = read_json(sjson);
  EXPECT_EQ(s["role"], "server");
  ASSERT_EQ(s["connections"].size(), 8u);
  for (const json& k : s["connections"]) {
    EXPECT_EQ(k["bytes_received"], 4u << 20);
    EXPECT_EQ(k["verified"], true);
    EXPECT_TRUE(k["first_mismatch"].is_null());
  }
  EXPECT_EQ(s["total"]["bytes"], 32u << 20);
  EXPECT_EQ(s["total"]["failed"], 0u);
}

TEST(Costar, ConnectionsAreSpreadRoundRobinOverTargets) {
  Proc a({"server", "--listen", "127.0.0.1:0", "--once", "2"});
  Proc b({"server", "--listen", "127.0.0.1:0", "--once", "2"});
  const int pa = a.listen_port(), pb = b.listen_port();
  ASSERT_GT(pa, 0);
  ASSERT_GT(pb, 0);
  const std::string cjson = temp_path("client.json");
  Proc client({"client", "--target", target(pa), "--target", target(pb), "-n", "4", "--bytes", "256KiB", "--json",
               cjson});
  EXPECT_EQ(client.wait(), 0) << client.out() << client.err();
  EXPECT_EQ(a.wait(), 0) << a.out();
  EXPECT_EQ(b.wait(), 0) << b.out();
  const json c = read_json(cjson);
  ASSERT_EQ(c["connections"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(c["connections"][i]["remote"], target(i % 2 ? pb : pa));
}

TEST(Costar, EchoRoundTripIsVerified) {
  const std::string cjson = temp_path("client.json");
  Proc server({"server", "--listen", "127.0.0.1:0", "--mode", "echo", "--once", "4", "--threads", "2"});
  const int port = server.listen_port();
  ASSERT_GT(port, 0);
  Proc client({"client", "--target", target(port), "-n", "4", "--mode", "echo", "--bytes", "3MiB", "--json", cjson});
  EXPECT_EQ(client.wait(), 0) << client.out() << client.err();
  EXPECT_EQ(server.wait(), 0) << server.out();
  const json c = read_json(cjson);
  EXPECT_EQ(c["mode"], "echo");
  for (const json& k : c["connections"]) {
    EXPECT_EQ(k["bytes_sent"], 3u << 20);
    EXPECT_EQ(k["bytes_received"], 3u << 20);
    EXPECT_EQ(k["verified"], true);
  }
  EXPECT_EQ(c["total"]["bytes"], 12u << 20);
}

TEST(Costar, RecvFromSourceAndDurationMode) {
  Proc source({"server", "--listen", "127.0.0.1:0", "--mode", "source", "--bytes", "2MiB", "--once", "2"});
  const int port = source.listen_port();
  ASSERT_GT(port, 0);
  Proc recv({"client", "--target", target(port), "-n", "2", "--mode", "recv"});  // until the peer closes
  EXPECT_EQ(recv.wait(), 0) << recv.out() << recv.err();
  EXPECT_EQ(source.wait(), 0) << source.out();
  EXPECT_NE(recv.out().find("total connections 2 failed 0 bytes 4194304 "), std::string::npos) << recv.out();

  const std::string cjson = temp_path("client.json");
  Proc sink({"server", "--listen", "127.0.0.1:0", "--once", "1"});
  const int sport = sink.listen_port();
  ASSERT_GT(sport, 0);
  Proc send({"client", "--target", target(sport), "--duration", "300ms", "--json", cjson});
  EXPECT_EQ(send.wait(), 0) << send.out() << send.err();
  EXPECT_EQ(sink.wait(), 0) << sink.out();
  const json c = read_json(cjson);
  EXPECT_GE(c["connections"][0]["seconds"].get<double>(), 0.29);
  EXPECT_GT(c["connections"][0]["bytes_sent"].get<std::uint64_t>(), 0u);
}

// A peer that serves the pattern with one byte flipped: costar client --mode recv names the offset.
TEST(Costar, ClientDetectsCorruptedStream) {
  constexpr std::size_t kLen = 1 << 20, kFlip = 300007;
  TestSocket l(true);
  std::thread peer([&] {
    const int fd = accept(l.fd, nullptr, nullptr);
    const auto data = corrupted_pattern(kLen, kFlip);
    write_all(fd, data.data(), data.size());
    close(fd);
  });
  const std::string cjson = temp_path("client.json");
  Proc client({"client", "--target", target(l.port), "--mode", "recv", "--bytes", "1MiB", "--json", cjson});
  EXPECT_EQ(client.wait(), 1) << client.out() << client.err();
  peer.join();
  EXPECT_NE(client.out().find("FAILED: pattern mismatch at stream offset 300007 (expected 0xe4, got 0xbe)"),
            std::string::npos)
      << client.out();
  const json c = read_json(cjson);
  const json& k = c["connections"][0];
  EXPECT_EQ(k["verified"], false);
  EXPECT_EQ(k["first_mismatch"], kFlip);
  EXPECT_EQ(k["bytes_received"], kLen);
  EXPECT_EQ(c["total"]["failed"], 1u);
}

// A client that sends the pattern with one byte flipped: costar server --mode sink names the offset.
TEST(Costar, SinkDetectsCorruptedStream) {
  constexpr std::size_t kLen = 512 * 1024, kFlip = 65536 + 255;
  const std::string sjson = temp_path("server.json");
  Proc server({"server", "--listen", "127.0.0.1:0", "--once", "1", "--json", sjson});
  const int port = server.listen_port();
  ASSERT_GT(port, 0);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const auto data = corrupted_pattern(kLen, kFlip);
  EXPECT_TRUE(write_all(fd, data.data(), data.size()));
  shutdown(fd, SHUT_WR);
  char b;
  EXPECT_EQ(recv(fd, &b, 1, 0), 0);  // the server closes after our FIN
  close(fd);
  EXPECT_EQ(server.wait(), 1) << server.out() << server.err();
  const json s = read_json(sjson);
  EXPECT_EQ(s["connections"][0]["first_mismatch"], kFlip);
  EXPECT_EQ(s["connections"][0]["bytes_received"], kLen);
  EXPECT_EQ(s["connections"][0]["verified"], false);
}

// Bound but not listening: the kernel answers SYN with RST.
TEST(Costar, RefusedConnectionIsReportedPerConnection) {
  TestSocket closed(false);
  const std::string cjson = temp_path("client.json");
  Proc client({"client", "--target", target(closed.port), "-n", "3", "--json", cjson});
  EXPECT_EQ(client.wait(), 1) << client.out() << client.err();
  EXPECT_NE(client.out().find("FAILED: connect: Connection refused"), std::string::npos) << client.out();
  const json c = read_json(cjson);
  ASSERT_EQ(c["connections"].size(), 3u);
  for (const json& k : c["connections"]) {
    EXPECT_EQ(k["verified"], false);
    EXPECT_EQ(k["error"], "connect: Connection refused");
  }
  EXPECT_EQ(c["total"]["failed"], 3u);
}

// A peer that accepts, reads nothing and never closes: --timeout ends the wait.
TEST(Costar, StuckPeerTimesOut) {
  TestSocket l(true);
  Proc client({"client", "--target", target(l.port), "--bytes", "1000", "--timeout", "0.5"});
  EXPECT_EQ(client.wait(5), 1) << client.out() << client.err();
  EXPECT_NE(client.out().find("FAILED: timeout: no progress for 0.5 s while waiting for the peer to close"),
            std::string::npos)
      << client.out();
}

TEST(Costar, UsageErrorsExitTwoWithOneLine) {
  const std::vector<std::vector<std::string>> bad = {
      {"client"},
      {"client", "--target", "localhost"},
      {"client", "--target", "127.0.0.1:99999"},
      {"client", "--target", "127.0.0.1:5001", "--bytes", "1MiB", "--duration", "2"},
      {"client", "--target", "127.0.0.1:5001", "--bytes", "lots"},
      {"client", "--target", "127.0.0.1:5001", "--mode", "sink"},
      {"client", "--target", "127.0.0.1:5001", "--connections", "0"},
      {"server", "--listen", "127.0.0.1:0", "--mode", "send"},
      {"nonsense"},
  };
  for (const auto& args : bad) {
    Proc p(args);
    EXPECT_EQ(p.wait(), 2) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_EQ(p.out(), "");
    ASSERT_FALSE(p.err().empty());
    EXPECT_EQ(p.err().find('\n'), p.err().size() - 1) << p.err();  // one line
    EXPECT_EQ(p.err().rfind("costar: ", 0), 0u) << p.err();
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
