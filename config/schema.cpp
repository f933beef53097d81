#include "config/schema.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>
#include <system_error>

#include "config/config.h"
#include "config/params.h"
#include "guest/guest_os.h"
#include "hypervisor/hypervisor.h"
#include "models/cpu/core.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "models/smmu/smmu.h"
#include "models/toe/toe.h"
#include "netvp/netvp_port.h"

namespace vtoe::config {

using core::BareNumber;

// ---------------------------------------------------------------------------------------------
// The table. One line per key; keep related keys together (the order is the order of
// `vtoe keys`, the docs and resolved scenarios).
// ---------------------------------------------------------------------------------------------
namespace {

// Names of hosts, switches and links: they become module and statistics names.
void require_node_name(const Value& v) {
  const auto& s = std::get<std::string>(v);
  const bool ok = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  if (!ok) throw ValueError("expected a name of letters, digits, '_' or '-'");
}

// A topology (docs/topology.md): light hosts, switches and the links between them and the
// platform. Empty lists keep today's single link to one simulated peer.
std::vector<Key> topology_keys() {
  using K = Key;
  return {
      K::list("hosts", 0, 0,
              "Hosts on the network besides the platform (docs/topology.md); with links, they "
              "replace the single simulated peer"),
      K::string("hosts[].name", "host{i}", "Name of the host in links, workloads and results")
          .validate(require_node_name, "letters, digits, _ -"),
      K::enumeration("hosts[].kind", {"light", "proxy", "platform"}, "light",
                     "light = a simulated host (protocol engine, no CPU model, one port); proxy = "
                     "a light split-TCP proxy with two ports (NAME:0 towards clients, NAME:1 "
                     "towards hosts[].peer); platform = a full vtoe platform (cores, TOE, VMs) "
                     "from hosts[].scenario, one port (its TOE)"),
      K::string("hosts[].scenario", "",
                "kind platform: the host's scenario file (architecture, TOE, VMs; relative to "
                "this scenario's folder); its VMs serve (sink, echo, iperf3) or compute, and "
                "their addresses must be free on the segment"),
      K::string("hosts[].ip", "",
                "The host's IPv4 address on the platform's subnet; empty = derived: host 0 "
                "network.peer_ip, host i network.peer_ip + 98 + i (10.0.0.101, ...)")
          .validate(
              [](const Value& v) {
                if (!std::get<std::string>(v).empty()) require_ipv4(v);
              },
              "IPv4 address or empty"),
      K::string("hosts[].mac", "",
                "The host's MAC address; empty = derived (host i 02:00:00:00:20:i)")
          .validate([](const Value& v) { tcpip_mac_check(std::get<std::string>(v)); },
                    "MAC address or empty"),
      K::bytes("hosts[].buffer", "1MiB", "TCP send and receive buffer per connection")
          .range("4KiB", "64MiB"),
      K::string("hosts[].ip2", "",
                "proxy: the address of port 1; empty = derived (host i network.peer_ip + 148 + "
                "i, 10.0.0.150, ...)")
          .validate(
              [](const Value& v) {
                if (!std::get<std::string>(v).empty()) require_ipv4(v);
              },
              "IPv4 address or empty"),
      K::string("hosts[].mac2", "", "proxy: the MAC of port 1; empty = 02:00:00:00:21:i")
          .validate([](const Value& v) { tcpip_mac_check(std::get<std::string>(v)); },
                    "MAC address or empty"),
      K::enumeration("hosts[].app", {"none", "flow_client", "flow_server"}, "none",
                     "light hosts: flow_client opens hosts[].flows connections one after another "
                     "to hosts[].peer, each sending hosts[].request bytes and reading the "
                     "server's response, then closing (time to first byte and to completion per "
                     "flow); flow_server answers each request with hosts[].response bytes and "
                     "closes; none = only what VM workloads ask of it"),
      K::string("hosts[].peer", "",
                "flow_client: the host it connects to (a flow_server, or the first proxy of a "
                "chain); proxy: the next hop (the server or the next proxy)"),
      K::uint("hosts[].port", "80", "flow_server and proxy: the port they listen on")
          .range("1", "65535"),
      K::uint("hosts[].flows", "1", "flow_client: flows in all, one after another")
          .range("1", "1000000"),
      K::bytes("hosts[].request", "100B", "flow_client: bytes of each request").range("1B", "1MiB"),
      K::bytes("hosts[].response", "10000B", "flow_server: bytes of each response")
          .range("1B", "1GiB"),
      K::time("hosts[].start", "1ms", "flow_client: when the first flow connects"),
      K::time("hosts[].gap", "1ms",
              "flow_client: from a flow's last response byte to the next flow's connect()"),
      K::boolean("hosts[].esf", "true",
                 "proxy: early SYN forwarding (connect downstream when the client's SYN "
                 "arrives); false = when the client's handshake completes"),
      K::list("switches", 0, 0, "Store-and-forward Ethernet switches (docs/topology.md)"),
      K::string("switches[].name", "sw{i}", "Name of the switch in links and results")
          .validate(require_node_name, "letters, digits, _ -"),
      K::uint("switches[].ports", "8", "Ports of the switch, numbered from 0").range("2", "256"),
      K::bytes("switches[].buffer", "1MiB",
               "Output buffer of each port (frames without FCS); a frame that does not fit is "
               "dropped and counted")
          .range("1600B", "1GiB"),
      K::time("switches[].latency", "0s",
              "Forwarding delay after a frame's last bit has arrived (store and forward)"),
      K::enumeration("switches[].forwarding", {"learned", "given"}, "learned",
                     "learned = source addresses are learned, unknown destinations flooded; "
                     "given = only switches[].table (unknown unicast is dropped, no_route)"),
      K::string("switches[].table", "",
                "Given forwarding entries, comma separated NAME=PORT, NAME a host, a VM (its "
                "MAC) or a MAC address; also honoured, and never overwritten, when learning"),
      K::list("shared_memory", 0, 0,
              "Shared-memory regions a monitor sets up between two VMs (or two processes of a "
              "native host): the hypervisor maps the same DRAM pages into both VMs' stage 2; "
              "workload.path shm carries a workload over it (docs/guest.md)"),
      K::string("shared_memory[].name", "shm{i}", "Name of the region in results")
          .validate(require_node_name, "letters, digits, _ -"),
      K::string("shared_memory[].vms", "",
                "The two VMs (vms[].name, comma separated) whose address spaces hold the "
                "region; the first writes the first half's ring, the second the other's"),
      K::bytes("shared_memory[].size", "64KiB", "Bytes of the region: two rings, one per direction")
          .range("4KiB", "1GiB"),
      K::bytes("shared_memory[].slot", "2KiB",
               "Bytes of one ring slot (8 of them a header); larger messages take several")
          .range("64B", "1MiB"),
      K::bytes("shared_memory[].ipa", "0B",
               "Where both VMs see the region (guest physical address, e.g. 2100MiB); 0 = "
               "above their RAM (2GiB + platform.guest_memory, then the regions in order). "
               "Natively the processes see it at its physical address (shared_memory[].pa)"),
      K::bytes("shared_memory[].pa", "0B",
               "Where the region lies in DRAM; 0 = after the last VM's RAM, the regions in "
               "order. Must not overlap any VM's RAM, the hypervisor's or another region"),
      K::list("links", 0, 0,
              "Full-duplex links between the platform, hosts and switch ports; empty = one link "
              "from the platform to one simulated peer (network.*)"),
      K::string("links[].name", "link{i}", "Name of the link in results and its pcap file")
          .validate(require_node_name, "letters, digits, _ -"),
      K::string("links[].a", "",
                "One end: platform (the TOE's MAC), a host's name, or SWITCH:PORT"),
      K::string("links[].b", "", "The other end, as links[].a"),
      K::bandwidth("links[].rate", "0",
                   "Line rate of both ends' transmitters; 0 = toe.bandwidth (a link at the "
                   "platform must run at toe.bandwidth)"),
      K::time("links[].delay", "1us", "One-way propagation delay"),
      K::time("links[].jitter", "0s",
              "Extra one-way delay per frame, uniform in [0, jitter) from the seed (frames "
              "keep their order); 0 = none"),
      K::ratio("links[].loss", "0", "Probability that the link drops a frame, per direction"),
  };
}

std::vector<Key> builtin_keys() {
  using K = Key;
  // Keys a model owns are declared next to its Params struct (models/core/param.h) and come in
  // through keys_of(); the rest describe the scenario and the platform's assembly.
  std::vector<Key> keys;
  auto add = [&keys](std::vector<Key> more) {
    for (Key& k : more) keys.push_back(std::move(k));
  };
  add({
      K::uint("seed", "1",
              "Seed of every random stream; same scenario and seed give identical results"),
      K::time("duration", "100ms", "Simulated time to run").above("0s"),
      K::time("warmup", "10ms", "Simulated time at the start excluded from metrics (< duration)"),
      K::time("stats_interval", "0s",
              "Time series: every this much simulated time, `vtoe run` adds a row to "
              "DIR/timeseries.csv (throughput, CPU, queues, utilisation, cwnd, exits, credit per "
              "interval, warm-up included; docs/outputs.md); 0s: none. --stats-interval sets it"),
      K::enumeration("architecture", {"native", "de", "da"}, "native",
                     "Platform: native (one OS on bare metal), de (device emulation: the "
                     "hypervisor emulates a TOE per VM) or da (direct I/O access: a physical "
                     "TOE channel per VM)"),
      K::enumeration("platform.timing", {"lt", "at"}, "lt",
                     "Memory-system timing: lt (loosely timed: each transaction is one "
                     "b_transport with its delay, for wide sweeps) or at (approximately timed: the "
                     "DMA paths, SMMU, interconnect and DRAM speak the four-phase base protocol "
                     "with back-pressure, arbitration and DRAM banks)"),
      K::boolean("platform.cpu_memory_traffic", "false",
                 "Guest software's programmed-I/O copies and descriptor accesses also move their "
                 "bytes through the memory system (in bursts), so the CPU and the TOE's DMA "
                 "contend for DRAM; false = they cost only their cycles (the calibrated model)"),
  });
  add(keys_of(cpu::core_params()));
  add(keys_of(mem::dram_params()));
  add({
      K::bytes("platform.guest_memory", "128MiB", "Memory given to each guest").at_least("1MiB"),
  });
  add({
      K::uint("platform.cores", "1",
              "CPU cores of the host, each with its own GIC CPU interface. platform.irq_core "
              "takes the TOE's interrupt (platform.irq_steering). Native: the workloads' "
              "processes are spread over the cores; de/da: each VM's vCPU is pinned to one "
              "(vms[].pin; docs/cpu.md)")
          .range("1", "64"),
      K::uint("platform.irq_core", "0",
              "The core the TOE's interrupt is routed to (its GIC target, an IRQ affinity). "
              "Native: it runs the driver's handler and kernel thread; de/da: the hypervisor's "
              "handler (with platform.irq_steering vm: for the channels no pinned VM owns)")
          .range("0", "63"),
      K::enumeration("platform.irq_steering", {"core", "vm"}, "core",
                     "Where the TOE's interrupts go (docs/cpu.md). core = one interrupt for every "
                     "channel, on platform.irq_core; vm = one per channel (a per-queue vector, as "
                     "MSI-X), each on the core of the VM that owns the channel (its vCPU 0's pin), "
                     "as irqbalance or RSS place a queue's interrupt; de/da only"),
  });
  add(keys_of(mem::interconnect_params()));
  add(keys_of(smmu::smmu_params()));
  add({
      K::enumeration("platform.cpu_model", {"annotated", "iss"}, "annotated",
                     "The host's software: annotated (the driver, socket API and applications "
                     "as cost tables: guest/costs.h, calibrated) or iss (Debian's Linux on the "
                     "ARMv7 ISS with the TOE driver module and the applications of target/, "
                     "their CPU time counted from the instructions they execute; native, one "
                     "core, one VM: docs/iss-mode.md)"),
      K::string("platform.iss.kernel", "",
                "iss: the Linux zImage to boot; empty: the set-up's Debian kernel "
                "(build/linux/vmlinuz, make linux-images)"),
      K::string("platform.iss.initramfs", "",
                "iss: the initramfs (busybox, vtoe_toe.ko, the applications, an /init that "
                "loads the module, prints VTOE-READY and runs the command typed on the "
                "console); empty: the build's (build/<preset>/target/initramfs.cpio)"),
      K::enumeration("platform.iss.hypervisor_costs", {"xen", "scenario"}, "xen",
                     "iss under de/da: what the hypervisor model charges per trap. xen: the "
                     "cycles Debian's Xen 4.17 retires on the ISS per physical IRQ with its "
                     "virtual injection (4782), MMIO data abort (1896) and HVC (3487), "
                     "measured by scripts/xen_trap_costs.py (WFI, the VM switch and the bit "
                     "vector's decode stay hypervisor.costs.*: assumed); scenario: "
                     "hypervisor.costs.* as the annotated model (fitted to section 5.2)"),
      K::enumeration("platform.iss.snapshots", {"on", "off"}, "on",
                     "iss: booted snapshots. on: a run that boots saves the booted, idle system "
                     "(core, RAM, what the devices saw) in platform.iss.snapshot_dir, keyed by "
                     "everything it depends on (the binary, the kernel, the initramfs, the "
                     "scenario but for the workload, duration and warmup); a later run with "
                     "the same key starts from it, with the same results as one that boots "
                     "(docs/iss-mode.md). off: every run boots"),
      K::string("platform.iss.snapshot_dir", "",
                "iss: where booted snapshots are kept (at most 8, the oldest removed first; "
                "about 30 MB each); empty: the build's (build/<preset>/snapshots)"),
      K::time("platform.iss.boot_limit", "20s",
              "iss: simulated time allowed from power-on to the workload's start (Linux's boot "
              "and the module's load); a run that has not started by then ends with an error "
              "and the console's last lines")
          .above("0s"),
      K::enumeration("platform.cpu_caches", {"on", "off"}, "on",
                     "iss: level-1 instruction and data caches on the core (timing only: tags, "
                     "LRU, dirty bits; docs/caches.md). A miss costs a line fill (and a dirty "
                     "victim's write-back) through the interconnect to the DRAM, where it "
                     "contends with the TOE's DMA; the DMA keeps them coherent. off: memory "
                     "costs only the CPI and the RAM is untimed. On by default: the paper's "
                     "platform had 32 KB caches (Table 2)"),
      K::bytes("platform.iss.icache_size", "32KiB",
               "iss: instruction cache size (Cortex-A15: 32 KB); a power-of-two number of sets "
               "of icache_ways x cache_line")
          .at_least("1KiB"),
      K::uint("platform.iss.icache_ways", "2",
              "iss: instruction cache associativity (Cortex-A15: 2-way), a power of two")
          .range("1", "16"),
      K::bytes("platform.iss.dcache_size", "32KiB",
               "iss: data cache size (Cortex-A15: 32 KB); a power-of-two number of sets of "
               "dcache_ways x cache_line")
          .at_least("1KiB"),
      K::uint("platform.iss.dcache_ways", "2",
              "iss: data cache associativity (Cortex-A15: 2-way), a power of two")
          .range("1", "16"),
      K::bytes("platform.iss.cache_line", "64B",
               "iss: line size of both caches (Cortex-A15: 64 bytes), a power of two; each "
               "miss moves one line")
          .at_least("16B"),
  });
  {
    // The ISS's timing (issue 39: stated, not tuned): cycles per retired instruction by class,
    // a Cortex-A15-like estimate (docs/iss-mode.md gives the source). Never set toward a paper
    // number: a fit belongs in the calibration manifest.
    struct Cpi {
      const char* cls;
      const char* def;
      const char* meaning;
    };
    static const Cpi cpis[] = {
        {"alu", "1", "data processing, moves, compares"},
        {"multiply", "2", "MUL, MLA and the long multiplies"},
        {"divide", "8", "SDIV, UDIV"},
        {"load", "1",
         "single loads (an L1 hit; with platform.cpu_caches on, a miss adds its line fill)"},
        {"store", "1", "single stores"},
        {"load_multiple", "2", "LDM, POP"},
        {"store_multiple", "2", "STM, PUSH"},
        {"branch", "1", "branches (predicted)"},
        {"vfp", "2", "VFP and Advanced SIMD"},
        {"system", "8", "MRS/MSR, CP15 accesses, barriers, exception returns (serialising)"},
        {"nop", "1", "NOP, hints, WFI's own issue"},
    };
    std::vector<Key> more;
    for (const Cpi& c : cpis)
      more.push_back(
          K::uint(std::string("platform.iss.cpi.") + c.cls, c.def,
                  std::string("iss: cycles per retired instruction of this class: ") + c.meaning)
              .range("1", "1000"));
    add(std::move(more));
  }
  add(keys_of(toe::toe_params()));
  add({
      K::string("toe.dispatcher.quantum", "",
                "DWRR quantum per VM in bytes, comma separated in VM order (e.g. 32000, 8000, "
                "16000, 16000 for weights 4:1:2:2); VMs without an entry get 16000")
          .validate(require_byte_list, "comma-separated byte counts"),
      K::enumeration("network.peer", {"sim", "netvp"}, "sim",
                     "Far end of the link: sim = simulated peer host; netvp = a real network "
                     "through a raw socket on network.netvp.interface (needs root)"),
  });
  add(keys_of(netvp::netvp_params()));
  add(keys_of(net::ethernet_link_params()));
  add(keys_of(net::peer_client_params()));
  add({
      K::enumeration("software_stack.mode", {"none", "kernel", "tas_vm", "tas_shared"}, "none",
                     "A software TCP/IP stack's work on the cores (issue 29; "
                     "docs/software-stack.md): none = the TOE offloads it; kernel = each VM's "
                     "kernel stack on its own cores (vCPUs) over a plain NIC; tas_vm = a polling "
                     "user-space stack on dedicated cores per VM (software_stack.cores); "
                     "tas_shared = one polling fast path on host cores shared by every VM "
                     "(software_stack.cores). The protocol engine stays the TOE's: set toe.ppm.* "
                     "small for a plain NIC"),
      K::real("software_stack.tx_cycles", "2000",
              "Stack cycles per frame sent (TCP/IP output, queueing to the NIC)")
          .range("0", "1e9"),
      K::real("software_stack.rx_cycles", "2500",
              "Stack cycles per frame received (NIC completion, TCP/IP input, socket wake-up)")
          .range("0", "1e9"),
      K::real("software_stack.cycles_per_byte", "0",
              "Stack cycles per frame byte either way (0: checksums offloaded; the socket "
              "layer's copies are guest.costs.copy_per_byte*)")
          .range("0", "1e6"),
      K::string("software_stack.cores", "",
                "tas_vm: the dedicated stack cores, comma separated, split evenly over the VMs "
                "in VM order; tas_shared: the shared fast path's cores; kernel: none (the "
                "stack runs on each VM's own cores)")
          .validate(require_index_list, "comma-separated core numbers"),
      K::integer("software_stack.vswitch_core", "-1",
                 "de/da: core of the virtual switch that copies and demultiplexes every frame "
                 "of a VM between the NIC and the VMs; -1 = none")
          .range("-1", "63"),
      K::real("software_stack.vswitch_cycles", "1000",
              "Virtual switch cycles per frame (classify, look up, demultiplex to a VM)")
          .range("0", "1e9"),
      K::real("software_stack.vswitch_cycles_per_byte", "0.5",
              "Virtual switch cycles per frame byte (the copy between NIC and VM buffers)")
          .range("0", "1e6"),
      K::uint("software_stack.queue", "1024",
              "Frames queued per stack or switch lane; one more is dropped (a full ring)")
          .range("1", "1000000"),
  });
  add({
      K::string("network.peer_ip", "10.0.0.2", "IPv4 address of the peer host")
          .validate(require_ipv4, "IPv4 address"),
      K::string("network.host_ip", "10.0.0.1", "IPv4 address of the platform's TOE")
          .validate(require_ipv4, "IPv4 address"),
      K::bytes("network.peer_buffer", "1MiB",
               "Simulated peer: TCP send and receive buffer per connection")
          .range("4KiB", "64MiB"),
  });
  add(keys_of(hypervisor::hypervisor_params()));
  add({
      K::time("guest.context_switch_interval", "2.5ms", "Time slice of the guest OS scheduler")
          .above("0s"),
  });
  add(keys_of(guest::guest_params()));
  add({
      K::list("vms", 1, 1,
              "Virtual machines, one item each (native: exactly one; de/da: up to 7 with the "
              "default memory sizes)"),
      K::string("vms[].name", "vm{i}", "Name of the VM in logs and results ({i} = item index)")
          .validate(
              [](const Value& v) {
                const auto& s = std::get<std::string>(v);
                const bool ok = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
                  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                         c == '.';
                });
                if (!ok) throw ValueError("expected a name of letters, digits, '_', '-' or '.'");
              },
              "letters, digits, _ - ."),
      K::uint("vms[].weight", "256", "Credit scheduler weight of the VM").range("1", "65535"),
      K::uint("vms[].vcpus", "1",
              "de/da: virtual CPUs of the VM, each pinned to a core of its own (vms[].pin); the "
              "VM's processes run on them round robin, its kernel's handler and thread on vCPU 0")
          .range("1", "64"),
      K::boolean("vms[].migrate", "false",
                 "de/da with platform.cores > 1 and one vCPU per VM: the VM's vCPU is not pinned; "
                 "the credit scheduler's load balancing moves it between cores (an idle core "
                 "steals it)"),
      K::string(
          "vms[].pin", "",
          "Native: cores the workload's processes run on, comma separated (e.g. 1,2): process "
          "i on the (i mod n)-th; empty = all cores. de/da: the core of each of the VM's "
          "vCPUs, all different; empty = the host's vCPUs in VM order on cores 0, 1, ... "
          "round robin")
          .validate(require_index_list, "comma-separated core numbers"),
      K::string("vms[].ip", "",
                "The VM's own IPv4 address on the TOE's segment, optionally /prefix (default /24; "
                "all VMs share one subnet); empty = derived: VM 0 "
                "network.host_ip, VM i network.host_ip + 9 + i (10.0.0.11, 10.0.0.12, ...)")
          .validate(
              [](const Value& v) {
                const auto& s = std::get<std::string>(v);
                if (s.empty()) return;
                const auto slash = s.find('/');
                require_ipv4(Value{s.substr(0, slash)});
                if (slash != std::string::npos) {
                  const std::string n = s.substr(slash + 1);
                  const bool digits =
                      !n.empty() && n.size() <= 2 &&
                      std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
                  if (!digits || std::stoi(n) < 1 || std::stoi(n) > 30)
                    throw ValueError("expected a prefix length 1..30 after '/', got \"" + s + "\"");
                }
              },
              "IPv4 address[/prefix] or empty"),
      K::string("vms[].mac", "",
                "The VM's MAC address, aa:bb:cc:dd:ee:ff; empty = derived (VM 0 "
                "02:00:00:00:00:01, VM i 02:00:00:00:10:i)")
          .validate(
              [](const Value& v) {
                const auto& s = std::get<std::string>(v);
                tcpip_mac_check(s);
              },
              "MAC address or empty"),
  });
  add(keys_of(guest::workload_params()));
  add(topology_keys());
  return keys;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Key builders
// ---------------------------------------------------------------------------------------------
namespace {
Key make(std::string path, KeyType type, std::string def, std::string meaning) {
  Key k;
  k.path = std::move(path);
  k.type = type;
  k.default_text = std::move(def);
  k.meaning = std::move(meaning);
  if (type == KeyType::Bytes) k.bare = BareNumber::BaseUnit;
  return k;
}
}  // namespace

Key Key::integer(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Int, std::move(d), std::move(m));
}
Key Key::uint(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Uint, std::move(d), std::move(m));
}
Key Key::real(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Double, std::move(d), std::move(m));
}
Key Key::ratio(std::string p, std::string d, std::string m) {
  return std::move(make(std::move(p), KeyType::Ratio, std::move(d), std::move(m))).range("0", "1");
}
Key Key::boolean(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Bool, std::move(d), std::move(m));
}
Key Key::string(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::String, std::move(d), std::move(m));
}
Key Key::enumeration(std::string p, std::vector<std::string> choices, std::string d,
                     std::string m) {
  Key k = make(std::move(p), KeyType::Enum, std::move(d), std::move(m));
  k.choices = std::move(choices);
  return k;
}
Key Key::time(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Time, std::move(d), std::move(m));
}
Key Key::frequency(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Frequency, std::move(d), std::move(m));
}
Key Key::bandwidth(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Bandwidth, std::move(d), std::move(m));
}
Key Key::bytes(std::string p, std::string d, std::string m) {
  return make(std::move(p), KeyType::Bytes, std::move(d), std::move(m));
}
Key Key::list(std::string p, std::size_t min_items, std::size_t def, std::string m) {
  Key k = make(std::move(p), KeyType::List, std::to_string(def), std::move(m));
  k.min_items = min_items;
  return k;
}

