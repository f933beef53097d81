// TOE bench: a bare host (no CPU model) programs one control channel's rings in DRAM and drives
// the TOE through its registers; the TOE talks over a link to a simulated peer host.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <systemc>
#include <vector>

#include "models/core/stream_pattern.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "models/toe/host_ring_driver.h"
#include "models/toe/toe.h"
#include "tests/support/bench.h"

using namespace vtoe;
using toe::CmdDesc;
using toe::EcqDesc;
using toe::EventType;
using toe::Ring;

namespace {

constexpr std::uint64_t kRegs = 0x4000'0000;
constexpr std::uint32_t kEntries = 64;
inline std::uint8_t pattern_byte(std::uint64_t i) {
  return static_cast<std::uint8_t>((i * 7 + (i >> 8)) & 0xff);
}

struct Host : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Host> bus{"bus"};
  sc_core::sc_in<bool> irq{"irq"};
  mem::Dram& dram;
  std::vector<EcqDesc> events;
  std::function<void(Host&)> script;
  std::uint64_t next_alloc = 16 << 20;

  SC_HAS_PROCESS(Host);
  Host(sc_core::sc_module_name n, mem::Dram& d) : sc_module(n), dram(d) { SC_THREAD(run); }

  std::uint64_t alloc(std::uint64_t n) {
    const std::uint64_t at = next_alloc;
    next_alloc += (n + 4095) & ~4095ull;
    return at;
  }
  void write_reg(std::uint64_t off, std::uint32_t v) {
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(kRegs + off);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    bus->b_transport(gp, d);
    wait(d + sc_core::sc_time(10, sc_core::SC_NS));
  }
  // Any access; the response the TOE gave.
  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t off, std::uint8_t* data,
                                  unsigned len) {
    tlm::tlm_generic_payload gp;
    gp.set_command(cmd);
    gp.set_address(kRegs + off);
    gp.set_data_ptr(data);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    bus->b_transport(gp, d);
    wait(d);
    return gp.get_response_status();
  }
  std::uint32_t read_reg(std::uint64_t off) {
    std::uint32_t v = 0;
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(kRegs + off);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    bus->b_transport(gp, d);
    wait(d);
    return v;
  }
  static std::uint64_t ring_reg(Ring r, std::uint64_t sub) {
    return toe::HostRingDriver::ring_reg(r, sub);
  }
  // The host side of the ring protocol is the driver's (toe::HostRingDriver): this bench reaches
  // the channel over its bus socket and the rings in DRAM directly.
  struct Access : toe::HostRingDriver::Access {
    Host& h;
    explicit Access(Host& host) : h(host) {}
    void write_reg(std::uint64_t off, std::uint32_t v) override { h.write_reg(off, v); }
    std::uint32_t read_reg(std::uint64_t off) override { return h.read_reg(off); }
    void read_mem(std::uint64_t a, void* d, std::size_t n) override { h.dram.read(a, d, n); }
    void write_mem(std::uint64_t a, const void* d, std::size_t n) override {
      h.dram.write(a, d, n);
    }
    void wait_for_space() override { sc_core::wait(sc_core::sc_time(1, sc_core::SC_US)); }
  };
  toe::HostRingDriver rings{kEntries};
  void setup() {
    std::array<std::uint64_t, toe::kRings> addr{};
    for (auto& a : addr) a = alloc(kEntries * toe::kDescBytes);
    Access access(*this);
    rings.start(access, addr);
  }
  void post(Ring r, const void* desc) {
    Access access(*this);
    rings.post(access, r, desc);
  }
  // Waits for the interrupt and drains the ECQ into `events`.
  void drain() {
    if (!irq.read()) wait(sc_core::sc_time(50, sc_core::SC_MS), irq.posedge_event());
    Access access(*this);
    EcqDesc d;
    while (rings.next_completion(access, d)) events.push_back(d);
    rings.release_completions(access);
  }
  // Drains until an event of `type` for `sock` arrives (or the time limit passes).
  EcqDesc wait_for(EventType type, std::uint16_t sock, double limit_ms = 200) {
    const sc_core::sc_time end =
        sc_core::sc_time_stamp() + sc_core::sc_time(limit_ms, sc_core::SC_MS);
    std::size_t seen = 0;
    while (sc_core::sc_time_stamp() < end) {
      for (; seen < events.size(); ++seen)
        if (events[seen].type == static_cast<std::uint8_t>(type) && events[seen].sock == sock)
          return events[seen];
      drain();
    }
    ADD_FAILURE() << "no event " << int(type) << " for socket " << sock;
    return EcqDesc{};
  }
  std::size_t count(EventType type) const {
    std::size_t n = 0;
    for (auto& e : events) n += e.type == static_cast<std::uint8_t>(type);
    return n;
  }
  void run() {
    script(*this);
    sc_core::sc_stop();
  }
};

