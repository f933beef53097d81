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
// Buffers are kept apart by the size of the frame they last held: a full-size segment taken
// for overwrite from one that held an ACK would have its vector zero-fill the bytes it grows by
// (about 1,400 of them) just before every one is written.
constexpr std::size_t kLargeFrame = 1024;

struct Pool {
  std::vector<Frame> large;  // last held a frame of kLargeFrame bytes or more
  std::vector<Frame> small;
};

Pool& pool() {
  thread_local Pool frames;
  return frames;
}

// The list to take a buffer for a frame of `len` bytes from: the one of its size class, or the
// other when that one is empty.
std::vector<Frame>& list_for(Pool& p, std::size_t len) {
  std::vector<Frame>& mine = len >= kLargeFrame ? p.large : p.small;
  if (!mine.empty()) return mine;
  return len >= kLargeFrame ? p.small : p.large;
}

}  // namespace

Frame FramePool::take(std::size_t len) {
  std::vector<Frame>& frames = list_for(pool(), len);
  if (!kPooling || frames.empty()) return Frame(len, 0);
  Frame f = std::move(frames.back());
  frames.pop_back();
  f.assign(len, 0);
  return f;
}

Frame FramePool::take_for_overwrite(std::size_t len) {
  std::vector<Frame>& frames = list_for(pool(), len);
  if (!kPooling || frames.empty()) return Frame(len, 0);
  Frame f = std::move(frames.back());
  frames.pop_back();
  f.resize(len);  // zero-fills only what the buffer held no bytes for before
  return f;
}

void FramePool::give(Frame&& frame) {
  if (!kPooling || frame.capacity() < kMinCapacity) return;
  Pool& p = pool();
  if (p.large.size() + p.small.size() >= kMaxPooled) return;
  frame.checksums_valid = false;  // its bytes stay: take() fills them, take_for_overwrite() not
  (frame.size() >= kLargeFrame ? p.large : p.small).push_back(std::move(frame));
}

}  // namespace vtoe::tcpip