Key&& Key::range(std::string lo, std::string hi) && {
  min_text = std::move(lo);
  max_text = std::move(hi);
  return std::move(*this);
}
Key&& Key::at_least(std::string lo) && {
  min_text = std::move(lo);
  return std::move(*this);
}
Key&& Key::above(std::string lo) && {
  min_text = std::move(lo);
  min_exclusive = true;
  return std::move(*this);
}
Key&& Key::at_most(std::string hi) && {
  max_text = std::move(hi);
  return std::move(*this);
}
Key&& Key::reserve(std::vector<std::string> values) && {
  reserved = std::move(values);
  return std::move(*this);
}
Key&& Key::bare_base() && {
  bare = BareNumber::BaseUnit;
  return std::move(*this);
}
Key&& Key::validate(std::function<void(const Value&)> fn, std::string doc) && {
  check = std::move(fn);
  check_doc = std::move(doc);
  return std::move(*this);
}

core::Unit Key::unit() const {
  switch (type) {
    case KeyType::Time:
      return core::Unit::Time;
    case KeyType::Frequency:
      return core::Unit::Frequency;
    case KeyType::Bandwidth:
      return core::Unit::Bandwidth;
    case KeyType::Bytes:
      return core::Unit::Bytes;
    case KeyType::Ratio:
      return core::Unit::Ratio;
    default:
      return core::Unit::None;
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing and formatting values
// ---------------------------------------------------------------------------------------------
namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Parses an unsigned integer, decimal or 0x hex, with an optional leading '+'.
bool parse_u64(std::string_view t, std::uint64_t& out) {
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t.remove_prefix(2);
    base = 16;
  }
  if (t.empty()) return false;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), out, base);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

