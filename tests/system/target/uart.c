// The PL011 as Linux's amba-pl011 probes and drives it: identification, reset values, the
// transmit interrupt through the GIC (SPI 1 = ID 33) and its clearing.
#include "rt.h"

static volatile int irqs;
static volatile uint32_t last_iar, mis_in_handler;

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  if (kind != EXC_IRQ) {
    show("unexpected exception", (uint32_t)kind);
    show("lr", lr);
    show("spsr", spsr);
    return 0;
  }
  last_iar = rd32(GICC_BASE + GICC_IAR);
  mis_in_handler = rd32(UART_BASE + PL011_MIS);
  wr32(UART_BASE + PL011_IMSC, 0);      // IMSC: no more (printing would raise TX again)
  wr32(UART_BASE + PL011_ICR, 0x7FF);  // ICR
  wr32(GICC_BASE + GICC_EOIR, last_iar);
  ++irqs;
  return 0;
}

int main(void) {
  for (uint32_t off = PL011_PERIPH_ID; off < PL011_UART_SIZE; off += 4) show("id", rd32(UART_BASE + off));
  show("fr", rd32(UART_BASE + PL011_FR) & 0xF8);
  show("cr", rd32(UART_BASE + PL011_CR));
  show("ifls", rd32(UART_BASE + PL011_IFLS));
  show("imsc", rd32(UART_BASE + PL011_IMSC));
  wr32(UART_BASE + PL011_IBRD, 13);    // IBRD
  wr32(UART_BASE + PL011_FBRD, 1);     // FBRD
  wr32(UART_BASE + PL011_LCR_H, 0x70);  // LCR_H: 8 bits, FIFOs on
  show("ibrd", rd32(UART_BASE + PL011_IBRD));
  show("fbrd", rd32(UART_BASE + PL011_FBRD));
  show("lcr_h", rd32(UART_BASE + PL011_LCR_H));
  show("ris after output", rd32(UART_BASE + PL011_RIS) & 0x20);

  wr32(GICD_BASE + GICD_CTLR, 1);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  wr32(GICC_BASE + GICC_CTLR, 1);
  *(volatile uint8_t*)(GICD_BASE + GICD_IPRIORITYR + 0x21) = 0xA0;
  *(volatile uint8_t*)(GICD_BASE + GICD_ITARGETSR + 0x21) = 1;
  wr32(GICD_BASE + GICD_ISENABLER + 4, 1u << 1);  // enable ID 33
  show("isenabler1", rd32(GICD_BASE + GICD_ISENABLER + 4));
  wr32(UART_BASE + PL011_ICR, 0x7FF);
  show("ris cleared", rd32(UART_BASE + PL011_RIS) & 0x20);
  wr32(UART_BASE + PL011_IMSC, 0x20);  // IMSC: TX
  show("mis", rd32(UART_BASE + PL011_MIS));
  irq_enable();
  puts_("tx irq\n");
  for (int i = 0; i < 200000 && !irqs; ++i) {
  }
  irq_disable();
  show("irqs", (uint32_t)irqs);
  show("iar", last_iar);
  show("mis in handler", mis_in_handler);
  show("ris", rd32(UART_BASE + PL011_RIS) & 0x20);
  return 0;
}
