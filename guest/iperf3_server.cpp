#include "guest/iperf3_server.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "guest/apps.h"
#include "models/core/sim_time.h"

namespace vtoe::guest {

using cpu::CycleClass;

namespace {

// iperf3's control states (one signed byte each on the control connection) and its sizes.
constexpr std::int8_t kTestStart = 1;
constexpr std::int8_t kTestRunning = 2;
constexpr std::int8_t kTestEnd = 4;
constexpr std::int8_t kParamExchange = 9;
constexpr std::int8_t kCreateStreams = 10;
constexpr std::int8_t kExchangeResults = 13;
constexpr std::int8_t kDisplayResults = 14;
constexpr std::int8_t kAccessDenied = -1;
constexpr std::int8_t kServerError = -2;
constexpr std::uint32_t kErrNotImplemented = 13;  // IEUNIMP: "an option ... is not implemented"
constexpr std::size_t kCookieSize = 37;           // 36 characters and a NUL
constexpr std::uint32_t kMaxJson = 64 * 1024;
constexpr std::uint32_t kMaxStreams = 128;  // iperf3's own limit
constexpr std::uint32_t kDefaultBlock = 128 * 1024;
constexpr std::uint32_t kMaxBlock = 1024 * 1024;

// The client numbers its streams 1, 3, 4, 5, ... in the order it connects them (iperf3's
// iperf_add_stream), and looks the server's results up by these numbers.
int stream_id(std::size_t index) { return index == 0 ? 1 : static_cast<int>(index) + 2; }

}  // namespace

Iperf3Server::Iperf3Server(std::string name, const Workload& workload, SocketLayer& sockets,
                           cpu::Core& core, cpu::Core::Context& ctx, int owner,
                           const GuestCosts& costs, AppCounters& counters)
    : name_(std::move(name)),
      workload_(workload),
      sockets_(sockets),
      core_(core),
      ctx_(ctx),
      owner_(owner),
      costs_(costs),
      counters_(counters) {}

bool Iperf3Server::recv_exact(int s, std::uint8_t* out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = sockets_.recv(ctx_, s, out + got, n - got, /*immediate=*/true);
    if (r == 0) return false;
    got += r;
  }
  return true;
}

bool Iperf3Server::send_all(int s, const void* data, std::size_t n) {
  return sockets_.send(ctx_, s, static_cast<const std::uint8_t*>(data), n) == n;
}

bool Iperf3Server::send_state(int s, std::int8_t state) { return send_all(s, &state, 1); }

bool Iperf3Server::recv_json(int s, std::string& text) {
  std::uint8_t len[4];
  if (!recv_exact(s, len, sizeof len)) return false;
  const std::uint32_t n = static_cast<std::uint32_t>(len[0]) << 24 |
                          static_cast<std::uint32_t>(len[1]) << 16 |
                          static_cast<std::uint32_t>(len[2]) << 8 | len[3];
  if (n == 0 || n > kMaxJson) return false;
  text.assign(n, '\0');
  return recv_exact(s, reinterpret_cast<std::uint8_t*>(text.data()), n);
}