std::uint64_t parse_uint(std::string_view t) {
  std::uint64_t v = 0;
  if (!parse_u64(trim(t), v)) {
    throw ValueError("expected a non-negative integer such as 42, got " + quoted(t));
  }
  return v;
}

std::int64_t parse_int(std::string_view raw) {
  std::string_view t = trim(raw);
  const bool neg = !t.empty() && t[0] == '-';
  if (neg) t.remove_prefix(1);
  std::uint64_t mag = 0;
  const std::uint64_t limit = neg ? 9223372036854775808ULL : 9223372036854775807ULL;
  if ((!t.empty() && t[0] == '+' && neg) || !parse_u64(t, mag) || mag > limit) {
    throw ValueError("expected an integer such as -3 or 42, got " + quoted(raw));
  }
  return neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
}

double parse_double(std::string_view raw) {
  std::string_view t = trim(raw);
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  double v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size() || !std::isfinite(v)) {
    throw ValueError("expected a number such as 0.5 or 1e-3, got " + quoted(raw));
  }
  return v;
}

bool parse_bool(std::string_view raw) {
  const std::string_view t = trim(raw);
  for (const char* s : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
    if (t == s) return true;
  }
  for (const char* s : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
    if (t == s) return false;
  }
  throw ValueError("expected true or false, got " + quoted(raw));
}