struct Bench {
  mem::Dram dram{"dram", mem::DramParams{512ull << 20, 6.4e9, 50'000, 0}};
  mem::Interconnect bus{"bus", 10'000};
  std::unique_ptr<toe::Toe> toe_;
  toe::Toe::IrqLine irq{"irq"};
  net::EthernetLink link{"link", net::EthernetLinkParams{1'000'000, 0.0, 1}};
  std::unique_ptr<net::PeerHost> peer;
  Host host{"host", dram};

  explicit Bench(std::vector<net::PeerApp> apps, std::uint32_t ccb = 16,
                 std::uint32_t dma_outstanding = 1, core::TimePs link_delay_ps = 1'000'000)
      : link{"link", net::EthernetLinkParams{link_delay_ps, 0.0, 1}} {
    toe::ToeParams tp;
    tp.ccb_capacity = ccb;
    tp.dma_outstanding = dma_outstanding;
    tp.stack.mac.b = {2, 0, 0, 0, 0, 1};
    tp.stack.ip = tcpip::parse_ipv4("10.0.0.1");
    toe_ = std::make_unique<toe::Toe>("toe", tp);
    net::PeerHostParams pp;
    pp.stack.mac.b = {2, 0, 0, 0, 0, 2};
    pp.stack.ip = tcpip::parse_ipv4("10.0.0.2");
    pp.apps = std::move(apps);
    peer = std::make_unique<net::PeerHost>("peer", pp);
    bus.map(0, dram.size(), dram.in, "dram");
    bus.map(kRegs, 0x1000, toe_->in, "toe");
    toe_->dma.bind(bus.in);
    host.bus.bind(bus.in);
    toe_->irq(irq);
    host.irq(irq);
    toe_->mac().to_wire.bind(link.a_in);
    link.a_out.bind(toe_->mac().from_wire);
    peer->mac().to_wire.bind(link.b_in);
    link.b_out.bind(peer->mac().from_wire);
  }
};

CmdDesc connect_cmd(Host& h, std::uint16_t sock, std::uint16_t port,
                    std::uint32_t rx_size = 64 * 1024) {
  CmdDesc c{};
  c.opcode = static_cast<std::uint8_t>(toe::CmdOp::Connect);
  c.sock = sock;
  c.ip = tcpip::parse_ipv4("10.0.0.2");
  c.port = port;
  c.rx_size = rx_size;
  c.rx_addr = h.alloc(rx_size);
  return c;
}

CmdDesc listen_cmd(std::uint16_t sock, std::uint16_t port, std::uint16_t backlog) {
  CmdDesc l{};
  l.opcode = static_cast<std::uint8_t>(toe::CmdOp::Listen);
  l.sock = sock;
  l.port = port;
  l.arg = backlog;
  return l;
}

// Connects socket 1 to the peer's sink on 5001 and sends `count` pattern messages of `msg`
// bytes, keeping up to `slots` contexts in flight in a `slots`-message buffer, then waits for
// every SendDone and 5 ms more.
void send_pattern_messages(Host& h, std::uint32_t msg, std::uint32_t count, std::uint32_t slots) {
  h.setup();
  CmdDesc c = connect_cmd(h, 1, 5001);
  h.post(Ring::Cmd, &c);
  h.wait_for(EventType::Connected, 1);
  const std::uint64_t buf = h.alloc(std::uint64_t{msg} * slots);
  std::vector<std::uint8_t> data(msg);
  std::uint64_t offset = 0;
  for (std::uint32_t posted = 0; posted < count; ++posted) {
    while (posted - h.count(EventType::SendDone) >= slots) h.drain();
    const std::uint64_t slot = buf + (posted % slots) * std::uint64_t{msg};
    for (std::uint32_t i = 0; i < msg; ++i) data[i] = pattern_byte(offset + i);
    h.dram.write(slot, data.data(), msg);
    toe::SendDesc s{};
    s.sock = 1;
    s.length = msg;
    s.addr = slot;
    s.cookie = posted;
    h.post(Ring::Send, &s);
    offset += msg;
  }
  while (h.count(EventType::SendDone) < count) h.drain();
  sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));
}

// A sink on the simulated peer that does not check the byte pattern.
net::PeerApp sink_app(std::uint16_t port) {
  net::PeerApp app;
  app.type = net::PeerAppType::Sink;
  app.port = port;
  app.verify_pattern = false;
  return app;
}

}  // namespace

TEST(Toe, TransmitsSendQueuePayloadToPeerIntact) {
  net::PeerApp sink;
  sink.type = net::PeerAppType::Sink;
  sink.port = 5001;
  Bench b({sink});
  constexpr std::uint32_t kMsg = 8000, kCount = 200;
  b.host.script = [&](Host& h) { send_pattern_messages(h, kMsg, kCount, 8); };
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
  EXPECT_EQ(b.host.count(EventType::SendDone), kCount);
  EXPECT_EQ(b.host.count(EventType::Error), 0u);
  EXPECT_EQ(b.peer->bytes_received(), std::uint64_t{kMsg} * kCount);
  EXPECT_EQ(b.peer->pattern_errors(), 0u);
  EXPECT_EQ(b.toe_->tx_bytes(), std::uint64_t{kMsg} * kCount);
}

