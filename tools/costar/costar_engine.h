// Costar's connection engine: the client and server sides of the NetVP_Costar micro-benchmark
// (paper §4.3). The Linux kernel's TCP stack is the golden reference; every byte Costar sends
// follows vtoe's stream pattern (models/core/stream_pattern.h) and every byte it receives is
// checked against it.
//
// Threading: T worker threads, each with its own epoll instance and non-blocking sockets. A client
// gives connection i to worker i mod T; a server registers every listening socket in every worker's
// epoll with EPOLLEXCLUSIVE, so the kernel hands each new connection to one worker. No locks on the
// data path; results are merged when the workers end.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vtoe::netvp::costar {

enum class Mode {
  Send,    ///< client: write the pattern, half-close, wait for the peer to close
  Recv,    ///< client: read and verify the pattern
  Echo,    ///< client: write the pattern and verify what the peer echoes back
  Sink,    ///< server: read and verify the pattern until the client closes
  Source,  ///< server: write the pattern until the client closes (or --bytes)
  Reflect  ///< server "echo": echo every byte back (and verify it on the way)
};

const char* mode_name(Mode mode);

/// A socket address and its text form ("10.0.0.11:5001", "[::1]:5001").
struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
  std::string text;
};

/// Parses "IP:PORT" (IPv4) or "[IPv6]:PORT"; with allow_no_port, a bare IP (port 0).
/// Returns nullopt and sets *error to one line on failure.
std::optional<Endpoint> parse_endpoint(const std::string& text, bool allow_no_port,
                                       std::string* error);
std::string endpoint_text(const sockaddr* addr, socklen_t len);

/// The outcome of one connection.
struct Result {
  std::uint64_t id = 0;
  std::string local;
  std::string remote;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double seconds = 0;     ///< established (connect done / accepted) to finished
  bool verified = false;  ///< finished cleanly and every byte checked matched the pattern
  std::optional<std::uint64_t> first_mismatch;  ///< stream offset of the first wrong byte
  std::string error;                            ///< empty when verified
  double start_s = 0;  ///< connect started / accepted, seconds since the run began
  double end_s = 0;    ///< finished, seconds since the run began

  /// The payload moved: max(bytes_sent, bytes_received).
  std::uint64_t bytes() const { return bytes_sent > bytes_received ? bytes_sent : bytes_received; }
  double mbps() const {
    return seconds > 0 ? static_cast<double>(bytes()) * 8.0 / seconds / 1e6 : 0.0;
  }
};

struct Totals {
  std::uint64_t bytes = 0;
  double seconds = 0;  ///< first start to last end
  double mbps = 0;
  std::uint64_t connections = 0;
  std::uint64_t failed = 0;
};
Totals totals(const std::vector<Result>& results);

struct ClientOptions {
  std::vector<Endpoint> targets;  ///< connection i goes to targets[i mod size]
  std::optional<Endpoint> bind;   ///< local address (port 0 = any)
  unsigned connections = 1;
  unsigned threads = 1;
  Mode mode = Mode::Send;
  std::optional<std::uint64_t> bytes;  ///< per connection; for Recv: expected length
  std::optional<double> duration;      ///< seconds of sending (Send/Echo) or reading (Recv)
  double timeout = 60;  ///< seconds without progress before a connection fails; 0 = never
};

struct ServerOptions {
  std::vector<Endpoint> listen;
  Mode mode = Mode::Sink;
  unsigned threads = 1;
  std::optional<std::uint64_t> bytes;  ///< Source: bytes to send; Sink: exact length expected
  std::uint64_t once = 0;  ///< stop after this many connections finished; 0 = run until signalled
  double timeout = 60;
  /// Called (serialised) when a listening socket is ready, with its bound address.
  std::function<void(const std::string&)> on_listen;
  /// Called (serialised) as each connection finishes.
  std::function<void(const Result&)> on_finish;
};

/// Runs the client to completion; results sorted by id.
std::vector<Result> run_client(const ClientOptions& options);

/// Runs the server until --once connections finished or request_stop(). Returns false and sets
/// *error when a listening socket cannot be opened. *results is sorted by id.
bool run_server(const ServerOptions& options, std::vector<Result>* results, std::string* error);

/// Ends a running client or server (connections still open fail with "interrupted").
/// Async-signal-safe: SIGINT/SIGTERM handlers call it.
void request_stop();

}  // namespace vtoe::netvp::costar
