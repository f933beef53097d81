#include "hypervisor/virtual_toe_manager.h"

#include <array>
#include <cstring>

namespace vtoe::hypervisor {

using toe::EcqDesc;
using toe::EventType;
using toe::Ring;
using toe::Status;
namespace reg = toe::reg;

namespace {
constexpr std::uint32_t kMaxSendLength = 16u << 20;
}  // namespace

// The physical channel as the hypervisor reaches it: registers through device_access (hypervisor
// cycles, charged to the VM on whose behalf it works), rings in hypervisor memory.
class VirtualToeManager::PhysicalAccess : public toe::HostRingDriver::Access {
 public:
  PhysicalAccess(VirtualToeManager& m, Ctx& ctx, int charge_vm)
      : m_(m), ctx_(ctx), charge_vm_(charge_vm) {}
  void write_reg(std::uint64_t offset, std::uint32_t value) override {
    m_.hyp_.device_access(ctx_, true, m_.params_.channel_regs_pa + offset, value, charge_vm_);
  }
  std::uint32_t read_reg(std::uint64_t offset) override {
    std::uint32_t value = 0;
    m_.hyp_.device_access(ctx_, false, m_.params_.channel_regs_pa + offset, value, charge_vm_);
    return value;
  }
  // Under platform.cpu_memory_traffic, completion reads miss the cache (the TOE wrote them) and
  // context writes are posted, as the guest driver's are.
  void read_mem(std::uint64_t addr, void* dst, std::size_t len) override {
    if (m_.traffic_)
      m_.traffic_->work(ctx_, 0, cpu::CycleClass::Hypervisor, false, addr, len, true, charge_vm_);
    m_.dram_.read(addr, dst, len);
  }
  void write_mem(std::uint64_t addr, const void* src, std::size_t len) override {
    m_.dram_.write(addr, src, len);
    if (m_.traffic_)
      m_.traffic_->work(ctx_, 0, cpu::CycleClass::Hypervisor, true, addr, len, false, charge_vm_);
  }
  // The physical rings are large and sends are bounded by `depth`; if one is full all the same,
  // the TOE always takes contexts: poll.
  void wait_for_space() override { sc_core::wait(core::ps(m_.params_.ring_full_poll_ps)); }

