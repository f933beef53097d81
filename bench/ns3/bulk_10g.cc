// ns-3's counterpart of vtoe's native 10 Gbit/s transmit benchmark (bench/speed.py): one host sends
// bulk TCP to another over a 10 Gbit/s point-to-point link with 1 us of delay for a given simulated
// time, and prints the simulated time, the wall time and the goodput. Built by bench/speed.py
// against Debian's libns3-dev; never part of the test suite.
#include <chrono>
#include <cstdio>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

using namespace ns3;

int main(int argc, char* argv[]) {
  double seconds = 1.0;
  uint32_t segment = 1448;
  CommandLine cmd;
  cmd.AddValue("seconds", "simulated time of the transfer", seconds);
  cmd.AddValue("segment", "TCP segment size, bytes", segment);
  cmd.Parse(argc, argv);

  // As vtoe's engine: 1448-byte segments, 256 KiB socket buffers, delayed ACK every 2 segments.
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(256 * 1024));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(256 * 1024));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));

  NodeContainer nodes;
  nodes.Create(2);
  PointToPointHelper link;
  link.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
  link.SetChannelAttribute("Delay", StringValue("1us"));
  link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
  NetDeviceContainer devices = link.Install(nodes);
  InternetStackHelper stack;
  stack.Install(nodes);
  Ipv4AddressHelper addresses;
  addresses.SetBase("10.0.0.0", "255.255.255.0");
  Ipv4InterfaceContainer ifs = addresses.Assign(devices);

  const uint16_t port = 5001;
  BulkSendHelper sender("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
  sender.SetAttribute("MaxBytes", UintegerValue(0));
  sender.SetAttribute("SendSize", UintegerValue(8000));
  ApplicationContainer tx = sender.Install(nodes.Get(0));
  tx.Start(Seconds(0.0));
  tx.Stop(Seconds(seconds));
  PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer rx = sink.Install(nodes.Get(1));
  rx.Start(Seconds(0.0));

  Simulator::Stop(Seconds(seconds));
  const auto start = std::chrono::steady_clock::now();
  Simulator::Run();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t bytes = DynamicCast<PacketSink>(rx.Get(0))->GetTotalRx();
  Simulator::Destroy();
  std::printf("{\"sim_s\": %.6f, \"wall_s\": %.6f, \"rx_mbps\": %.1f}\n", seconds, wall,
              bytes * 8.0 / seconds / 1e6);
  return 0;
}
