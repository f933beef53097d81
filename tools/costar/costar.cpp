// costar: the NetVP_Costar host benchmark (paper §4.3). It opens many simultaneous TCP connections
// to many simulated guests (or accepts them) through the Linux kernel's TCP stack, the golden
// reference, and checks every byte against vtoe's stream pattern. See docs/costar.md.
//
//   costar client --target IP:PORT [--target ...] [--connections N] [--threads T]
//                 [--bytes B | --duration S] [--mode send|recv|echo] [--json FILE] [--bind IP]
//                 [--timeout S]
//   costar server --listen IP:PORT [--listen ...] [--mode sink|source|echo] [--threads T]
//                 [--bytes B] [--json FILE] [--once N] [--timeout S]
//
// Exit status: 0 every connection finished and verified, 1 otherwise, 2 usage error.
#include <signal.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "models/core/units.h"
#include "tools/costar/costar_engine.h"

namespace {

using namespace vtoe::netvp::costar;

struct UsageError {
  std::string message;
};

std::uint64_t parse_size(const std::string& option, const std::string& text) {
  try {
    return vtoe::core::parse_bytes(text, vtoe::core::BareNumber::BaseUnit);
  } catch (const std::exception& e) {
    throw UsageError{option + ": " + e.what()};
  }
}

// "10", "2.5" (seconds) or a time with a unit: "500ms", "2s".
double parse_seconds(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && end && *end == '\0' && errno == 0) {
    if (!(v >= 0) || v > 1e9)
      throw UsageError{option + ": expected a number of seconds >= 0, got \"" + text + "\""};
    return v;
  }
  try {
    return static_cast<double>(vtoe::core::parse_time(text, vtoe::core::BareNumber::Reject)) / 1e12;
  } catch (const std::exception& e) {
    throw UsageError{option + ": expected seconds (e.g. 10, 2.5 or 500ms), got \"" + text + "\""};
  }
}

Endpoint parse_ep(const std::string& option, const std::string& text, bool allow_no_port) {
  std::string err;
  auto e = parse_endpoint(text, allow_no_port, &err);
  if (!e) throw UsageError{option + " " + err};
  return *e;
}

std::string line(const Result& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, " sent %llu received %llu seconds %.6f mbps %.2f ",
                static_cast<unsigned long long>(r.bytes_sent),
                static_cast<unsigned long long>(r.bytes_received), r.seconds, r.mbps());
  return "conn " + std::to_string(r.id) + " local " + (r.local.empty() ? "-" : r.local) +
         " remote " + (r.remote.empty() ? "-" : r.remote) + buf +
         (r.verified ? "OK" : "FAILED: " + r.error);
}

std::string total_line(const Totals& t) {
  char buf[200];
  std::snprintf(
      buf, sizeof buf, "total connections %llu failed %llu bytes %llu seconds %.6f mbps %.2f",
      static_cast<unsigned long long>(t.connections), static_cast<unsigned long long>(t.failed),
      static_cast<unsigned long long>(t.bytes), t.seconds, t.mbps);
  return buf;
}

nlohmann::ordered_json to_json(const char* role, Mode mode, const std::vector<Result>& results,
                               const Totals& t) {
  nlohmann::ordered_json conns = nlohmann::ordered_json::array();
  for (const Result& r : results) {
    conns.push_back(
        {{"id", r.id},
         {"local", r.local},
         {"remote", r.remote},
         {"bytes_sent", r.bytes_sent},
         {"bytes_received", r.bytes_received},
         {"seconds", r.seconds},
         {"mbps", r.mbps()},
         {"verified", r.verified},
         {"first_mismatch",
          r.first_mismatch ? nlohmann::ordered_json(*r.first_mismatch) : nlohmann::ordered_json()},
         {"error", r.error.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.error)}});
  }
  return {{"tool", "costar"},
          {"role", role},
          {"mode", mode_name(mode)},
          {"connections", conns},
          {"total",
           {{"bytes", t.bytes},
            {"seconds", t.seconds},
            {"mbps", t.mbps},
            {"connections", t.connections},
            {"failed", t.failed}}}};
}

