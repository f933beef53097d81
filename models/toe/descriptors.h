// The host <-> TOE contract: the register map of one control channel and the 32-byte contexts of
// its four rings (CmdQ, SendQ, RecvQ host->TOE; ECQ TOE->host). Contexts are little-endian, laid
// out exactly as these structs (x86/ARM little-endian hosts copy them as is).
#pragma once

#include <cstdint>

namespace vtoe::toe {

// ---- Registers (byte offsets inside a channel's 4 KiB page) ----
namespace reg {
constexpr std::uint64_t kChannelStride = 0x1000;
constexpr std::uint64_t kCtrl = 0x000;      // bit0 enable, bit1 interrupt enable
constexpr std::uint64_t kStatus = 0x004;    // bit0 error latched
constexpr std::uint64_t kRingBase = 0x100;  // + ring * kRingStride
constexpr std::uint64_t kRingStride = 0x20;
constexpr std::uint64_t kRingAddrLo = 0x00;  // ring base address (bus address of entry 0)
constexpr std::uint64_t kRingAddrHi = 0x04;
constexpr std::uint64_t kRingSize = 0x08;  // entries, power of two, >= 2
constexpr std::uint64_t kRingHead = 0x0c;  // consumer index
constexpr std::uint64_t kRingTail = 0x10;  // producer index (doorbell for host->TOE rings)
// Multi-channel control unit (paper §3.2): one page after the channels' pages.
constexpr std::uint64_t kControlUnitBase = 0x10000;  // up to 16 channel pages below it
constexpr std::uint64_t kIrqVector = 0x000;  // bit i: channel i wrote completions since the bit was
                                             // cleared; write 1s to clear
constexpr std::uint64_t kChannelCount = 0x004;  // read-only
constexpr std::uint64_t kRegionSize = kControlUnitBase + 0x1000;
constexpr int kMaxChannels = 16;
constexpr std::uint32_t kCtrlEnable = 1u << 0;
constexpr std::uint32_t kCtrlIrqEnable = 1u << 1;
}  // namespace reg

enum class Ring : int { Cmd = 0, Send = 1, Recv = 2, Ecq = 3 };
constexpr int kRings = 4;
constexpr std::uint32_t kDescBytes = 32;

// ---- CmdQ ----
enum class CmdOp : std::uint8_t {
  Connect = 1,  // sock, ip, port, rx buffer -> ECQ Connected | Error
  Listen = 2,   // sock, port, backlog -> ECQ CmdDone | Error
  Accept = 3,   // sock = new socket, arg = listening socket, rx buffer -> ECQ Accepted
  Close = 4,    // sock: graceful -> ECQ CmdDone, later Closed
  Abort = 5,    // sock: RST -> ECQ CmdDone, then Closed
};

struct CmdDesc {
  std::uint8_t opcode;
  std::uint8_t flags;
  std::uint16_t sock;
  std::uint32_t ip;  // host byte order
  std::uint16_t port;
  std::uint16_t arg;      // backlog (Listen) or listening socket (Accept)
  std::uint32_t rx_size;  // kernel receive buffer size in bytes
  std::uint64_t rx_addr;  // kernel receive buffer bus address
  std::uint32_t cookie;
  std::uint32_t local_ip;  // Connect/Listen: the guest's own address (0 = the TOE's primary)
};

// ---- SendQ ----
struct SendDesc {
  std::uint16_t sock;
  std::uint16_t flags;
  std::uint32_t length;
  std::uint64_t addr;    // payload in host memory
  std::uint32_t cookie;  // echoed in SendDone
  std::uint32_t reserved[3];
};

// ---- RecvQ ----
constexpr std::uint16_t kRecvNotifyNow = 1u << 0;  // interrupt on the next byte, buffer full or not
struct RecvDesc {
  std::uint16_t sock;
  std::uint16_t flags;
  std::uint32_t release;  // bytes of the receive buffer the host has consumed and hands back
  std::uint32_t reserved[6];
};

// ---- ECQ ----
enum class EventType : std::uint8_t {
  CmdDone = 1,
  Connected = 2,
  Accepted = 3,
  SendDone = 4,    // length bytes of the context with `cookie` are in the TOE; buffer reusable
  RxData = 5,      // length bytes at `offset` of the socket's receive buffer are valid
  PeerClosed = 6,  // FIN received; no more RxData after this
  Closed = 7,      // connection gone (after close, abort, reset or time-out)
  Error = 8,       // status says why; `cookie` identifies the failed context
};

enum class Status : std::int32_t {
  Ok = 0,
  BadSocket = -1,
  TableFull = -2,
  Refused = -3,
  Reset = -4,
  TimedOut = -5,
  BadDescriptor = -6,
  DmaFault = -7,
  PortInUse = -8,
};

// EcqDesc::flags: the socket has no CCB entry any more (closed, reset, refused, or never
// created): the TOE will write nothing into its receive buffer and take no command for it. Send
// contexts of it still queued complete with Error; once they have, the host may reuse the
// socket's id and buffers.
constexpr std::uint16_t kEcqSocketReleased = 1;

struct EcqDesc {
  std::uint8_t type;
  std::uint8_t valid;  // set by the TOE, cleared by the host when consumed
  std::uint16_t sock;
  std::int32_t status;
  std::uint32_t length;
  std::uint32_t offset;
  std::uint32_t cookie;
  std::uint16_t arg;  // listening socket (Accepted), opcode (CmdDone)
  std::uint16_t flags;  // kEcqSocketReleased
  std::uint64_t reserved1;
};

static_assert(sizeof(CmdDesc) == kDescBytes);
static_assert(sizeof(SendDesc) == kDescBytes);
static_assert(sizeof(RecvDesc) == kDescBytes);
static_assert(sizeof(EcqDesc) == kDescBytes);

}  // namespace vtoe::toe