TEST(Toe, SeveralBurstReadsInFlightDeliverThePayloadInOrder) {
  net::PeerApp sink;
  sink.type = net::PeerAppType::Sink;
  sink.port = 5001;
  Bench b({sink}, 16, 4);
  constexpr std::uint32_t kMsg = 60000, kCount = 20;  // 15 bursts of 4 KiB per context
  b.host.script = [&](Host& h) { send_pattern_messages(h, kMsg, kCount, 4); };
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
  EXPECT_EQ(b.host.count(EventType::SendDone), kCount);
  EXPECT_EQ(b.host.count(EventType::Error), 0u);
  EXPECT_EQ(b.peer->bytes_received(), std::uint64_t{kMsg} * kCount);
  EXPECT_EQ(b.peer->pattern_errors(), 0u);
  EXPECT_EQ(b.toe_->tx_dma().outstanding(), 4u);
  // The engine really kept several reads in flight (at most the four it may).
  const core::Accumulator* in_flight =
      test::accumulator(b.toe_->tx_dma().stats(), "bursts_in_flight");
  ASSERT_NE(in_flight, nullptr);
  EXPECT_EQ(in_flight->max(), 4.0);
}

TEST(Toe, ReceivesIntoKernelBufferAndNotifiesWhenFullOrAsked) {
  net::PeerApp src;
  src.type = net::PeerAppType::Source;
  src.port = 6001;
  src.remote_ip = tcpip::parse_ipv4("10.0.0.1");
  src.start_ps = 1'000'000'000;  // 1 ms: after the host listens
  Bench b({src});
  constexpr std::uint32_t kBuf = 32 * 1024;
  std::uint64_t consumed = 0, bad = 0;
  b.host.script = [&](Host& h) {
    h.setup();
    CmdDesc l = listen_cmd(1, 6001, 4);
    h.post(Ring::Cmd, &l);
    h.wait_for(EventType::CmdDone, 1);
    CmdDesc a{};
    a.opcode = static_cast<std::uint8_t>(toe::CmdOp::Accept);
    a.sock = 2;
    a.arg = 1;
    a.rx_size = kBuf;
    a.rx_addr = h.alloc(kBuf);
    h.post(Ring::Cmd, &a);
    h.wait_for(EventType::Accepted, 2);
    std::vector<std::uint8_t> chunk(kBuf);
    std::size_t seen = 0;
    while (consumed < 4 * 1024 * 1024) {
      h.drain();
      for (; seen < h.events.size(); ++seen) {
        const EcqDesc& e = h.events[seen];
        if (e.type != static_cast<std::uint8_t>(EventType::RxData)) continue;
        // Read the reported bytes (they may wrap) and check the peer's pattern.
        for (std::uint32_t i = 0; i < e.length; ++i) {
          std::uint8_t v;
          h.dram.read(a.rx_addr + (e.offset + i) % kBuf, &v, 1);
          bad += v != pattern_byte(consumed + i);
        }
        consumed += e.length;
        toe::RecvDesc r{};
        r.sock = 2;
        r.release = e.length;
        r.flags = toe::kRecvNotifyNow;
        h.post(Ring::Recv, &r);
      }
    }
  };
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
  EXPECT_GE(consumed, 4u * 1024 * 1024);
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(b.host.count(EventType::RxData), 10u);
  EXPECT_EQ(b.host.count(EventType::Error), 0u);
}