bool write_json(const std::string& path, const nlohmann::ordered_json& j) {
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  f.close();
  if (!f) {
    std::fprintf(stderr, "costar: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

void on_signal(int) { request_stop(); }

void setup_process() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Many connections need many descriptors: raise the soft limit to the hard one.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "costar: NetVP_Costar, many simultaneous TCP connections through the Linux stack, every byte "
      "checked against vtoe's stream pattern (docs/costar.md)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");

  // client
  std::vector<std::string> targets;
  unsigned connections = 1, client_threads = 0;
  std::string client_bytes, client_duration, client_mode = "send", client_json, bind_ip,
                                             client_timeout = "60";
  CLI::App* client =
      app.add_subcommand("client", "Connect to one or more targets and drive traffic");
  client
      ->add_option("--target", targets, "Peer to connect to; repeat for many guests (round-robin)")
      ->type_name("IP:PORT")
      ->required();
  client->add_option("-n,--connections", connections, "Number of connections")
      ->check(CLI::Range(1u, 1000000u));
  client
      ->add_option("-t,--threads", client_threads,
                   "Worker threads, each with its own epoll (default: min(N, cores))")
      ->check(CLI::Range(1u, 4096u));
  auto* cb = client
                 ->add_option("--bytes", client_bytes,
                              "Bytes per connection, e.g. 4MiB (send/echo default 16MiB; "
                              "recv: expected length, default until the peer closes)")
                 ->type_name("SIZE");
  auto* cd = client
                 ->add_option("--duration", client_duration,
                              "Seconds of sending (send/echo) or reading (recv)")
                 ->type_name("SECONDS");
  cb->excludes(cd);
  client->add_option("--mode", client_mode, "send | recv | echo")
      ->check(CLI::IsMember({"send", "recv", "echo"}));
  client->add_option("--json", client_json, "Write the results as JSON to FILE")->type_name("FILE");
  client->add_option("--bind", bind_ip, "Local address for every connection (IP or IP:PORT)")
      ->type_name("IP");
  client
      ->add_option("--timeout", client_timeout,
                   "Seconds without progress before a connection fails (0 = never)")
      ->type_name("SECONDS");

  // server
  std::vector<std::string> listens;
  unsigned server_threads = 0;
  std::uint64_t once = 0;
  std::string server_bytes, server_mode = "sink", server_json, server_timeout = "60";
  CLI::App* server =
      app.add_subcommand("server", "Accept connections and sink, source or echo the pattern");
  server
      ->add_option("--listen", listens,
                   "Address to listen on; repeat for many (port 0 = any, printed)")
      ->type_name("IP:PORT")
      ->required();
  server->add_option("--mode", server_mode, "sink | source | echo")
      ->check(CLI::IsMember({"sink", "source", "echo"}));
  server->add_option("-t,--threads", server_threads, "Worker threads (default: min(cores, 4))")
      ->check(CLI::Range(1u, 4096u));
  server
      ->add_option("--bytes", server_bytes,
                   "source: bytes to send per connection (default: until the client "
                   "closes); sink: exact length expected")
      ->type_name("SIZE");
  server->add_option("--json", server_json, "Write the results as JSON to FILE at exit")
      ->type_name("FILE");
  server->add_option("--once", once,
                     "Exit after N connections finished (0 = run until SIGINT/SIGTERM)");
  server
      ->add_option("--timeout", server_timeout,
                   "Seconds without progress before a connection fails (0 = never)")
      ->type_name("SECONDS");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "costar: %s (see costar --help)\n", what.c_str());
    return 2;
  }

  setup_process();
  std::vector<Result> results;
  std::string json_path;
  const char* role;
  Mode mode;
  try {
    if (*client) {
      ClientOptions o;
      for (const auto& t : targets) o.targets.push_back(parse_ep("--target", t, false));
      if (!bind_ip.empty()) o.bind = parse_ep("--bind", bind_ip, true);
      o.connections = connections;
      o.threads = client_threads ? client_threads : std::min(connections, hardware_threads());
      o.mode = client_mode == "send" ? Mode::Send : client_mode == "recv" ? Mode::Recv : Mode::Echo;
      if (!client_bytes.empty()) o.bytes = parse_size("--bytes", client_bytes);
      if (!client_duration.empty()) o.duration = parse_seconds("--duration", client_duration);
      if (!o.bytes && !o.duration && o.mode != Mode::Recv) o.bytes = 16ull << 20;
      o.timeout = parse_seconds("--timeout", client_timeout);
      role = "client";
      mode = o.mode;
      json_path = client_json;
      results = run_client(o);
      for (const Result& r : results) std::printf("%s\n", line(r).c_str());
    } else {
      ServerOptions o;
      for (const auto& l : listens) o.listen.push_back(parse_ep("--listen", l, false));
      o.mode = server_mode == "sink"     ? Mode::Sink
               : server_mode == "source" ? Mode::Source
                                         : Mode::Reflect;
      o.threads = server_threads ? server_threads : std::min(4u, hardware_threads());
      if (!server_bytes.empty()) o.bytes = parse_size("--bytes", server_bytes);
      o.once = once;
      o.timeout = parse_seconds("--timeout", server_timeout);
      o.on_listen = [](const std::string& addr) {
        std::printf("listen %s\n", addr.c_str());
        std::fflush(stdout);
      };
      o.on_finish = [](const Result& r) {
        std::printf("%s\n", line(r).c_str());
        std::fflush(stdout);
      };
      role = "server";
      mode = o.mode;
      json_path = server_json;
      std::string error;
      if (!run_server(o, &results, &error)) {
        std::fprintf(stderr, "costar: %s\n", error.c_str());
        return 1;
      }
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "costar: %s (see costar --help)\n", e.message.c_str());
    return 2;
  }

  const Totals t = totals(results);
  std::printf("%s\n", total_line(t).c_str());
  std::fflush(stdout);
  bool ok = t.failed == 0 && t.connections > 0;
  if (!json_path.empty() && !write_json(json_path, to_json(role, mode, results, t))) ok = false;
  return ok ? 0 : 1;
}
