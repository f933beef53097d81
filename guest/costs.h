// What each step of guest software costs on the core, in CPU cycles. These are the calibration
// knobs of the platform (docs/guest.md explains how the defaults reproduce the paper's native
// throughput): per-call costs dominate small messages, the per-byte programmed-I/O copy
// dominates large ones, so throughput rises with message size and the 2 GHz core, not the
// 10 Gbit/s TOE, is the limit.
#pragma once

namespace vtoe::guest {

struct GuestCosts {
  double syscall = 1000;        // enter and leave the kernel for one socket call
  double copy_fixed = 100;      // set up one programmed-I/O copy
  double copy_per_byte = 2.75;  // programmed-I/O copy, user buffer -> kernel send buffer
  // Kernel receive buffer -> user buffer: the source was just written by the TOE's DMA, so the
  // copy misses the cache on every line it reads.
  double copy_per_byte_rx = 3.0;
  double post_context = 200;     // build one ring context in host memory
  double doorbell = 150;         // uncached store to a TOE register (plus the device latency)
  double isr = 1000;             // interrupt entry, exit and acknowledge
  double ecq_entry = 100;        // read and retire one ECQ completion
  double kthread_event = 400;    // deliver one completion to its socket
  double wakeup = 500;           // make a blocked process runnable
  double app_per_message = 300;  // application work per message (guest user)
  double context_switch = 1500;  // switch between processes
  // Polled paths (shared-memory rings, the user-space TOE channel): one turn of a spin loop, a
  // load of a line the other side owns (a cache miss when it changed).
  double poll = 100;
  // Zero copy: map (shared memory) or pin (the TOE's DMA from user pages) one 4 KiB page, for
  // messages of at least remap_threshold bytes.
  double page_remap = 1000;
  double remap_threshold = 8192;
  // A switch between two user-level threads of one process (cooperative workers).
  double coop_switch = 200;
};

}  // namespace vtoe::guest