TEST(Toe, HostileContextsGetErrorsAndTheToeKeepsWorking) {
  net::PeerApp sink = sink_app(5001);
  Bench b({sink}, /*ccb=*/2);
  b.host.script = [&](Host& h) {
    h.setup();
    // A send for a socket that does not exist.
    toe::SendDesc s{};
    s.sock = 77;
    s.length = 100;
    s.addr = h.alloc(4096);
    h.post(Ring::Send, &s);
    h.wait_for(EventType::Error, 77);
    // Zero and absurd lengths.
    CmdDesc c = connect_cmd(h, 1, 5001);
    h.post(Ring::Cmd, &c);
    h.wait_for(EventType::Connected, 1);
    s.sock = 1;
    s.length = 0;
    h.post(Ring::Send, &s);
    s.length = 0xffffffffu;
    h.post(Ring::Send, &s);
    // An address outside memory: the DMA faults, the context fails.
    s.length = 1000;
    s.addr = 0x3000'0000'0000ull;
    s.cookie = 99;
    h.post(Ring::Send, &s);
    // Releasing bytes never received; an unknown opcode; a receive buffer of 0 bytes.
    toe::RecvDesc r{};
    r.sock = 1;
    r.release = 5000;
    h.post(Ring::Recv, &r);
    CmdDesc junk{};
    junk.opcode = 200;
    junk.sock = 9;
    h.post(Ring::Cmd, &junk);
    CmdDesc nobuf = connect_cmd(h, 3, 5001);
    nobuf.rx_size = 0;
    h.post(Ring::Cmd, &nobuf);
    // CCB holds two entries: the second connect fits, the third is refused.
    CmdDesc c2 = connect_cmd(h, 4, 5001);
    h.post(Ring::Cmd, &c2);
    h.wait_for(EventType::Connected, 4);
    CmdDesc c3 = connect_cmd(h, 5, 5001);
    h.post(Ring::Cmd, &c3);
    h.wait_for(EventType::Error, 5);
    // Garbage ring programming latches an error but changes nothing.
    h.write_reg(Host::ring_reg(Ring::Send, toe::reg::kRingSize), 3);
    h.write_reg(Host::ring_reg(Ring::Cmd, toe::reg::kRingTail), 1000);
    EXPECT_NE(h.read_reg(toe::reg::kStatus) & 1, 0u);
    // And a good send still goes through.
    std::vector<std::uint8_t> data(3000, 0x42);
    const std::uint64_t buf = h.alloc(4096);
    h.dram.write(buf, data.data(), data.size());
    toe::SendDesc good{};
    good.sock = 1;
    good.length = 3000;
    good.addr = buf;
    good.cookie = 7;
    h.post(Ring::Send, &good);
    h.wait_for(EventType::SendDone, 1);
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));
  };
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  auto status_of = [&](std::uint16_t sock, std::uint32_t cookie, bool by_cookie) {
    for (auto& e : b.host.events)
      if (e.type == static_cast<std::uint8_t>(EventType::Error) && e.sock == sock &&
          (!by_cookie || e.cookie == cookie))
        return static_cast<toe::Status>(e.status);
    return toe::Status::Ok;
  };
  EXPECT_EQ(status_of(77, 0, false), toe::Status::BadSocket);
  EXPECT_EQ(status_of(1, 99, true), toe::Status::DmaFault);
  EXPECT_EQ(status_of(9, 0, false), toe::Status::BadDescriptor);
  EXPECT_EQ(status_of(3, 0, false), toe::Status::BadDescriptor);
  EXPECT_EQ(status_of(5, 0, false), toe::Status::TableFull);
  std::size_t bad_desc = 0;
  for (auto& e : b.host.events)
    bad_desc += e.sock == 1 && e.status == static_cast<int>(toe::Status::BadDescriptor);
  EXPECT_EQ(bad_desc, 3u);  // zero length, huge length, over-release
  EXPECT_EQ(b.peer->bytes_received(), 3000u);
}

namespace {
// Sends a fixed mix of malformed and hostile frames into one end of the link.
struct Attacker : sc_core::sc_module {
  SC_HAS_PROCESS(Attacker);
  Attacker(sc_core::sc_module_name n, net::FrameSink& wire) : sc_module(n), wire_(wire) {
    SC_THREAD(run);
  }
  void run() {
    const tcpip::MacAddr me{{2, 0, 0, 0, 0, 9}}, toe_mac{{2, 0, 0, 0, 0, 1}};
    const tcpip::Ipv4 src = tcpip::parse_ipv4("10.0.0.66"), dst = tcpip::parse_ipv4("10.0.0.1");
    std::uint32_t rng = 12345;
    auto next = [&] {
      rng = rng * 1664525u + 1013904223u;
      return rng;
    };
    sc_core::wait(sc_core::sc_time(200, sc_core::SC_US));
    for (int round = 0; round < 40; ++round) {
      std::vector<net::Frame> frames;
      frames.push_back(net::Frame(10, 0xee));    // runt
      frames.push_back(net::Frame(9100, 0x11));  // oversized
      tcpip::TcpHeader h;
      h.src_port = 40000;
      h.dst_port = 9999;  // closed port: RST answers
      h.flags = 0x02;     // SYN
      h.seq = next();
      h.window = 1000;
      frames.push_back(tcpip::build_tcp_frame(me, toe_mac, src, dst, h, {}, nullptr, 0));
      net::Frame bad_sum = frames.back();
      bad_sum[50] ^= 0x5a;  // TCP checksum broken
      frames.push_back(bad_sum);
      net::Frame bad_ip = frames[2];
      bad_ip[24] ^= 0xff;  // IPv4 header checksum broken
      frames.push_back(bad_ip);
      net::Frame garbage(200);  // our MAC, IPv4, then noise
      for (auto& b : garbage) b = static_cast<std::uint8_t>(next());
      std::copy(toe_mac.b.begin(), toe_mac.b.end(), garbage.begin());
      garbage[12] = 0x08;
      garbage[13] = 0x00;
      frames.push_back(garbage);
      for (auto& f : frames) {
        wire_.receive_frame(std::move(f));
        sc_core::wait(sc_core::sc_time(5, sc_core::SC_US));
      }
    }
  }
  net::FrameSink& wire_;
};
}  // namespace