 private:
  VirtualToeManager& m_;
  Ctx& ctx_;
  int charge_vm_;
};

VirtualToeManager::VirtualToeManager(const sc_core::sc_module_name& name,
                                     const VirtualToeParams& params, Hypervisor& hyp,
                                     mem::Dram& dram)
    : core::Module(name),
      params_(params),
      hyp_(hyp),
      dram_(dram),
      qos_(params.policy, params.vms.size(), params.quanta, params.default_quantum),
      phys_(params.ring_entries),
      traps_(stats_.counter("register_traps", "guest accesses to virtual TOE registers emulated")),
      contexts_(stats_.counter("contexts", "guest ring contexts translated")),
      forwarded_(stats_.counter("completions_forwarded", "completions moved to virtual ECQs")),
      translation_faults_(
          stats_.counter("translation_faults", "guest addresses outside the VM's memory refused")),
      bad_contexts_(stats_.counter("bad_contexts", "malformed guest contexts refused")),
      ecq_overflows_(
          stats_.counter("ecq_overflows", "completions held because a virtual ECQ was full")),
      backlogged_(stats_.counter("backlogged",
                                 "doorbells whose contexts were left in a guest's ring because "
                                 "its held completions reached the limit")),
      quota_refusals_(stats_.counter("quota_refusals",
                                     "connect/listen/accept refused: the VM held its CCB quota")) {
  for (int vm : params_.vms) {
    vchannels_.emplace_back(vm);
    vsendq_occupancy_.push_back(&stats_.accumulator(
        "vsendq_occupancy.vm" + std::to_string(vm),
        "contexts waiting in the VM's virtual SendQ for the QoS dispatcher, mean over time"));
    // Every served VM's channel page is unmapped in its stage 2: its accesses trap here.
    hyp_.add_trap_handler(
        vm, params_.guest_regs_ipa, reg::kChannelStride,
        [this](int trapped, Ctx& ctx, std::uint64_t off, bool w, std::uint32_t& val) {
          register_access(trapped, ctx, off, w, val);
        });
  }
}

VirtualChannel* VirtualToeManager::find(int vm) {
  for (VirtualChannel& v : vchannels_)
    if (v.vm() == vm) return &v;
  return nullptr;
}

std::uint64_t VirtualToeManager::contexts(int slot) const {
  return vchannels_.at(static_cast<std::size_t>(slot)).contexts;
}

std::size_t VirtualToeManager::queued_sends(int slot) const {
  return vchannels_.at(static_cast<std::size_t>(slot)).sendq().size();
}

// ---- Guest memory through stage 2 ----

bool VirtualToeManager::translate(int vm, std::uint64_t ipa, std::uint64_t len, bool write,
                                  std::uint64_t* pa) {
  const auto t = hyp_.stage2(vm).translate_range(ipa, len, write);
  if (!t || !t->contiguous || t->attr != smmu::MemAttr::Normal) {
    ++translation_faults_;
    return false;
  }
  *pa = t->pa;
  return true;
}

bool VirtualToeManager::guest_read(int vm, std::uint64_t ipa, void* dst, std::size_t len,
                                   std::uint64_t* pa_out) {
  std::uint64_t pa = 0;
  if (!translate(vm, ipa, len, false, &pa)) return false;
  dram_.read(pa, dst, len);
  if (pa_out) *pa_out = pa;
  return true;
}

bool VirtualToeManager::guest_write(int vm, std::uint64_t ipa, const void* src, std::size_t len) {
  std::uint64_t pa = 0;
  if (!translate(vm, ipa, len, true, &pa)) return false;
  dram_.write(pa, src, len);
  return true;
}

// ---- Trapped register accesses (the virtual control channel) ----

void VirtualToeManager::register_access(int vm, Ctx& ctx, std::uint64_t offset, bool write,
                                        std::uint32_t& value) {
  VirtualChannel* v = find(vm);
  ++traps_;
  if (!write) {
    value = v->read(offset);
    return;
  }
  Ring ring = Ring::Cmd;
  switch (v->write(offset, value, &ring)) {
    case VirtualChannel::Effect::Doorbell:
      if (backend_) return kick(*v, ring);  // the exit only queues it: the back end does the work
      doorbell(*v, ctx, ring);
      return;
    case VirtualChannel::Effect::EcqFreed: {
      std::size_t written = 0;
      const auto guest = [&](std::uint64_t ipa, const void* src, std::size_t len) {
        return guest_write(vm, ipa, src, len);
      };
      if (v->flush_held(guest, &written)) {
        forwarded_ += written;
        hyp_.spend(ctx, hyp_.costs().vgic_inject, vm);
        hyp_.inject(vm, &ctx);
      }
      // Contexts left in the guest's rings while it was backlogged are taken now.
      if (v->left_behind && v->held() < params_.held_limit) {
        v->left_behind = false;
        for (Ring r : {Ring::Cmd, Ring::Recv, Ring::Send})
          if (v->ring(r).pending() > 0) doorbell(*v, ctx, r);
      }
      return;
    }
    case VirtualChannel::Effect::None:
      return;
  }
}

void VirtualToeManager::set_backend(Ctx& ctx) {
  backend_ = &ctx;
  queued_.assign(vchannels_.size(), {});
  kicks_ = &stats_.counter("backend_kicks",
                           "hypervisor.backend_thread: doorbells queued for the back end");
  coalesced_ = &stats_.counter(
      "backend_coalesced", "kicks that found the back end at work: served by its pass, no wake-up");
  backend_passes_ =
      &stats_.counter("backend_passes", "times the back end woke and drained the kicked rings");
  sc_core::sc_spawn([this] { backend_loop(); }, "backend");
}

void VirtualToeManager::kick(VirtualChannel& v, Ring ring) {
  ++*kicks_;
  bool& queued = queued_[static_cast<std::size_t>(slot_of(v))][static_cast<std::size_t>(ring)];
  if (!queued) {
    queued = true;
    kicked_.emplace_back(slot_of(v), ring);
  }
  if (backend_busy_) {
    ++*coalesced_;  // vhost has notifications off while it works: its pass takes this ring
    return;
  }
  backend_ev_.notify(sc_core::SC_ZERO_TIME);
}

// vhost's worker: woken by a kick, it drains every kicked ring (those kicked meanwhile too) on
// its own core, then sleeps with notifications on again.
void VirtualToeManager::backend_loop() {
  for (;;) {
    if (kicked_.empty()) sc_core::wait(backend_ev_);
    backend_busy_ = true;
    ++*backend_passes_;
    while (!kicked_.empty()) {
      const auto [slot, ring] = kicked_.front();
      kicked_.pop_front();
      queued_[static_cast<std::size_t>(slot)][static_cast<std::size_t>(ring)] = false;
      doorbell(vchannels_[static_cast<std::size_t>(slot)], *backend_, ring);
    }
    backend_busy_ = false;
  }
}

void VirtualToeManager::doorbell(VirtualChannel& v, Ctx& ctx, Ring ring) {
  toe::RingEngine& vr = v.ring(ring);
  const std::size_t r = static_cast<std::size_t>(ring);
  if (v.draining[r]) return;  // the loop already running takes the new contexts too
  v.draining[r] = true;
  ensure_started(ctx, v.vm());
  const std::uint32_t ecq_before = v.ring(Ring::Ecq).produce_index();
  while (vr.pending() > 0) {
    if (v.held() >= params_.held_limit) {  // the guest is not reading its ECQ: take no more
      ++backlogged_;
      v.left_behind = true;
      break;
    }
    std::uint8_t raw[toe::kDescBytes];
    std::uint64_t raw_pa = 0;
    const std::uint32_t generation = vr.generation();
    if (!guest_read(v.vm(), vr.entry_addr(vr.head()), raw, toe::kDescBytes, &raw_pa)) {
      v.latch_error();  // the ring itself is outside the VM's memory: stop, as the TOE would
      vr.consume(vr.pending());
      break;
    }
    if (traffic_)  // the guest wrote the context: the copy reads it from memory
      traffic_->work(ctx, 0, cpu::CycleClass::Hypervisor, false, raw_pa, toe::kDescBytes, true,
                     v.vm());
    hyp_.spend(ctx, hyp_.costs().vtoe_context, v.vm());
    ++contexts_;
    ++v.contexts;
    if (ring == Ring::Cmd) {
      toe::CmdDesc d;
      std::memcpy(&d, raw, sizeof d);
      handle_command(v, ctx, d);
    } else if (ring == Ring::Recv) {
      toe::RecvDesc d;
      std::memcpy(&d, raw, sizeof d);
      handle_recv(v, ctx, d);
    } else {
      toe::SendDesc d;
      std::memcpy(&d, raw, sizeof d);
      handle_send(v, d);
    }
    // Handling took simulated time: if the guest reprogrammed the ring meanwhile, the context
    // is not the ring's any more (consuming it would put the head past the new tail).
    if (vr.generation() == generation) vr.consume(1);
  }
  v.draining[r] = false;
  dispatch(ctx);
  // Contexts refused here completed at once: tell the guest.
  if (v.ring(Ring::Ecq).produce_index() != ecq_before) {
    hyp_.spend(ctx, hyp_.costs().vgic_inject, v.vm());
    hyp_.inject(v.vm(), &ctx);
  }
}

void VirtualToeManager::fail_context(VirtualChannel& v, std::uint16_t vsock, std::uint32_t cookie,
                                     Status st, std::uint8_t op) {
  ++bad_contexts_;
  EcqDesc ev{};
  ev.type = static_cast<std::uint8_t>(EventType::Error);
  ev.sock = vsock;
  ev.status = static_cast<std::int32_t>(st);
  ev.cookie = cookie;
  ev.arg = op;
  deliver(v, ev);
}

void VirtualToeManager::handle_command(VirtualChannel& v, Ctx& ctx, toe::CmdDesc cmd) {
  const int slot = slot_of(v);
  const auto op = static_cast<toe::CmdOp>(cmd.opcode);
  const std::uint16_t vsock = cmd.sock;
  auto fail = [&](Status st) { fail_context(v, vsock, cmd.cookie, st, cmd.opcode); };
  auto rx_buffer = [&]() {
    std::uint64_t pa = 0;
    if (cmd.rx_size < 64 || !translate(v.vm(), cmd.rx_addr, cmd.rx_size, true, &pa)) return false;
    cmd.rx_addr = pa;  // the TOE writes received payload straight into the guest's buffer
    return true;
  };
  switch (op) {
    case toe::CmdOp::Connect:
    case toe::CmdOp::Listen:
    case toe::CmdOp::Accept: {
      if (sockets_.lookup(slot, vsock) >= 0) return fail(Status::BadSocket);
      if (sockets_.sockets_of(slot) >= params_.socket_quota) {  // its share of the CCB is used
        ++quota_refusals_;
        return fail(Status::TableFull);
      }
      if (op == toe::CmdOp::Accept) {
        const int lps = sockets_.lookup(slot, cmd.arg);
        if (lps < 0) return fail(Status::BadSocket);
        cmd.arg = static_cast<std::uint16_t>(lps);
      }
      if (op != toe::CmdOp::Listen && !rx_buffer()) return fail(Status::DmaFault);
      const int ps = sockets_.allocate(slot, vsock);
      if (ps < 0) return fail(Status::TableFull);
      cmd.sock = static_cast<std::uint16_t>(ps);
      break;
    }
    case toe::CmdOp::Close:
    case toe::CmdOp::Abort: {
      const int ps = sockets_.lookup(slot, vsock);
      if (ps < 0) return fail(Status::BadSocket);
      cmd.sock = static_cast<std::uint16_t>(ps);
      break;
    }
    default:
      return fail(Status::BadDescriptor);
  }
  cmd.cookie = 0;
  // A VM connects and listens only on its own address (no spoofing another VM's).
  const std::size_t slot_index = static_cast<std::size_t>(slot);
  if (slot_index < params_.addresses.size()) cmd.local_ip = params_.addresses[slot_index];
  post(ctx, Ring::Cmd, &cmd, v.vm());
}

void VirtualToeManager::handle_recv(VirtualChannel& v, Ctx& ctx, toe::RecvDesc rd) {
  const int ps = sockets_.lookup(slot_of(v), rd.sock);
  if (ps < 0) return fail_context(v, rd.sock, 0, Status::BadSocket);
  rd.sock = static_cast<std::uint16_t>(ps);
  post(ctx, Ring::Recv, &rd, v.vm());
}

void VirtualToeManager::handle_send(VirtualChannel& v, toe::SendDesc sd) {
  const int slot = slot_of(v);
  const int ps = sockets_.lookup(slot, sd.sock);
  if (ps < 0) return fail_context(v, sd.sock, sd.cookie, Status::BadSocket);
  if (sd.length == 0 || sd.length > kMaxSendLength)
    return fail_context(v, sd.sock, sd.cookie, Status::BadDescriptor);
  std::uint64_t pa = 0;
  if (!translate(v.vm(), sd.addr, sd.length, false, &pa))
    return fail_context(v, sd.sock, sd.cookie, Status::DmaFault);
  const std::uint32_t pc = sockets_.add_send(slot, sd.sock, sd.cookie);
  sd.sock = static_cast<std::uint16_t>(ps);
  sd.addr = pa;
  sd.cookie = pc;
  v.sendq().push_back(VirtualChannel::SendContext{sd, qos_.next_arrival()});
  vsendq_occupancy_[static_cast<std::size_t>(slot)]->level(static_cast<double>(v.sendq().size()),
                                                           core::now_ps());
}

// ---- QoS dispatcher: virtual SendQs -> physical SendQ ----

void VirtualToeManager::dispatch(Ctx& ctx) {
  auto refresh = [&](std::size_t i) {
    const auto& q = vchannels_[i].sendq();
    if (q.empty())
      qos_.clear_head(i);
    else
      qos_.set_head(i, q.front().desc.length, q.front().arrival);
  };
  for (std::size_t i = 0; i < vchannels_.size(); ++i) refresh(i);
  while (in_flight_ < params_.depth) {
    const int q = qos_.pick();
    if (q < 0) break;
    VirtualChannel& v = vchannels_[static_cast<std::size_t>(q)];
    // Another thread may have run this loop while this one waited below (the guests' doorbells
    // and the interrupt handler all dispatch): never trust a head that is not there any more.
    if (v.sendq().empty()) {
      refresh(static_cast<std::size_t>(q));
      continue;
    }
    const VirtualChannel::SendContext sc = v.sendq().front();
    v.sendq().pop_front();
    vsendq_occupancy_[static_cast<std::size_t>(q)]->level(static_cast<double>(v.sendq().size()),
                                                          core::now_ps());
    qos_.served(q, sc.desc.length);
    // The queue's new head before anything waits, so that a dispatch that runs meanwhile sees it.
    refresh(static_cast<std::size_t>(q));
    ++in_flight_;
    hyp_.spend(ctx, hyp_.costs().dispatch, v.vm());
    post(ctx, Ring::Send, &sc.desc, v.vm());
  }
}

// ---- Virtual ECQ ----

void VirtualToeManager::deliver(VirtualChannel& v, const EcqDesc& ev, Ctx* ctx) {
  const int vm = v.vm();
  const auto guest = [&](std::uint64_t ipa, const void* src, std::size_t len) {
    std::uint64_t pa = 0;
    if (!translate(vm, ipa, len, true, &pa)) return false;
    dram_.write(pa, src, len);
    if (traffic_ && ctx)  // a posted write into the VM's virtual ECQ
      traffic_->work(*ctx, 0, cpu::CycleClass::Hypervisor, true, pa, len, false, vm);
    return true;
  };
  switch (v.deliver(ev, guest)) {
    case VirtualChannel::Delivery::Written:
      ++forwarded_;
      break;
    case VirtualChannel::Delivery::Held:
      ++ecq_overflows_;
      break;
    case VirtualChannel::Delivery::NoEcq:
    case VirtualChannel::Delivery::Refused:
      break;
  }
}

// ---- Physical interrupt: completions back to their VMs ----

void VirtualToeManager::handle_interrupt(Ctx& ctx) {
  if (!phys_started_) return;
  std::vector<bool> notify(vchannels_.size(), false);
  int first_vm = -1;
  PhysicalAccess reader(*this, ctx, vchannels_.front().vm());  // memory only: nobody is charged
  EcqDesc ev;
  while (phys_.next_completion(reader, ev)) {
    SocketMap::Socket* p = sockets_.find(ev.sock);
    const std::uint16_t psock = ev.sock;
    const auto type = static_cast<EventType>(ev.type);
    std::optional<SocketMap::SendRef> ref;
    if ((type == EventType::SendDone || type == EventType::Error) &&
        SocketMap::is_send_cookie(ev.cookie)) {
      if (in_flight_ > 0) --in_flight_;
      ref = sockets_.take_send(ev.cookie);
      if (!ref) continue;
      ev.cookie = ref->vcookie;
    }
    // A send context's completion goes to its VM even when the socket's mapping is gone (the
    // guest waits for every send context before it reuses a socket id).
    if (!p && !ref) continue;  // a socket the guest no longer has
    const int slot = p ? p->slot : ref->slot;
    VirtualChannel& v = vchannels_[static_cast<std::size_t>(slot)];
    if (first_vm < 0) first_vm = v.vm();
    hyp_.spend(ctx, hyp_.costs().ecq_forward, v.vm());
    ev.sock = p ? p->vsock : ref->vsock;
    if (!p) {
      deliver(v, ev, &ctx);
      notify[static_cast<std::size_t>(slot_of(v))] = true;
      continue;
    }
    switch (type) {
      case EventType::Accepted: {
        const SocketMap::Socket* listener = sockets_.find(ev.arg);
        ev.arg = listener ? listener->vsock : 0;
        p->established = true;
        break;
      }
      case EventType::Connected:
      case EventType::CmdDone:
        p->established = true;
        break;
      default:
        break;
    }
    // The TOE no longer knows the physical socket: its id may serve another VM's socket.
    if (ev.flags & toe::kEcqSocketReleased) sockets_.erase(psock);
    deliver(v, ev, &ctx);
    notify[static_cast<std::size_t>(slot_of(v))] = true;
  }
  const int charge = first_vm >= 0 ? first_vm : vchannels_.front().vm();
  PhysicalAccess writer(*this, ctx, charge);
  phys_.release_completions(writer);
  dispatch(ctx);
  for (std::size_t i = 0; i < vchannels_.size(); ++i) {
    if (!notify[i]) continue;
    hyp_.spend(ctx, hyp_.costs().vgic_inject, vchannels_[i].vm());
    hyp_.inject(vchannels_[i].vm(), &ctx);
  }
}

// ---- Driving the physical channel ----

void VirtualToeManager::ensure_started(Ctx& ctx, int charge_vm) {
  if (phys_started_) return;
  phys_started_ = true;  // before programming: a second doorbell meanwhile must not program again
  std::array<std::uint64_t, toe::kRings> ring_pa{};
  for (int r = 0; r < toe::kRings; ++r)
    ring_pa[static_cast<std::size_t>(r)] = params_.ring_memory_pa + static_cast<std::uint64_t>(r) *
                                                                        params_.ring_entries *
                                                                        toe::kDescBytes;
  PhysicalAccess access(*this, ctx, charge_vm);
  phys_.start(access, ring_pa);
}

void VirtualToeManager::post(Ctx& ctx, Ring ring, const void* desc, int charge_vm) {
  PhysicalAccess access(*this, ctx, charge_vm);
  phys_.post(access, ring, desc);
}

}  // namespace vtoe::hypervisor
