#include "hypervisor/virtual_toe_manager.h"

#include <cstring>

namespace vtoe::hypervisor {

using toe::EcqDesc;
using toe::EventType;
using toe::Ring;
using toe::Status;
namespace reg = toe::reg;

namespace {
constexpr std::uint32_t kMaxSendLength = 16u << 20;
// Send contexts get physical cookies with this bit; commands carry cookie 0 physically.
constexpr std::uint32_t kSendCookie = 0x8000'0000u;

std::uint64_t ring_reg(Ring r, std::uint64_t sub) {
  return reg::kRingBase + static_cast<std::uint64_t>(r) * reg::kRingStride + sub;
}
}  // namespace

VirtualToeManager::VirtualToeManager(const sc_core::sc_module_name& name,
                                     const VirtualToeParams& params, Hypervisor& hyp,
                                     mem::Dram& dram)
    : core::Module(name),
      params_(params),
      hyp_(hyp),
      dram_(dram),
      traps_(stats_.counter("register_traps", "guest accesses to virtual TOE registers emulated")),
      contexts_(stats_.counter("contexts", "guest ring contexts translated")),
      forwarded_(stats_.counter("completions_forwarded", "completions moved to virtual ECQs")),
      translation_faults_(
          stats_.counter("translation_faults", "guest addresses outside the VM's memory refused")),
      bad_contexts_(stats_.counter("bad_contexts", "malformed guest contexts refused")),
      ecq_overflows_(
          stats_.counter("ecq_overflows", "completions held because a virtual ECQ was full")) {
  for (int vm : params_.vms) {
    Vtoe v;
    v.vm = vm;
    vtoes_.push_back(v);
    // Every served VM's channel page is unmapped in its stage 2: its accesses trap here.
    hyp_.add_trap_handler(
        vm, params_.guest_regs_ipa, reg::kChannelStride,
        [this](int trapped, Ctx& ctx, std::uint64_t off, bool w, std::uint32_t& val) {
          register_access(trapped, ctx, off, w, val);
        });
  }
  std::vector<std::uint32_t> quanta = params_.quanta;
  policy_ =
      toe::make_dispatch_policy(params_.policy, vtoes_.size(), quanta, params_.default_quantum);
  heads_.resize(vtoes_.size());
  for (int r = 0; r < toe::kRings; ++r)
    ring_pa_[r] = params_.ring_memory_pa +
                  static_cast<std::uint64_t>(r) * params_.ring_entries * toe::kDescBytes;
}

VirtualToeManager::Vtoe* VirtualToeManager::find_vtoe(int vm) {
  for (Vtoe& v : vtoes_)
    if (v.vm == vm) return &v;
  return nullptr;
}

std::uint64_t VirtualToeManager::contexts(int slot) const {
  return vtoes_.at(static_cast<std::size_t>(slot)).contexts;
}

std::size_t VirtualToeManager::queued_sends(int slot) const {
  return vtoes_.at(static_cast<std::size_t>(slot)).sendq.size();
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

bool VirtualToeManager::guest_read(int vm, std::uint64_t ipa, void* dst, std::size_t len) {
  std::uint64_t pa = 0;
  if (!translate(vm, ipa, len, false, &pa)) return false;
  dram_.read(pa, dst, len);
  return true;
}

bool VirtualToeManager::guest_write(int vm, std::uint64_t ipa, const void* src, std::size_t len) {
  std::uint64_t pa = 0;
  if (!translate(vm, ipa, len, true, &pa)) return false;
  dram_.write(pa, src, len);
  return true;
}

// ---- Connection manager ----

int VirtualToeManager::lookup_psock(int slot, std::uint16_t vsock) const {
  auto it = psock_of_.find({slot, vsock});
  return it == psock_of_.end() ? -1 : it->second;
}

int VirtualToeManager::allocate_psock(int slot, std::uint16_t vsock) {
  for (int tries = 0; tries < 0xffff; ++tries) {
    const std::uint16_t ps = next_psock_;
    next_psock_ = static_cast<std::uint16_t>(next_psock_ == 0xffff ? 1 : next_psock_ + 1);
    if (psocks_.count(ps)) continue;
    psocks_[ps] = Psock{slot, vsock, false};
    psock_of_[{slot, vsock}] = ps;
    return ps;
  }
  return -1;
}

// ---- Trapped register accesses (the virtual control channel) ----

void VirtualToeManager::register_access(int vm, Ctx& ctx, std::uint64_t offset, bool write,
                                        std::uint32_t& value) {
  Vtoe* v = find_vtoe(vm);
  ++traps_;
  if (offset == reg::kCtrl) {
    if (write)
      v->ctrl = value;
    else
      value = v->ctrl;
    return;
  }
  if (offset == reg::kStatus) {
    if (write)
      v->status &= ~value;
    else
      value = v->status;
    return;
  }
  if (offset < reg::kRingBase || offset >= reg::kRingBase + toe::kRings * reg::kRingStride) {
    if (!write) value = 0;
    v->status |= 1;
    return;
  }
  const auto r = static_cast<Ring>((offset - reg::kRingBase) / reg::kRingStride);
  const std::uint64_t sub = (offset - reg::kRingBase) % reg::kRingStride;
  VRing& vr = v->ring[static_cast<int>(r)];
  if (!write) {
    value = sub == reg::kRingAddrLo   ? static_cast<std::uint32_t>(vr.ipa)
            : sub == reg::kRingAddrHi ? static_cast<std::uint32_t>(vr.ipa >> 32)
            : sub == reg::kRingSize   ? vr.size
            : sub == reg::kRingHead   ? vr.head
            : sub == reg::kRingTail   ? vr.tail
                                      : 0;
    return;
  }
  const bool ecq = r == Ring::Ecq;
  const bool configured = vr.size >= 2 && vr.ipa != 0;
  switch (sub) {
    case reg::kRingAddrLo:
      vr.ipa = (vr.ipa & ~0xffffffffull) | value;
      vr.head = vr.tail = 0;
      return;
    case reg::kRingAddrHi:
      vr.ipa = (vr.ipa & 0xffffffffull) | (std::uint64_t{value} << 32);
      vr.head = vr.tail = 0;
      return;
    case reg::kRingSize:
      if (value < 2 || (value & (value - 1)) || value > (1u << 16)) {
        v->status |= 1;
        return;
      }
      vr.size = value;
      vr.head = vr.tail = 0;
      return;
    case reg::kRingTail:
      if (ecq || !configured || value >= vr.size) {
        v->status |= 1;
        return;
      }
      doorbell(*v, ctx, r, value);
      return;
    case reg::kRingHead:
      if (!ecq || !configured || value >= vr.size) {
        v->status |= 1;
        return;
      }
      vr.head = value;
      if (flush_overflow(*v)) {
        hyp_.spend(ctx, hyp_.costs().vgic_inject, vm);
        hyp_.inject(vm);
      }
      return;
    default:
      v->status |= 1;
  }
}

void VirtualToeManager::doorbell(Vtoe& v, Ctx& ctx, Ring ring, std::uint32_t new_tail) {
  VRing& vr = v.ring[static_cast<int>(ring)];
  vr.tail = new_tail;
  ensure_started(ctx, v.vm);
  const std::size_t ecq_before = v.ring[static_cast<int>(Ring::Ecq)].tail;
  while (vr.head != vr.tail) {
    std::uint8_t raw[toe::kDescBytes];
    if (!guest_read(v.vm, vr.ipa + static_cast<std::uint64_t>(vr.head) * toe::kDescBytes, raw,
                    toe::kDescBytes)) {
      v.status |= 1;  // the ring itself is outside the VM's memory: stop, as the TOE would
      vr.head = vr.tail;
      break;
    }
    hyp_.spend(ctx, hyp_.costs().vtoe_context, v.vm);
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
      handle_send(v, ctx, d);
    }
    vr.head = (vr.head + 1) & (vr.size - 1);
  }
  dispatch(ctx);
  // Contexts refused here completed at once: tell the guest.
  if (v.ring[static_cast<int>(Ring::Ecq)].tail != ecq_before) {
    hyp_.spend(ctx, hyp_.costs().vgic_inject, v.vm);
    hyp_.inject(v.vm);
  }
}

void VirtualToeManager::fail_context(Vtoe& v, std::uint16_t vsock, std::uint32_t cookie, Status st,
                                     std::uint8_t op) {
  ++bad_contexts_;
  EcqDesc ev{};
  ev.type = static_cast<std::uint8_t>(EventType::Error);
  ev.sock = vsock;
  ev.status = static_cast<std::int32_t>(st);
  ev.cookie = cookie;
  ev.arg = op;
  deliver(v, ev);
}

void VirtualToeManager::handle_command(Vtoe& v, Ctx& ctx, toe::CmdDesc cmd) {
  const int slot = static_cast<int>(&v - vtoes_.data());
  const auto op = static_cast<toe::CmdOp>(cmd.opcode);
  const std::uint16_t vsock = cmd.sock;
  auto fail = [&](Status st) { fail_context(v, vsock, cmd.cookie, st, cmd.opcode); };
  auto rx_buffer = [&]() {
    std::uint64_t pa = 0;
    if (cmd.rx_size < 64 || !translate(v.vm, cmd.rx_addr, cmd.rx_size, true, &pa)) return false;
    cmd.rx_addr = pa;  // the TOE writes received payload straight into the guest's buffer
    return true;
  };
  switch (op) {
    case toe::CmdOp::Connect:
    case toe::CmdOp::Listen:
    case toe::CmdOp::Accept: {
      if (lookup_psock(slot, vsock) >= 0) return fail(Status::BadSocket);
      if (op == toe::CmdOp::Accept) {
        const int lps = lookup_psock(slot, cmd.arg);
        if (lps < 0) return fail(Status::BadSocket);
        cmd.arg = static_cast<std::uint16_t>(lps);
      }
      if (op != toe::CmdOp::Listen && !rx_buffer()) return fail(Status::DmaFault);
      const int ps = allocate_psock(slot, vsock);
      if (ps < 0) return fail(Status::TableFull);
      cmd.sock = static_cast<std::uint16_t>(ps);
      break;
    }
    case toe::CmdOp::Close:
    case toe::CmdOp::Abort: {
      const int ps = lookup_psock(slot, vsock);
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
  post(ctx, Ring::Cmd, &cmd, v.vm);
}

void VirtualToeManager::handle_recv(Vtoe& v, Ctx& ctx, toe::RecvDesc rd) {
  const int ps = lookup_psock(static_cast<int>(&v - vtoes_.data()), rd.sock);
  if (ps < 0) return fail_context(v, rd.sock, 0, Status::BadSocket);
  rd.sock = static_cast<std::uint16_t>(ps);
  post(ctx, Ring::Recv, &rd, v.vm);
}

void VirtualToeManager::handle_send(Vtoe& v, Ctx& ctx, toe::SendDesc sd) {
  (void)ctx;
  const int slot = static_cast<int>(&v - vtoes_.data());
  const int ps = lookup_psock(slot, sd.sock);
  if (ps < 0) return fail_context(v, sd.sock, sd.cookie, Status::BadSocket);
  if (sd.length == 0 || sd.length > kMaxSendLength)
    return fail_context(v, sd.sock, sd.cookie, Status::BadDescriptor);
  std::uint64_t pa = 0;
  if (!translate(v.vm, sd.addr, sd.length, false, &pa))
    return fail_context(v, sd.sock, sd.cookie, Status::DmaFault);
  std::uint32_t pc = 0;
  do {
    pc = kSendCookie | (next_cookie_++ & ~kSendCookie);
  } while (sends_.count(pc));
  sends_[pc] = SendRef{slot, sd.sock, sd.cookie};
  sd.sock = static_cast<std::uint16_t>(ps);
  sd.addr = pa;
  sd.cookie = pc;
  v.sendq.push_back(PendingSend{sd, arrivals_++});
}

// ---- QoS dispatcher: virtual SendQs -> physical SendQ ----

void VirtualToeManager::dispatch(Ctx& ctx) {
  for (std::size_t i = 0; i < vtoes_.size(); ++i) {
    const auto& q = vtoes_[i].sendq;
    heads_[i] = q.empty() ? toe::QueueHead{}
                          : toe::QueueHead{false, q.front().desc.length, q.front().arrival};
  }
  while (in_flight_ < params_.depth) {
    const int q = policy_->pick(heads_);
    if (q < 0) break;
    Vtoe& v = vtoes_[static_cast<std::size_t>(q)];
    const PendingSend ps = v.sendq.front();
    v.sendq.pop_front();
    policy_->served(q, ps.desc.length);
    hyp_.spend(ctx, hyp_.costs().dispatch, v.vm);
    post(ctx, Ring::Send, &ps.desc, v.vm);
    ++in_flight_;
    heads_[static_cast<std::size_t>(q)] =
        v.sendq.empty()
            ? toe::QueueHead{}
            : toe::QueueHead{false, v.sendq.front().desc.length, v.sendq.front().arrival};
  }
}

// ---- Virtual ECQ ----

void VirtualToeManager::deliver(Vtoe& v, const EcqDesc& ev) {
  VRing& e = v.ring[static_cast<int>(Ring::Ecq)];
  if (e.size < 2 || e.ipa == 0) return;  // the guest has no ECQ: nobody to tell
  const std::uint32_t used = (e.tail - e.head) & (e.size - 1);
  if (used == e.size - 1 || !v.ecq_overflow.empty()) {
    ++ecq_overflows_;
    v.ecq_overflow.push_back(ev);
    return;
  }
  EcqDesc out = ev;
  out.valid = 1;
  if (!guest_write(v.vm, e.ipa + static_cast<std::uint64_t>(e.tail) * toe::kDescBytes, &out,
                   sizeof out)) {
    v.status |= 1;
    return;
  }
  e.tail = (e.tail + 1) & (e.size - 1);
  ++forwarded_;
}

bool VirtualToeManager::flush_overflow(Vtoe& v) {
  bool moved = false;
  while (!v.ecq_overflow.empty()) {
    VRing& e = v.ring[static_cast<int>(Ring::Ecq)];
    if (((e.tail - e.head) & (e.size - 1)) == e.size - 1) break;
    EcqDesc ev = v.ecq_overflow.front();
    v.ecq_overflow.pop_front();
    deliver(v, ev);
    moved = true;
  }
  return moved;
}

// ---- Physical interrupt: completions back to their VMs ----

void VirtualToeManager::handle_interrupt(Ctx& ctx) {
  if (!started_) return;
  const std::uint32_t mask = params_.ring_entries - 1;
  std::vector<bool> notify(vtoes_.size(), false);
  int first_vm = -1;
  for (;;) {
    EcqDesc ev;
    const std::uint64_t at =
        ring_pa_[static_cast<int>(Ring::Ecq)] + std::uint64_t{ecq_head_} * toe::kDescBytes;
    dram_.read(at, &ev, sizeof ev);
    if (!ev.valid) break;
    ev.valid = 0;
    dram_.write(at, &ev, sizeof ev);
    ecq_head_ = (ecq_head_ + 1) & mask;
    auto it = psocks_.find(ev.sock);
    const auto type = static_cast<EventType>(ev.type);
    if ((type == EventType::SendDone || type == EventType::Error) && (ev.cookie & kSendCookie)) {
      if (in_flight_ > 0) --in_flight_;
      auto s = sends_.find(ev.cookie);
      if (s == sends_.end()) continue;
      ev.cookie = s->second.vcookie;
      sends_.erase(s);
    }
    if (it == psocks_.end()) continue;  // a socket the guest no longer has
    Psock& p = it->second;
    Vtoe& v = vtoes_[static_cast<std::size_t>(p.slot)];
    if (first_vm < 0) first_vm = v.vm;
    hyp_.spend(ctx, hyp_.costs().ecq_forward, v.vm);
    ev.sock = p.vsock;
    switch (type) {
      case EventType::Accepted: {
        auto l = psocks_.find(ev.arg);
        ev.arg = l == psocks_.end() ? 0 : l->second.vsock;
        p.established = true;
        break;
      }
      case EventType::Connected:
      case EventType::CmdDone:
        p.established = true;
        break;
      case EventType::Closed:
        psock_of_.erase({p.slot, p.vsock});
        psocks_.erase(it);
        break;
      case EventType::Error:
        if (!p.established && !(ev.cookie & kSendCookie)) {
          psock_of_.erase({p.slot, p.vsock});
          psocks_.erase(it);
        }
        break;
      default:
        break;
    }
    deliver(v, ev);
    notify[static_cast<std::size_t>(&v - vtoes_.data())] = true;
  }
  const int charge = first_vm >= 0 ? first_vm : vtoes_.front().vm;
  phys_write(ctx, ring_reg(Ring::Ecq, reg::kRingHead), ecq_head_, charge);
  dispatch(ctx);
  for (std::size_t i = 0; i < vtoes_.size(); ++i) {
    if (!notify[i]) continue;
    hyp_.spend(ctx, hyp_.costs().vgic_inject, vtoes_[i].vm);
    hyp_.inject(vtoes_[i].vm);
  }
}

// ---- Driving the physical channel ----

void VirtualToeManager::phys_write(Ctx& ctx, std::uint64_t offset, std::uint32_t value,
                                   int charge_vm) {
  hyp_.device_access(ctx, true, params_.channel_regs_pa + offset, value, charge_vm);
}

void VirtualToeManager::ensure_started(Ctx& ctx, int charge_vm) {
  if (started_) return;
  started_ = true;
  std::vector<std::uint8_t> zero(static_cast<std::size_t>(params_.ring_entries) * toe::kDescBytes,
                                 0);
  for (int r = 0; r < toe::kRings; ++r) {
    dram_.write(ring_pa_[r], zero.data(), zero.size());
    phys_write(ctx, ring_reg(static_cast<Ring>(r), reg::kRingSize), params_.ring_entries,
               charge_vm);
    phys_write(ctx, ring_reg(static_cast<Ring>(r), reg::kRingAddrLo),
               static_cast<std::uint32_t>(ring_pa_[r]), charge_vm);
    phys_write(ctx, ring_reg(static_cast<Ring>(r), reg::kRingAddrHi),
               static_cast<std::uint32_t>(ring_pa_[r] >> 32), charge_vm);
  }
  phys_write(ctx, reg::kCtrl, reg::kCtrlEnable | reg::kCtrlIrqEnable, charge_vm);
}

void VirtualToeManager::post(Ctx& ctx, Ring ring, const void* desc, int charge_vm) {
  const int r = static_cast<int>(ring);
  const std::uint32_t mask = params_.ring_entries - 1;
  // The physical rings are large and sends are bounded by `depth`; if one is full all the same,
  // wait for the TOE to take contexts (it always does).
  for (;;) {
    std::uint32_t head = 0;
    if (((tail_[r] + 1) & mask) != phys_head_[r]) break;
    hyp_.device_access(ctx, false, params_.channel_regs_pa + ring_reg(ring, reg::kRingHead), head,
                       charge_vm);
    phys_head_[r] = head;
    if (((tail_[r] + 1) & mask) != phys_head_[r]) break;
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
  }
  dram_.write(ring_pa_[r] + std::uint64_t{tail_[r]} * toe::kDescBytes, desc, toe::kDescBytes);
  tail_[r] = (tail_[r] + 1) & mask;
  phys_write(ctx, ring_reg(ring, reg::kRingTail), tail_[r], charge_vm);
}

}  // namespace vtoe::hypervisor