TEST(Toe, HostileFramesAreCountedAndDroppedWhileATransferCompletes) {
  net::PeerApp sink;
  sink.type = net::PeerAppType::Sink;
  sink.port = 5001;
  Bench b({sink});
  Attacker attacker("attacker", b.link.b_in);
  constexpr std::uint32_t kMsg = 8000, kCount = 100;
  b.host.script = [&](Host& h) {
    h.setup();
    CmdDesc c = connect_cmd(h, 1, 5001);
    h.post(Ring::Cmd, &c);
    h.wait_for(EventType::Connected, 1);
    const std::uint64_t buf = h.alloc(kMsg * 8);
    std::vector<std::uint8_t> data(kMsg);
    std::uint64_t offset = 0;
    for (std::uint32_t posted = 0; posted < kCount; ++posted) {
      while (posted - h.count(EventType::SendDone) >= 8) h.drain();
      for (std::uint32_t i = 0; i < kMsg; ++i) data[i] = pattern_byte(offset + i);
      h.dram.write(buf + (posted % 8) * kMsg, data.data(), kMsg);
      toe::SendDesc s{};
      s.sock = 1;
      s.length = kMsg;
      s.addr = buf + (posted % 8) * kMsg;
      h.post(Ring::Send, &s);
      offset += kMsg;
      // Pace the sender so the attack overlaps the transfer.
      sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));
    }
    while (h.count(EventType::SendDone) < kCount) h.drain();
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));
  };
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
  EXPECT_EQ(b.peer->bytes_received(), std::uint64_t{kMsg} * kCount);
  EXPECT_EQ(b.peer->pattern_errors(), 0u);
  const tcpip::StackStats& st = b.toe_->ppm().stack().stats();
  EXPECT_GE(b.toe_->mac().rx_errors(), 80u);  // runts and oversized frames stop at the MAC
  EXPECT_GE(st.drop_bad_tcp_checksum, 40u);
  EXPECT_GE(st.drop_bad_ip_checksum, 40u);
  EXPECT_GE(st.rst_sent, 40u);  // SYNs to a closed port are refused per RFC 9293
  EXPECT_GT(st.total_drops(), 120u);
  EXPECT_EQ(b.host.count(EventType::Error), 0u);
}

VTOE_TEST_MAIN

// A connection whose send buffer is full holds up only itself: contexts of another connection
// queued behind its long context still go straight into the TOE (no head-of-line blocking in the
// Tx DMA).
TEST(Toe, AFullConnectionDoesNotHoldUpAnotherConnectionsContexts) {
  net::PeerApp sink = sink_app(5001);
  Bench b({sink});
  constexpr std::uint32_t kLong = 4u << 20, kShort = 8000, kShorts = 8;
  std::vector<std::uint16_t> done_order;
  b.host.script = [&](Host& h) {
    h.setup();
    for (std::uint16_t s : {1, 2}) {
      CmdDesc c = connect_cmd(h, s, 5001);
      h.post(Ring::Cmd, &c);
      h.wait_for(EventType::Connected, s);
    }
    // 4 MiB on socket 1 takes some 34 ms on the 1 Gbit/s link; its 256 KiB send buffer fills at
    // once and the context waits for space.
    toe::SendDesc big{};
    big.sock = 1;
    big.length = kLong;
    big.addr = h.alloc(kLong);
    h.post(Ring::Send, &big);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    const std::uint64_t buf = h.alloc(kShort);
    for (std::uint32_t i = 0; i < kShorts; ++i) {
      toe::SendDesc s{};
      s.sock = 2;
      s.length = kShort;
      s.addr = buf;
      s.cookie = i + 1;
      h.post(Ring::Send, &s);
    }
    while (h.count(EventType::SendDone) < kShorts + 1) h.drain();
    for (auto& e : h.events)
      if (e.type == static_cast<std::uint8_t>(EventType::SendDone)) done_order.push_back(e.sock);
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_MS));  // the last 256 KiB leave the TOE
  };
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  ASSERT_EQ(done_order.size(), kShorts + 1);
  // Socket 2's contexts all complete before socket 1's long one.
  EXPECT_EQ(done_order.back(), 1);
  EXPECT_EQ(std::count(done_order.begin(), done_order.end(), 2), kShorts);
  EXPECT_EQ(b.host.count(EventType::Error), 0u);
  EXPECT_EQ(b.peer->bytes_received(), std::uint64_t{kLong} + kShort * kShorts);
}