std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Parses without range checks.
Value parse_raw(const Key& key, std::string_view text) {
  switch (key.type) {
    case KeyType::Int:
      return parse_int(text);
    case KeyType::Uint:
    case KeyType::List:
      return parse_uint(text);
    case KeyType::Double:
      return parse_double(text);
    case KeyType::Ratio:
      return core::parse_ratio(text);
    case KeyType::Bool:
      return parse_bool(text);
    case KeyType::String:
      return std::string(text);
    case KeyType::Enum: {
      const std::string s(trim(text));
      if (std::find(key.choices.begin(), key.choices.end(), s) != key.choices.end()) return s;
      if (std::find(key.reserved.begin(), key.reserved.end(), s) != key.reserved.end()) {
        throw ValueError(quoted(s) +
                         " is not implemented yet (accepted: " + join(key.choices, ", ") + ")");
      }
      throw ValueError("expected one of " + join(key.choices, ", ") + ", got " + quoted(text));
    }
    case KeyType::Time:
      return core::parse_time(text, key.bare);
    case KeyType::Frequency:
      return core::parse_frequency(text, key.bare);
    case KeyType::Bandwidth:
      return core::parse_bandwidth(text, key.bare);
    case KeyType::Bytes:
      return core::parse_bytes(text, key.bare);
  }
  throw std::logic_error("unhandled key type");
}

