// A Value Change Dump (IEEE 1364, for GTKWave) with bounds, for `vtoe run --vcd`: it writes only
// the changes inside a window of simulated time, and stops at a size in bytes, remembering where
// and how many changes it left out so that the run can say so. Plain C++: the waveform probe
// (app/waveform.h) feeds it the values it reads.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace vtoe::app {

struct VcdBounds {
  /// The window of simulated time, in ps: changes at or after `from_ps` and before `to_ps`
  /// (0: the end of the run). The file opens the window with every variable's value at `from_ps`.
  std::uint64_t from_ps = 0, to_ps = 0;
  /// The file's size at most, declarations included (0: no bound).
  std::uint64_t max_bytes = 256ull << 20;
};

class VcdWriter {
 public:
  /// Creates FILE; throws std::runtime_error naming it when it cannot.
  VcdWriter(const std::string& path, VcdBounds bounds);
  ~VcdWriter();
  VcdWriter(const VcdWriter&) = delete;
  VcdWriter& operator=(const VcdWriter&) = delete;

  /// Declares a variable before the first value: a dotted name ("gic.irq": variable `irq` in
  /// scope `gic`) and its width in bits (1: a scalar). Returns the id `set` takes.
  std::size_t add(const std::string& name, unsigned width);
  /// Variable `id` holds `value` (the low `width` bits) from `time_ps` on; times never decrease.
  void set(std::uint64_t time_ps, std::size_t id, std::uint64_t value);
  /// Ends the file at `end_ps` (a last time stamp, so that a viewer shows the whole span).
  void close(std::uint64_t end_ps);

  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t max_bytes() const { return bounds_.max_bytes; }
  /// Changes inside the window that the size bound left out; 0 while it has not been reached.
  std::uint64_t left_out() const { return left_out_; }
  /// When the bound was reached, ps of simulated time (meaningful when left_out() > 0).
  std::uint64_t full_at_ps() const { return full_at_ps_; }

 private:
  struct Var {
    std::string name, code;
    unsigned width;
    std::uint64_t value = 0;    // the value now
    std::uint64_t written = 0;  // the value the file shows
  };
  bool in_window(std::uint64_t time_ps) const;
  void write_header();
  void open_window();
  std::string value_line(const Var& v) const;
  std::string time_line(std::uint64_t time_ps);
  // Writes `text` unless it would pass the bound; false (and the file full from then on) if so.
  bool emit(const std::string& text, std::uint64_t time_ps);

  std::string path_;
  VcdBounds bounds_;
  std::ofstream out_;
  std::vector<Var> vars_;
  bool header_written_ = false, window_open_ = false, full_ = false, closed_ = false;
  std::uint64_t bytes_ = 0, left_out_ = 0, full_at_ps_ = 0;
  std::uint64_t last_ns_ = 0;
  bool any_time_ = false;  // a time stamp has been written
};

}  // namespace vtoe::app