// Contexts on connections whose peer has closed its window (an application that stopped reading)
// do not count against the dispatcher's pool (toe.dispatcher.depth, 4): before, four of them took
// every slot and a send on another connection never entered the TOE (no head-of-line blocking
// across connections, channels or VMs).
TEST(Toe, ContextsOnClosedWindowsLeaveTheDispatchersPoolToOthers) {
  net::PeerApp stuck = sink_app(5002);
  stuck.reads = false;
  net::PeerApp sink = sink_app(5001);
  Bench b({stuck, sink});
  constexpr std::uint32_t kLong = 4u << 20, kShort = 8000;
  bool short_done = false;
  sc_core::sc_time short_took;
  b.host.script = [&](Host& h) {
    h.setup();
    const std::uint64_t buf = h.alloc(kLong);
    for (std::uint16_t s = 1; s <= 5; ++s) {
      CmdDesc c = connect_cmd(h, s, s <= 4 ? 5002 : 5001);
      h.post(Ring::Cmd, &c);
      h.wait_for(EventType::Connected, s);
    }
    for (std::uint16_t s = 1; s <= 4; ++s) {  // fill the stuck peer's windows: 4 contexts wait
      toe::SendDesc big{};
      big.sock = s;
      big.length = kLong;
      big.addr = buf;
      h.post(Ring::Send, &big);
    }
    sc_core::wait(sc_core::sc_time(20, sc_core::SC_MS));  // the windows close
    toe::SendDesc small{};
    small.sock = 5;
    small.length = kShort;
    small.addr = buf;
    const sc_core::sc_time posted = sc_core::sc_time_stamp();
    h.post(Ring::Send, &small);
    short_done = h.wait_for(EventType::SendDone, 5, 5).sock == 5;
    short_took = sc_core::sc_time_stamp() - posted;
  };
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  EXPECT_TRUE(short_done) << "the send on the open connection waited behind the stuck ones";
  EXPECT_LT(short_took, sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_GE(test::counter(b.toe_->tx_dma().stats(), "window_parks"), 1u);
  EXPECT_EQ(b.host.count(EventType::Error), 0u);
}

// A send context waiting for send-buffer space when its connection is aborted or closed fails at
// once (found by fuzz_guest: a hostile guest aborted such a connection and the Tx DMA, waiting
// for an acknowledgment that could no longer come, held the context for ever; four of them took
// every slot the dispatcher keeps in the Tx DMA and starved every other VM's sends). The 10 ms
// link keeps the Tx DMA waiting for space well past the Abort or Close.
TEST(Toe, ASendWaitingForSpaceFailsWhenItsConnectionEnds) {
  net::PeerApp sink = sink_app(5001);
  Bench b({sink}, 16, 1, 10'000'000'000);
  constexpr std::uint32_t kLong = 4u << 20;
  std::vector<sc_core::sc_time> waited;
  b.host.script = [&](Host& h) {
    h.setup();
    const std::uint64_t buf = h.alloc(kLong);
    for (const toe::CmdOp op : {toe::CmdOp::Abort, toe::CmdOp::Close}) {
      const std::uint16_t sock = op == toe::CmdOp::Abort ? 1 : 2;
      CmdDesc c = connect_cmd(h, sock, 5001);
      h.post(Ring::Cmd, &c);
      h.wait_for(EventType::Connected, sock);
      toe::SendDesc big{};
      big.sock = sock;
      big.length = kLong;
      big.addr = buf;
      big.cookie = 7;
      h.post(Ring::Send, &big);
      // The 256 KiB send buffer is full at once; the first acknowledgment is 20 ms away.
      sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
      CmdDesc end{};
      end.opcode = static_cast<std::uint8_t>(op);
      end.sock = sock;
      h.post(Ring::Cmd, &end);
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      const EcqDesc err = h.wait_for(EventType::Error, sock, 100);
      waited.push_back(sc_core::sc_time_stamp() - start);
      EXPECT_EQ(err.status, static_cast<int>(toe::Status::BadSocket));
      EXPECT_EQ(err.cookie, 7u);
      sc_core::wait(sc_core::sc_time(100, sc_core::SC_MS));  // the connection is gone
      h.drain();
    }
  };
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_SEC));
  ASSERT_EQ(waited.size(), 2u);
  // At once: well before any acknowledgment of the old connection's data could have come.
  for (const sc_core::sc_time& t : waited) EXPECT_LT(t, sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(b.host.count(EventType::SendDone), 0u);
}

// A connection that sends its data and its FIN while it waits in the listener's backlog (no
// Accept posted yet) is reported whole once accepted: Accepted, RxData, then PeerClosed. (The
// FIN used to find no CCB entry and was lost, so the server waited for ever.)
TEST(Toe, AFinThatArrivesBeforeTheAcceptIsReportedAfterIt) {
  net::PeerApp clients;
  clients.type = net::PeerAppType::Clients;
  clients.remote_ip = tcpip::parse_ipv4("10.0.0.1");
  clients.port = 7000;
  clients.start_ps = 100'000'000;  // 100 us: the Listen is in place by then
  clients.clients.connections = 3;
  clients.clients.concurrency = 3;
  clients.clients.bytes = 2000;
  Bench b({clients});
  b.host.script = [&](Host& h) {
    h.setup();
    CmdDesc l = listen_cmd(1, 7000, 8);
    h.post(Ring::Cmd, &l);
    h.wait_for(EventType::CmdDone, 1);
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));  // all three have sent and closed by now
    for (std::uint16_t s = 2; s <= 4; ++s) {
      CmdDesc a{};
      a.opcode = static_cast<std::uint8_t>(toe::CmdOp::Accept);
      a.sock = s;
      a.arg = 1;
      a.rx_size = 4096;
      a.rx_addr = h.alloc(4096);
      h.post(Ring::Cmd, &a);
      h.wait_for(EventType::Accepted, s);
      const EcqDesc data = h.wait_for(EventType::RxData, s);
      EXPECT_EQ(data.length, 2000u);
      h.wait_for(EventType::PeerClosed, s);
      CmdDesc c{};
      c.opcode = static_cast<std::uint8_t>(toe::CmdOp::Close);
      c.sock = s;
      h.post(Ring::Cmd, &c);
      const EcqDesc closed = h.wait_for(EventType::Closed, s);
      EXPECT_TRUE(closed.flags & toe::kEcqSocketReleased);
    }
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));
  };
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  EXPECT_EQ(b.peer->clients_done(), 3u);
  EXPECT_EQ(b.peer->clients_failed(), 0u);
}