// <0, 0, >0 for two values of the same alternative; 0 for non-ordered types.
int compare(const Value& a, const Value& b) {
  return std::visit(
      [&](const auto& x) -> int {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
          return 0;
        } else {
          const T& y = std::get<T>(b);
          return x < y ? -1 : (y < x ? 1 : 0);
        }
      },
      a);
}

}  // namespace

Value parse_value(const Key& key, std::string_view text) {
  Value v = parse_raw(key, text);
  if (!key.min_text.empty()) {
    const Value lo = parse_raw(key, key.min_text);
    const int c = compare(v, lo);
    if (key.min_exclusive && c <= 0) {
      throw ValueError("must be greater than " + format_value(key, lo) + ", got " +
                       format_value(key, v));
    }
    if (!key.min_exclusive && c < 0) {
      throw ValueError(format_value(key, v) + " is below the minimum " + format_value(key, lo));
    }
  }
  if (!key.max_text.empty()) {
    const Value hi = parse_raw(key, key.max_text);
    if (compare(v, hi) > 0) {
      throw ValueError(format_value(key, v) + " is above the maximum " + format_value(key, hi));
    }
  }
  if (key.check) key.check(v);
  return v;
}

std::string format_value(const Key& key, const Value& v) {
  switch (key.type) {
    case KeyType::Int:
      return std::to_string(std::get<std::int64_t>(v));
    case KeyType::Uint:
    case KeyType::List:
      return std::to_string(std::get<std::uint64_t>(v));
    case KeyType::Double:
      return shortest(std::get<double>(v));
    case KeyType::Ratio:
      return core::format_ratio(std::get<double>(v));
    case KeyType::Bool:
      return std::get<bool>(v) ? "true" : "false";
    case KeyType::String:
    case KeyType::Enum:
      return std::get<std::string>(v);
    case KeyType::Time:
      return core::format_time(std::get<std::uint64_t>(v));
    case KeyType::Frequency:
      return core::format_frequency(std::get<double>(v));
    case KeyType::Bandwidth:
      return core::format_bandwidth(std::get<double>(v));
    case KeyType::Bytes:
      return core::format_bytes(std::get<std::uint64_t>(v));
  }
  throw std::logic_error("unhandled key type");
}

