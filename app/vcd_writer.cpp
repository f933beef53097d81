#include "app/vcd_writer.h"

#include <algorithm>
#include <stdexcept>

namespace vtoe::app {

namespace {

// VCD identifier codes: printable ASCII '!'..'~', as a base-94 number.
std::string code_of(std::size_t index) {
  std::string code;
  do {
    code += static_cast<char>('!' + index % 94);
    index /= 94;
  } while (index != 0);
  return code;
}

std::vector<std::string> split_dots(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = name.find('.', from);
    parts.push_back(name.substr(from, dot - from));
    if (dot == std::string::npos) return parts;
    from = dot + 1;
  }
}

}  // namespace

VcdWriter::VcdWriter(const std::string& path, VcdBounds bounds)
    : path_(path), bounds_(bounds), out_(path, std::ios::binary | std::ios::trunc) {
  if (!out_) throw std::runtime_error("--vcd " + path + ": cannot create the file");
}

VcdWriter::~VcdWriter() {
  if (!closed_ && out_.is_open()) out_.close();
}

std::size_t VcdWriter::add(const std::string& name, unsigned width) {
  if (header_written_) throw std::logic_error("VcdWriter::add(" + name + ") after the first value");
  // VCD words end at white space: a scenario's VM name with a space would split the declaration.
  std::string word = name;
  for (char& ch : word)
    if (static_cast<unsigned char>(ch) <= ' ') ch = '_';
  vars_.push_back({word, code_of(vars_.size()), std::max(width, 1u)});
  return vars_.size() - 1;
}

bool VcdWriter::in_window(std::uint64_t time_ps) const {
  return time_ps >= bounds_.from_ps && (bounds_.to_ps == 0 || time_ps < bounds_.to_ps);
}

void VcdWriter::write_header() {
  header_written_ = true;
  std::string h = "$comment vtoe run --vcd $end\n$timescale 1 ns $end\n$scope module vtoe $end\n";
  // Scopes from the dotted names, in name order, so that the file does not depend on the order
  // the probe declared them in.
  std::vector<std::size_t> order(vars_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [this](std::size_t a, std::size_t b) { return vars_[a].name < vars_[b].name; });
  std::vector<std::string> scope;
  for (std::size_t i : order) {
    std::vector<std::string> parts = split_dots(vars_[i].name);
    const std::string leaf = parts.back();
    parts.pop_back();
    std::size_t common = 0;
    while (common < scope.size() && common < parts.size() && scope[common] == parts[common])
      ++common;
    for (; scope.size() > common; scope.pop_back()) h += "$upscope $end\n";
    for (; scope.size() < parts.size(); scope.push_back(parts[scope.size()]))
      h += "$scope module " + parts[scope.size()] + " $end\n";
    h += "$var wire " + std::to_string(vars_[i].width) + " " + vars_[i].code + " " + leaf +
         " $end\n";
  }
  for (; !scope.empty(); scope.pop_back()) h += "$upscope $end\n";
  h += "$upscope $end\n$enddefinitions $end\n";
  out_ << h;  // always written: without it the file is no VCD; it counts towards the bound
  bytes_ += h.size();
}

std::string VcdWriter::value_line(const Var& v) const {
  if (v.width == 1) return (v.value & 1 ? "1" : "0") + v.code + "\n";
  std::string bits;
  for (std::uint64_t x = v.value; x != 0; x >>= 1) bits += static_cast<char>('0' + (x & 1));
  if (bits.empty()) bits = "0";
  std::reverse(bits.begin(), bits.end());
  return "b" + bits + " " + v.code + "\n";
}

std::string VcdWriter::time_line(std::uint64_t time_ps) {
  const std::uint64_t ns = time_ps / 1000;
  if (any_time_ && ns == last_ns_) return "";
  return "#" + std::to_string(ns) + "\n";
}

bool VcdWriter::emit(const std::string& text, std::uint64_t time_ps) {
  if (full_) return false;
  if (bounds_.max_bytes != 0 && bytes_ + text.size() > bounds_.max_bytes) {
    full_ = true;
    full_at_ps_ = time_ps;
    return false;
  }
  out_ << text;
  bytes_ += text.size();
  if (!text.empty() && text[0] == '#') {
    last_ns_ = time_ps / 1000;
    any_time_ = true;
  }
  return true;
}

void VcdWriter::open_window() {
  window_open_ = true;
  std::string text = time_line(bounds_.from_ps) + "$dumpvars\n";
  for (const Var& v : vars_) text += value_line(v);
  text += "$end\n";
  if (emit(text, bounds_.from_ps)) {
    for (Var& v : vars_) v.written = v.value;
  } else {
    left_out_ += vars_.size();
  }
}

void VcdWriter::set(std::uint64_t time_ps, std::size_t id, std::uint64_t value) {
  Var& v = vars_.at(id);
  if (v.width < 64) value &= (std::uint64_t{1} << v.width) - 1;
  if (!header_written_) write_header();
  // The values before the window's first change are the ones at its start.
  if (!window_open_ && time_ps >= bounds_.from_ps) open_window();
  if (value == v.value) return;
  v.value = value;
  if (!in_window(time_ps)) return;
  if (full_) {
    ++left_out_;
    return;
  }
  if (emit(time_line(time_ps) + value_line(v), time_ps))
    v.written = value;
  else
    ++left_out_;
}

void VcdWriter::close(std::uint64_t end_ps) {
  if (closed_) return;
  if (!header_written_) write_header();
  if (!window_open_ && end_ps > bounds_.from_ps) open_window();
  const std::uint64_t last = bounds_.to_ps ? std::min(end_ps, bounds_.to_ps) : end_ps;
  if (window_open_ && last > bounds_.from_ps) {
    const std::string stamp = time_line(last);
    if (!stamp.empty()) emit(stamp, last);  // one that does not fit leaves no change out
  }
  out_.close();
  closed_ = true;
  if (!out_) throw std::runtime_error("--vcd " + path_ + ": cannot write the file");
}

}  // namespace vtoe::app
