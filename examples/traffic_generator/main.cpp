// The example platform: memory, an interconnect, vtoe's TOE model, an Ethernet link and a
// simulated peer running a sink, driven by TrafficGenerator through the TOE's registers. Its own
// sc_main; vtoe's messages reach this program's sc_report_handler (SystemC's default here).
#include <iostream>
#include <systemc>

#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "models/toe/toe.h"
#include "traffic_generator.h"

using namespace vtoe;

int sc_main(int, char*[]) {
  mem::Dram dram("dram", mem::DramParams{256ull << 20, 6.4e9, 50'000, 0});
  mem::Interconnect bus("bus", 10'000);
  toe::ToeParams tp;
  tp.bandwidth_bps = 10e9;
  tp.stack.mac.b = {2, 0, 0, 0, 0, 1};
  tp.stack.ip = tcpip::parse_ipv4("10.0.0.1");
  toe::Toe toe("toe", tp);
  net::EthernetLink link("link", net::EthernetLinkParams{1'000'000, 0.0, 1});  // 1 us
  net::PeerHostParams pp;
  pp.stack.mac.b = {2, 0, 0, 0, 0, 2};
  pp.stack.ip = tcpip::parse_ipv4("10.0.0.2");
  net::PeerApp sink;
  sink.type = net::PeerAppType::Sink;
  sink.port = 5001;
  sink.verify_pattern = false;
  pp.apps = {sink};
  net::PeerHost peer("peer", pp);

  TrafficGenerator::Params gp;
  gp.peer_ip = pp.stack.ip;
  TrafficGenerator gen("generator", dram, gp);
  sc_core::sc_signal<bool> irq("irq");

  bus.map(0, dram.size(), dram.in, "dram");
  bus.map(gp.regs, 0x1000, toe.in, "toe");
  toe.dma.bind(bus.in);
  gen.bus.bind(bus.in);
  toe.irq(irq);
  gen.irq(irq);
  toe.mac().to_wire.bind(link.a_in);
  link.a_out.bind(toe.mac().from_wire);
  peer.mac().to_wire.bind(link.b_in);
  link.b_out.bind(peer.mac().from_wire);

  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  const std::uint64_t sent = std::uint64_t{gp.message} * gp.count;
  const double s = gen.finished_at().to_seconds();
  std::cout << "traffic generator: " << gen.completed() << " sends of " << gp.message
            << " bytes done in " << s * 1e3 << " ms ("
            << (s > 0 ? static_cast<double>(sent) * 8 / s / 1e6 : 0) << " Mbit/s); peer received "
            << peer.bytes_received() << " bytes of " << sent << "\n";
  return peer.bytes_received() == sent ? 0 : 1;
}