// Closing a listening socket (found by fuzz_guest, tests/fuzz/regressions/guest/listen_close_*):
// the protocol engine reports the listener Closed at once, and the PPM used to drop the CCB entry
// on that event and then again itself, after freeing it (a use after free under ASan, two Closed
// completions without). One CmdDone, one Closed, and the port can be listened on again.
TEST(Toe, ClosingAListenerReleasesItOnce) {
  Bench b({});
  b.host.script = [&](Host& h) {
    h.setup();
    for (std::uint16_t round = 0; round < 2; ++round) {
      const std::uint16_t sock = static_cast<std::uint16_t>(3 + round);
      CmdDesc l = listen_cmd(sock, 7000, 4);
      h.post(Ring::Cmd, &l);
      EXPECT_EQ(h.wait_for(EventType::CmdDone, sock).status, 0);
      CmdDesc c{};
      c.opcode = static_cast<std::uint8_t>(toe::CmdOp::Close);
      c.sock = sock;
      h.post(Ring::Cmd, &c);
      const EcqDesc closed = h.wait_for(EventType::Closed, sock);
      EXPECT_TRUE(closed.flags & toe::kEcqSocketReleased);
      sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
      h.drain();
    }
  };
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  EXPECT_EQ(b.host.count(EventType::Closed), 2u);   // one per listener, not two
  EXPECT_EQ(b.host.count(EventType::CmdDone), 4u);  // two Listens, two Closes
  EXPECT_EQ(b.host.count(EventType::Error), 0u);    // the second Listen found the port free
}

// A host that posts contexts and never reads its ECQ: the TOE holds at most toe.completion_queue
// completions for it and then stops fetching its rings (back-pressure), instead of queueing a
// completion for every context the host can post.
TEST(Toe, AHostThatNeverReadsItsEcqCannotGrowTheToesMemory) {
  Bench b({});
  std::uint64_t posted = 0;
  b.host.script = [&](Host& h) {
    h.setup();
    // Each RecvQ context names a socket that does not exist: an Error completion each.
    const sc_core::sc_time end = sc_core::sc_time_stamp() + sc_core::sc_time(20, sc_core::SC_MS);
    while (sc_core::sc_time_stamp() < end) {
      toe::RecvDesc r{};
      r.sock = 99;
      r.release = 64;
      h.post(Ring::Recv, &r);  // waits (1 us at a time) while the ring is full
      ++posted;
    }
  };
  sc_core::sc_start(sc_core::sc_time(25, sc_core::SC_MS));
  toe::ControlChannel& ch = b.toe_->channel(0);
  // ECQ (64 entries) full, 1024 more waiting (plus at most one fetch batch that was on its way),
  // the rest of the host's contexts left in its ring.
  EXPECT_LE(ch.completions_waiting(), 1024u + 8u);
  EXPECT_GE(ch.completions_waiting(), 1000u);
  EXPECT_LE(posted, 64u + 1024u + kEntries + 8u);
  EXPECT_EQ(ch.pending(Ring::Recv), kEntries - 1);
}

