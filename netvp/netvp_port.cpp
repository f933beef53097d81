#include "netvp/netvp_port.h"

namespace vtoe::netvp {

NetvpPort::NetvpPort(const sc_core::sc_module_name& name, RawSocket& socket)
    : core::Module(name),
      in("in"),
      out("out"),
      socket_(socket),
      to_wire_(stats_.counter("frames_to_wire", "frames sent on the real interface")),
      from_wire_(stats_.counter("frames_from_wire", "frames taken from the real interface")),
      send_errors_(stats_.counter("send_errors", "frames the kernel refused to send")) {
  in.bind(*this);
}

void NetvpPort::receive_frame(net::Frame&& frame) {
  if (pcap_) pcap_->write(frame.data(), frame.size(), core::now_ps());
  if (socket_.send(frame.data(), frame.size()))
    ++to_wire_;
  else
    ++send_errors_;
}

void NetvpPort::poll() {
  batch_.clear();
  socket_.drain(batch_);
  for (auto& f : batch_) {
    ++from_wire_;
    if (pcap_) pcap_->write(f.data(), f.size(), core::now_ps());
    out->receive_frame(std::move(f));
  }
}

}  // namespace vtoe::netvp