bool Iperf3Server::send_json(int s, const std::string& text) {
  const auto n = static_cast<std::uint32_t>(text.size());
  const std::uint8_t len[4] = {static_cast<std::uint8_t>(n >> 24),
                               static_cast<std::uint8_t>(n >> 16),
                               static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  return send_all(s, len, sizeof len) && send_all(s, text.data(), text.size());
}

void Iperf3Server::refuse(int ctrl) {
  const std::uint8_t msg[9] = {static_cast<std::uint8_t>(kServerError),
                               0,
                               0,
                               0,
                               static_cast<std::uint8_t>(kErrNotImplemented),
                               0,
                               0,
                               0,
                               0};
  send_all(ctrl, msg, sizeof msg);  // then i_errno and errno, network order
}

Iperf3Server::Stream& Iperf3Server::idle_stream() {
  for (Stream& st : streams_)
    if (st.sock == 0) return st;
  Stream& st = streams_.emplace_back();
  const std::string name = "stream" + std::to_string(streams_.size());
  st.ctx = &core_.add_context(name_ + "." + name, ctx_.priority(), ctx_.domain());
  sc_core::sc_spawn([this, &st] { stream_loop(st); }, name.c_str());
  return st;
}

void Iperf3Server::stream_loop(Stream& st) {
  for (;;) {
    while (!st.running) sc_core::wait(st.go);
    if (st.sender) {
      // Reverse test: send blocks until TEST_END (the client keeps reading until then).
      while (st.counting) {
        const std::size_t n = sockets_.send(*st.ctx, st.sock, st.buf.data(), st.buf.size(),
                                            {costs_.app_per_message, CycleClass::GuestUser});
        counters_.tx_bytes += n;
        st.counted += n;
        if (n < st.buf.size()) break;
      }
      --senders_running_;
      sender_done_.notify(sc_core::SC_ZERO_TIME);
    } else {
      // Forward test: what arrives before TEST_END counts; the rest is read and dropped until
      // the client closes the stream.
      for (;;) {
        const std::size_t n =
            sockets_.recv(*st.ctx, st.sock, st.buf.data(), st.buf.size(), /*immediate=*/false);
        if (n == 0) break;
        counters_.rx_bytes += n;
        if (st.counting) st.counted += n;
        core_.execute(*st.ctx, costs_.app_per_message, CycleClass::GuestUser);
      }
    }
    sockets_.close(*st.ctx, st.sock);
    st.sock = 0;
    st.running = false;
  }
}

void Iperf3Server::run(int listener) {
  listener_ = listener;
  while (!(workload_.stop_ps && core::now_ps() >= workload_.stop_ps)) {
    const int ctrl = sockets_.accept(ctx_, listener_);
    if (ctrl < 0) return;
    serve_test(ctrl);
    sockets_.close(ctx_, ctrl);
  }
}

void Iperf3Server::serve_test(int ctrl) {
  using nlohmann::json;
  std::uint8_t cookie[kCookieSize];
  if (!recv_exact(ctrl, cookie, sizeof cookie) || !send_state(ctrl, kParamExchange)) return;
  std::string text;
  if (!recv_json(ctrl, text)) return;
  const json params = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!params.is_object()) return;
  if (params.contains("udp") || params.contains("sctp") || params.contains("bidirectional"))
    return refuse(ctrl);
  const bool reverse = params.contains("reverse");
  std::uint32_t parallel = 1, block = kDefaultBlock;
  if (params.contains("parallel") && params["parallel"].is_number_unsigned())
    parallel = params["parallel"].get<std::uint32_t>();
  if (params.contains("len") && params["len"].is_number_unsigned())
    block = params["len"].get<std::uint32_t>();
  if (parallel < 1 || parallel > kMaxStreams || block < 1 || block > kMaxBlock) return refuse(ctrl);
  core_.execute(ctx_, costs_.app_per_message, CycleClass::GuestUser);  // parsing the request

  if (!send_state(ctrl, kCreateStreams)) return;
  std::vector<Stream*> test;
  // A test given up before it runs closes the streams it had accepted (their processes never
  // started), so that they do not stay taken.
  auto abandon = [&] {
    for (Stream* st : test) {
      sockets_.close(ctx_, st->sock);
      st->sock = 0;
    }
  };
  while (test.size() < parallel) {
    const int s = sockets_.accept(ctx_, listener_);
    if (s < 0) return abandon();
    std::uint8_t c[kCookieSize];
    if (!recv_exact(s, c, sizeof c) || std::memcmp(c, cookie, sizeof c) != 0) {
      send_state(s, kAccessDenied);  // another client while this test is set up
      sockets_.close(ctx_, s);
      continue;
    }
    Stream& st = idle_stream();
    st.sock = s;
    st.sender = reverse;
    st.counted = 0;
    st.counting = false;
    st.buf.assign(reverse ? block : std::max(block, workload_.message_size), 0);
    test.push_back(&st);
  }
  if (!send_state(ctrl, kTestStart) || !send_state(ctrl, kTestRunning)) return abandon();
  const core::TimePs start = core::now_ps();
  const core::TimePs user0 = core_.busy_ps(owner_, CycleClass::GuestUser);
  const core::TimePs kernel0 = core_.busy_ps(owner_, CycleClass::GuestKernel);
  for (Stream* st : test) {
    st->running = true;
    st->counting = true;
    if (st->sender) ++senders_running_;
    st->go.notify(sc_core::SC_ZERO_TIME);
  }

  // The client ends the test (or gives up): stop counting, let the senders finish the block in
  // hand (the client drains until it sees the results exchange), then trade results.
  std::uint8_t state = 0;
  const bool ended = recv_exact(ctrl, &state, 1) && static_cast<std::int8_t>(state) == kTestEnd;
  const core::TimePs end = core::now_ps();
  for (Stream* st : test) st->counting = false;
  while (senders_running_ > 0) sc_core::wait(sender_done_);
  if (!ended) return;  // CLIENT_TERMINATE or a closed control connection
  const double seconds = static_cast<double>(end - start) * 1e-12;
  const double user = static_cast<double>(core_.busy_ps(owner_, CycleClass::GuestUser) - user0);
  const double kernel =
      static_cast<double>(core_.busy_ps(owner_, CycleClass::GuestKernel) - kernel0);
  const double span = std::max(1.0, static_cast<double>(end - start));

  if (!send_state(ctrl, kExchangeResults) || !recv_json(ctrl, text)) return;
  json results = {{"cpu_util_total", 100.0 * (user + kernel) / span},
                  {"cpu_util_user", 100.0 * user / span},
                  {"cpu_util_system", 100.0 * kernel / span},
                  {"sender_has_retransmits", 0},
                  {"streams", json::array()}};
  for (std::size_t i = 0; i < test.size(); ++i)
    results["streams"].push_back({{"id", stream_id(i)},
                                  {"bytes", test[i]->counted},
                                  {"retransmits", -1},
                                  {"jitter", 0},
                                  {"errors", 0},
                                  {"omitted_errors", 0},
                                  {"packets", 0},
                                  {"omitted_packets", 0},
                                  {"start_time", 0},
                                  {"end_time", seconds}});
  if (!send_json(ctrl, results.dump()) || !send_state(ctrl, kDisplayResults)) return;
  ++counters_.transactions;     // tests completed
  recv_exact(ctrl, &state, 1);  // IPERF_DONE, or the client just closes
}

}  // namespace vtoe::guest