std::string default_text(const Key& key, std::size_t index) {
  std::string s = key.default_text;
  for (auto pos = s.find("{i}"); pos != std::string::npos; pos = s.find("{i}", pos)) {
    s.replace(pos, 3, std::to_string(index));
  }
  return s;
}

const char* type_name(KeyType type) {
  switch (type) {
    case KeyType::Int:
      return "int";
    case KeyType::Uint:
      return "uint";
    case KeyType::Double:
      return "double";
    case KeyType::Ratio:
      return "ratio";
    case KeyType::Bool:
      return "bool";
    case KeyType::String:
      return "string";
    case KeyType::Enum:
      return "enum";
    case KeyType::Time:
      return "time";
    case KeyType::Frequency:
      return "frequency";
    case KeyType::Bandwidth:
      return "bandwidth";
    case KeyType::Bytes:
      return "bytes";
    case KeyType::List:
      return "list";
  }
  return "?";
}

std::string describe_range(const Key& key) {
  std::string out;
  if (key.type == KeyType::Enum) {
    out = join(key.choices, ", ");
    if (!key.reserved.empty()) out += " (reserved: " + join(key.reserved, ", ") + ")";
    return out;
  }
  if (key.type == KeyType::List) return ">= " + std::to_string(key.min_items) + " items";
  auto canon = [&](const std::string& t) { return format_value(key, parse_raw(key, t)); };
  if (!key.min_text.empty() && !key.max_text.empty() && !key.min_exclusive) {
    out = canon(key.min_text) + ".." + canon(key.max_text);
  } else if (!key.min_text.empty()) {
    out = (key.min_exclusive ? "> " : ">= ") + canon(key.min_text);
    if (!key.max_text.empty()) out += ", <= " + canon(key.max_text);
  } else if (!key.max_text.empty()) {
    out = "<= " + canon(key.max_text);
  }
  if (!key.check_doc.empty()) out += (out.empty() ? "" : "; ") + key.check_doc;
  return out;
}

