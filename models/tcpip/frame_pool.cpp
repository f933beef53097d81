#include "models/tcpip/frame_pool.h"

#include <utility>
#include <vector>

namespace vtoe::tcpip {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPooling = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPooling = false;
#else
constexpr bool kPooling = true;
#endif
#else
constexpr bool kPooling = true;
#endif

constexpr std::size_t kMaxPooled = 1024;   // buffers kept per thread
constexpr std::size_t kMinCapacity = 256;  // smaller ones are cheap to allocate

std::vector<Frame>& pool() {
  thread_local std::vector<Frame> frames;
  return frames;
}

}  // namespace

Frame FramePool::take(std::size_t len) {
  auto& frames = pool();
  if (!kPooling || frames.empty()) return Frame(len, 0);
  Frame f = std::move(frames.back());
  frames.pop_back();
  f.assign(len, 0);
  return f;
}

Frame FramePool::take_for_overwrite(std::size_t len) {
  auto& frames = pool();
  if (!kPooling || frames.empty()) return Frame(len, 0);
  Frame f = std::move(frames.back());
  frames.pop_back();
  f.resize(len);  // zero-fills only what the buffer held no bytes for before
  return f;
}

void FramePool::give(Frame&& frame) {
  if (!kPooling || frame.capacity() < kMinCapacity) return;
  auto& frames = pool();
  if (frames.size() >= kMaxPooled) return;
  frame.checksums_valid = false;  // its bytes stay: take() fills them, take_for_overwrite() not
  frames.push_back(std::move(frame));
}

}  // namespace vtoe::tcpip