// A receive DMA that faults (the host's buffer is not memory) is an error completion, and the
// bytes stay in the TOE: they leave the connection's buffer only once the host has them.
TEST(Toe, AFaultingReceiveDmaLosesNoByte) {
  net::PeerApp echo;
  echo.type = net::PeerAppType::Echo;
  echo.port = 7;
  Bench b({echo});
  constexpr std::uint32_t kBytes = 3000;
  std::size_t in_toe = 0;
  b.host.script = [&](Host& h) {
    h.setup();
    CmdDesc c = connect_cmd(h, 1, 7);
    c.rx_addr = 0x3000'0000;  // between DRAM (512 MiB) and the TOE's registers: nothing there
    h.post(Ring::Cmd, &c);
    h.wait_for(EventType::Connected, 1);
    const std::uint64_t buf = h.alloc(kBytes);
    toe::SendDesc s{};
    s.sock = 1;
    s.length = kBytes;
    s.addr = buf;
    h.post(Ring::Send, &s);
    const EcqDesc err = h.wait_for(EventType::Error, 1);
    EXPECT_EQ(err.status, static_cast<int>(toe::Status::DmaFault));
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));  // the whole echo is back by now
    toe::CcbEntry* e = b.toe_->ccb().find(0, 1);
    ASSERT_NE(e, nullptr);
    in_toe = b.toe_->ppm().stack().readable(e->conn);
  };
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  EXPECT_EQ(in_toe, kBytes);  // every echoed byte still waits in the connection's buffer
}

// Bad programming through the register layer: a doorbell on a disabled channel latches
// STATUS.ERROR (the context waits for the enable), an access of the wrong width and one to no
// register are bad accesses answered with an address error and counted.
TEST(Toe, DisabledDoorbellsAndBadAccessesAreReported) {
  Bench b({});
  tlm::tlm_response_status narrow = tlm::TLM_OK_RESPONSE, nowhere = tlm::TLM_OK_RESPONSE;
  b.host.script = [&](Host& h) {
    h.setup();
    h.write_reg(toe::reg::kCtrl, 0);  // disabled
    toe::SendDesc s{};
    s.sock = 77;
    s.length = 100;
    s.addr = h.alloc(4096);
    h.post(Ring::Send, &s);
    EXPECT_NE(h.read_reg(toe::reg::kStatus) & toe::reg::kStatusError, 0u);
    h.write_reg(toe::reg::kStatus, toe::reg::kStatusError);  // write 1 to clear
    EXPECT_EQ(h.read_reg(toe::reg::kStatus), 0u);
    std::uint16_t half = 1;
    narrow = h.access(tlm::TLM_WRITE_COMMAND, toe::reg::kCtrl,
                      reinterpret_cast<std::uint8_t*>(&half), 2);
    std::uint32_t word = 0;
    nowhere = h.access(tlm::TLM_READ_COMMAND, 0x80, reinterpret_cast<std::uint8_t*>(&word), 4);
  };
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(narrow, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(nowhere, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(b.toe_->bad_accesses(), 2u);
  EXPECT_EQ(b.toe_->channel(0).contexts_fetched(), 0u);  // nothing fetched while disabled
  EXPECT_EQ(b.toe_->channel(0).pending(Ring::Send), 0u);
}

// A host that reprograms a ring (the same base again) while the TOE is fetching a context from it
// (the fuzz_guest investigation, docs/fuzzing.md): the ring's indices restart at 0, so the fetched
// context is no longer the ring's. Consuming it anyway put the head one past the tail, and the
// ring then held size - 1 contexts the host never posted (here 63 garbage SendQ contexts, each
// fetched, refused and completed). Now nothing is consumed and the error is latched.
TEST(Toe, ReprogrammingARingDuringAFetchMakesUpNoContexts) {
  Bench b({});
  b.host.script = [&](Host& h) {
    h.setup();
    const std::uint32_t lo = h.read_reg(Host::ring_reg(Ring::Send, toe::reg::kRingAddrLo));
    toe::SendDesc s{};
    s.sock = 77;  // no such socket: one Error completion
    s.length = 100;
    s.addr = h.alloc(4096);
    h.post(Ring::Send, &s);  // the doorbell: the dispatcher starts fetching the context
    h.write_reg(Host::ring_reg(Ring::Send, toe::reg::kRingAddrLo), lo);  // while it does
    const sc_core::sc_time end = sc_core::sc_time_stamp() + sc_core::sc_time(2, sc_core::SC_MS);
    while (sc_core::sc_time_stamp() < end) h.drain();
  };
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_MS));
  toe::ControlChannel& ch = b.toe_->channel(0);
  EXPECT_EQ(ch.contexts_fetched(), 1u);
  EXPECT_EQ(ch.pending(Ring::Send), 0u);
  EXPECT_EQ(b.host.count(EventType::Error), 1u);
  EXPECT_NE(ch.status() & 1, 0u);  // the host is told it raced its own ring
}