bool is_ipv4(std::string_view text) {
  int parts = 0;
  std::size_t i = 0;
  while (true) {
    std::size_t j = i;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    const std::size_t len = j - i;
    if (len == 0 || len > 3 || (len > 1 && text[i] == '0')) return false;
    if (std::stoi(std::string(text.substr(i, len))) > 255) return false;
    ++parts;
    if (j == text.size()) break;
    if (text[j] != '.' || parts == 4) return false;
    i = j + 1;
  }
  return parts == 4;
}

void require_ipv4(const Value& value) {
  const auto& s = std::get<std::string>(value);
  if (!is_ipv4(s)) {
    throw ValueError("expected a dotted-quad IPv4 address such as 10.0.0.1, got " + quoted(s));
  }
}

void tcpip_mac_check(const std::string& s) {
  if (s.empty()) return;
  int parts = 0;
  std::size_t i = 0;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < s.size()) {
    if (i + 1 >= s.size() || !hex(s[i]) || !hex(s[i + 1]))
      throw ValueError("expected a MAC address such as 02:00:00:00:00:05, got " + quoted(s));
    ++parts;
    i += 2;
    if (i == s.size()) break;
    if (s[i] != ':' || parts == 6)
      throw ValueError("expected a MAC address such as 02:00:00:00:00:05, got " + quoted(s));
    ++i;
  }
  if (parts != 6)
    throw ValueError("expected a MAC address such as 02:00:00:00:00:05, got " + quoted(s));
  if (std::stoi(s.substr(0, 2), nullptr, 16) & 1)
    throw ValueError("a multicast MAC address cannot be a VM's own, got " + quoted(s));
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::vector<std::uint64_t> parse_byte_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (i < text.size()) {
    std::size_t j = text.find(',', i);
    if (j == std::string_view::npos) j = text.size();
    std::size_t a = i, b = j;
    while (a < b && blank(text[a])) ++a;
    while (b > a && blank(text[b - 1])) --b;
    const std::string entry(text.substr(a, b - a));
    if (entry.empty()) throw ValueError("empty entry in the list " + quoted(std::string(text)));
    try {
      const std::uint64_t v = core::parse_bytes(entry, core::BareNumber::BaseUnit);
      if (v == 0) throw ValueError("entry " + quoted(entry) + " must be more than 0 bytes");
      out.push_back(v);
    } catch (const core::UnitError& e) {
      throw ValueError("entry " + quoted(entry) + ": " + e.what());
    }
    i = j + 1;
    if (j == text.size()) break;
  }
  return out;
}

void require_byte_list(const Value& value) { parse_byte_list(std::get<std::string>(value)); }

std::vector<std::uint64_t> parse_index_list(std::string_view text) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (i < text.size()) {
    std::size_t j = text.find(',', i);
    if (j == std::string_view::npos) j = text.size();
    std::size_t a = i, b = j;
    while (a < b && blank(text[a])) ++a;
    while (b > a && blank(text[b - 1])) --b;
    const std::string entry(text.substr(a, b - a));
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    const bool digits =
        !entry.empty() && entry.size() <= 6 && std::all_of(entry.begin(), entry.end(), digit);
    if (!digits)
      throw ValueError("entry " + quoted(entry) + " of " + quoted(std::string(text)) +
                       " is not a number 0..999999");
    out.push_back(std::stoull(entry));
    i = j + 1;
    if (j == text.size()) break;
  }
  return out;
}

void require_index_list(const Value& value) { parse_index_list(std::get<std::string>(value)); }

