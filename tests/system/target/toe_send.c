// The TOE driven from ARM code on the system platform (vtoe only: QEMU's virt machine has no
// TOE): channel 0's four rings in RAM, a Connect to the scenario's peer (10.0.0.2:5001, where the
// built-in scenario's peer runs a sink), SENDS send contexts of SEND_BYTES bytes of the stream
// pattern every simulated application sends, then a Close, until the peer has closed too.
// Completions come by interrupt (SPI 112, level while the ECQ holds entries the host has not
// taken); the handler drains the ECQ.
// Registers, contexts and codes by their generated names only (vtoe/toe.h, vtoe/virt.h).
#include "rt.h"
#include "vtoe/toe.h"

#define CHANNEL (VIRT_TOE_BASE + TOE_CHANNEL_BASE)  // channel 0
#define ENTRIES 16u
#define SENDS 6u
#define SEND_BYTES 8000u
#define PEER_IP 0x0a000002u
#define PEER_PORT 5001u
#define SOCK 1u

static struct toe_cmd_desc cmdq[ENTRIES] __attribute__((aligned(32)));
static struct toe_send_desc sendq[ENTRIES] __attribute__((aligned(32)));
static struct toe_recv_desc recvq[ENTRIES] __attribute__((aligned(32)));
static volatile struct toe_ecq_desc ecq[ENTRIES] __attribute__((aligned(32)));
static uint8_t rx_buffer[4096];
static uint8_t payload[SENDS * SEND_BYTES];

static uint32_t cmd_tail, send_tail, ecq_head;
static volatile uint32_t irqs, connected, send_done, sent_bytes, cmd_done, peer_closed, errors;
static volatile int32_t last_status;

static uint32_t ring(uint32_t q, uint32_t reg) {
  return CHANNEL + TOE_RING_BASE + q * TOE_RING_STRIDE + reg;
}

static void setup_ring(uint32_t q, const volatile void* base) {
  wr32(ring(q, TOE_RING_ADDR_LO), (uint32_t)base);
  wr32(ring(q, TOE_RING_ADDR_HI), 0);
  wr32(ring(q, TOE_RING_SIZE), ENTRIES);
}

static void drain_ecq(void) {
  while (ecq[ecq_head % ENTRIES].valid) {
    const volatile struct toe_ecq_desc* e = &ecq[ecq_head % ENTRIES];
    switch (e->type) {
      case TOE_EVENT_CONNECTED:
        connected = 1;
        break;
      case TOE_EVENT_SEND_DONE:
        ++send_done;
        sent_bytes += e->length;
        break;
      case TOE_EVENT_CMD_DONE:
        ++cmd_done;
        break;
      case TOE_EVENT_PEER_CLOSED:
        ++peer_closed;
        break;
      case TOE_EVENT_ERROR:
        ++errors;
        last_status = e->status;
        break;
      default:
        break;
    }
    ecq[ecq_head % ENTRIES].valid = 0;
    ecq_head = (ecq_head + 1) % ENTRIES;
  }
  wr32(ring(TOE_QUEUE_ECQ, TOE_RING_HEAD), ecq_head);  // the level falls once head == tail
}

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  (void)lr;
  (void)spsr;
  if (kind != EXC_IRQ) {
    puts_("unexpected exception\n");
    power_off();
  }
  const uint32_t iar = rd32(GICC_BASE + GICC_IAR);
  if ((iar & 0x3ffu) == 32u + VIRT_TOE_SPI) {
    ++irqs;
    drain_ecq();
  }
  wr32(GICC_BASE + GICC_EOIR, iar);
  return 0;
}

static void command(uint8_t opcode) {
  struct toe_cmd_desc* c = &cmdq[cmd_tail % ENTRIES];
  c->opcode = opcode;
  c->flags = 0;
  c->sock = SOCK;
  c->ip = PEER_IP;
  c->port = PEER_PORT;
  c->arg = 0;
  c->rx_size = sizeof rx_buffer;
  c->rx_addr = (uint32_t)rx_buffer;
  c->cookie = cmd_tail;
  c->local_ip = 0;
  cmd_tail = (cmd_tail + 1) % ENTRIES;
  wr32(ring(TOE_QUEUE_CMD, TOE_RING_TAIL), cmd_tail);  // the doorbell
}

static void wait_for(volatile uint32_t* what, uint32_t n) {
  while (*what < n && !errors) __asm__ volatile("wfi");
}

int main(void) {
  // The GIC: the TOE's SPI enabled at a priority the mask lets through.
  const uint32_t id = 32u + VIRT_TOE_SPI;
  wr32(GICD_BASE + GICD_CTLR, 1);
  *(volatile uint8_t*)(GICD_BASE + GICD_IPRIORITYR + id) = 0xa0;
  wr32(GICD_BASE + GICD_ISENABLER + 4 * (id / 32), 1u << (id % 32));
  wr32(GICC_BASE + GICC_PMR, 0xf0);
  wr32(GICC_BASE + GICC_CTLR, 1);

  show("toe channels", rd32(VIRT_TOE_BASE + TOE_CONTROL_UNIT_BASE + TOE_CHANNEL_COUNT));
  setup_ring(TOE_QUEUE_CMD, cmdq);
  setup_ring(TOE_QUEUE_SEND, sendq);
  setup_ring(TOE_QUEUE_RECV, recvq);
  setup_ring(TOE_QUEUE_ECQ, ecq);
  wr32(CHANNEL + TOE_CTRL, TOE_CTRL_ENABLE | TOE_CTRL_IRQ_ENABLE);
  irq_enable();

  command(TOE_CMD_CONNECT);
  wait_for(&connected, 1);
  show("connected", connected);

  // Byte i of the stream is (7 i + i / 256) mod 256: what the peer's sink checks.
  for (uint32_t i = 0; i < sizeof payload; ++i) payload[i] = (uint8_t)(7u * i + (i >> 8));
  for (uint32_t k = 0; k < SENDS; ++k) {
    struct toe_send_desc* d = &sendq[send_tail % ENTRIES];
    d->sock = SOCK;
    d->flags = 0;
    d->length = SEND_BYTES;
    d->addr = (uint32_t)(payload + k * SEND_BYTES);
    d->cookie = k;
    send_tail = (send_tail + 1) % ENTRIES;
  }
  wr32(ring(TOE_QUEUE_SEND, TOE_RING_TAIL), send_tail);  // one doorbell for all of them
  wait_for(&send_done, SENDS);
  show("send done", send_done);
  show("sent bytes", sent_bytes);

  // SendDone says the bytes are in the TOE, not at the peer: after our FIN, the peer's (the sink
  // closes when it has read everything) says they arrived.
  command(TOE_CMD_CLOSE);
  wait_for(&cmd_done, 1);
  wait_for(&peer_closed, 1);
  show("closed", cmd_done);
  show("peer closed", peer_closed);
  show("errors", errors);
  show("status", (uint32_t)last_status);
  show("channel status", rd32(CHANNEL + TOE_STATUS));
  show("interrupts taken", irqs > 0);
  power_off();
}