// ---------------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------------
Schema::Schema(std::vector<Key> keys) : keys_(std::move(keys)) {
  auto broken = [](const Key& k, const std::string& why) {
    throw std::logic_error("scenario schema: key '" + k.path + "': " + why);
  };
  // The first of duplicate paths wins, as in a search in table order (duplicates fail below).
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    const std::string& path = keys_[i].path;
    index_.emplace(path, i);
    for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
      groups_.insert(path.substr(0, dot));
  }
  defaults_.resize(keys_.size());
  std::set<std::string> seen;
  auto add_pattern = [&](const std::string& p) {
    if (seen.insert(p).second) patterns_.push_back(p);
  };
  for (const Key& k : keys_) {
    if (k.path.empty() || k.path.find_first_of(" \t=") != std::string::npos ||
        k.path.front() == '.' || k.path.back() == '.' || k.path.find("..") != std::string::npos) {
      broken(k, "malformed path");
    }
    if (seen.count(k.path)) broken(k, "declared twice");
    const auto brackets = k.path.find("[]");
    if (brackets != std::string::npos) {
      if (k.type == KeyType::List) broken(k, "lists inside list items are not supported");
      if (k.path.find("[]", brackets + 1) != std::string::npos) broken(k, "nested lists");
      if (k.path.compare(brackets, 3, "[].") != 0) broken(k, "'[]' must be followed by '.key'");
      const Key* list = find(k.path.substr(0, brackets));
      if (!list || list->type != KeyType::List) broken(k, "item of an undeclared list");
    }
    // Ancestor groups first, then the key itself.
    for (auto dot = k.path.find('.'); dot != std::string::npos; dot = k.path.find('.', dot + 1)) {
      const std::string group = k.path.substr(0, dot);
      const Key* leaf = find(group);
      if (leaf && leaf->type != KeyType::List) broken(k, "'" + group + "' is already a key");
      if (!leaf) add_pattern(group);
    }
    add_pattern(k.path);
    try {
      if (k.type == KeyType::Enum && k.choices.empty()) broken(k, "enum without choices");
      const std::size_t pos = static_cast<std::size_t>(&k - keys_.data());
      if (k.type == KeyType::List) {
        if (parse_uint(k.default_text) < k.min_items) broken(k, "default has too few items");
        defaults_[pos] = parse_value(k, k.default_text);
        continue;
      }
      if (!k.min_text.empty() && !k.max_text.empty() &&
          compare(parse_raw(k, k.min_text), parse_raw(k, k.max_text)) > 0) {
        broken(k, "minimum above maximum");
      }
      Value def = parse_value(k, default_text(k, 0));
      if (k.default_text.find("{i}") == std::string::npos) defaults_[pos] = std::move(def);
    } catch (const std::invalid_argument& e) {
      broken(k, std::string("bad default or bound: ") + e.what());
    }
  }
  default_config_ = Config::defaults_of(*this);
}

const Schema& Schema::builtin() {
  static const Schema schema(builtin_keys());
  return schema;
}

const Key* Schema::find(std::string_view pattern) const {
  const auto it = index_.find(pattern);
  return it == index_.end() ? nullptr : &keys_[it->second];
}

bool Schema::is_group(std::string_view pattern) const {
  return pattern.empty() || groups_.find(pattern) != groups_.end();
}

Value Schema::default_value(const Key& key, std::size_t index) const {
  const std::less<const Key*> before;
  const bool ours =
      !keys_.empty() && !before(&key, keys_.data()) && before(&key, keys_.data() + keys_.size());
  if (ours) {
    if (const auto& cached = defaults_[static_cast<std::size_t>(&key - keys_.data())])
      return *cached;
  }
  return parse_value(key, key.type == KeyType::List ? key.default_text : default_text(key, index));
}

std::vector<std::string> Schema::children(std::string_view group) const {
  std::vector<std::string> out;
  const std::size_t skip = group.empty() ? 0 : group.size() + 1;
  for (const Key& k : keys_) {
    if (!group.empty() &&
        !(k.path.size() > group.size() && k.path.compare(0, group.size(), group) == 0 &&
          k.path[group.size()] == '.')) {
      continue;
    }
    std::string child = k.path.substr(skip, k.path.find('.', skip) - skip);
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// `vtoe keys`
// ---------------------------------------------------------------------------------------------
namespace {

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string shown_default(const Key& k) {
  if (k.type == KeyType::List) {
    return k.default_text + (k.default_text == "1" ? " item" : " items");
  }
  if (k.default_text.find("{i}") != std::string::npos) return k.default_text;
  return format_value(k, parse_value(k, default_text(k, 0)));
}

}  // namespace

std::string describe_keys(const Schema& schema, KeysFormat format) {
  std::ostringstream out;
  const std::vector<core::Unit> units{core::Unit::Time, core::Unit::Frequency,
                                      core::Unit::Bandwidth, core::Unit::Bytes, core::Unit::Ratio};
  if (format == KeysFormat::Markdown) {
    out << "| Key | Type | Default | Accepted | Meaning |\n";
    out << "|---|---|---|---|---|\n";
    for (const Key& k : schema.keys()) {
      out << "| `" << k.path << "` | " << type_name(k.type) << " | `" << md_escape(shown_default(k))
          << "` | " << md_escape(describe_range(k)) << " | " << md_escape(k.meaning) << " |\n";
    }
    out << "\nUnit suffixes:\n\n";
    for (core::Unit u : units) {
      out << "- " << core::unit_name(u) << ": " << core::accepted_suffixes(u) << " (e.g. "
          << core::unit_examples(u) << ")\n";
    }
    out << "\nA bare number is accepted for bytes (a byte count), and 0 for any unit.\n";
    return out.str();
  }
  std::vector<std::vector<std::string>> rows{{"KEY", "TYPE", "DEFAULT", "ACCEPTED", "MEANING"}};
  for (const Key& k : schema.keys()) {
    rows.push_back({k.path, type_name(k.type), shown_default(k), describe_range(k), k.meaning});
  }
  std::vector<std::size_t> width(5, 0);
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
  out << "\nUnits:\n";
  for (core::Unit u : units) {
    out << "  " << core::unit_name(u) << ": " << core::accepted_suffixes(u) << " (e.g. "
        << core::unit_examples(u) << ")\n";
  }
  out << "A bare number is accepted for bytes (a byte count), and 0 for any unit.\n";
  return out.str();
}

}  // namespace vtoe::config
