// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device's single dispatch thread: an epoll loop over file descriptors
// and periodic timers.  Everything in vrnicd that touches device state runs
// on this thread (functions that must are marked with an _st suffix).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "base/fd.h"

namespace vrnicd {

class EventLoop {
 public:
  using Handler = std::function<void(uint32_t events)>;

  EventLoop();
  ~EventLoop() = default;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  EventLoop(EventLoop&&) = delete;
  EventLoop& operator=(EventLoop&&) = delete;

  [[nodiscard]] bool valid() const noexcept { return epfd_.valid(); }

  // Watch fd for events (EPOLLIN etc.); the handler gets the event mask.
  bool add(int fd, uint32_t events, Handler handler);
  // Change the events a watched fd is watched for.
  bool modify(int fd, uint32_t events);
  void remove(int fd);

  // Run a callback every period_ms milliseconds; returns a timer id.
  int add_timer(uint32_t period_ms, std::function<void()> cb);
  void remove_timer(int id);

  // Dispatch ready events, waiting at most timeout_ms (-1: forever).
  // Returns false when the loop was stopped.
  bool run_once(int timeout_ms);
  // The same with a finer timeout (negative: forever).
  bool run_once_for(std::chrono::microseconds timeout);
  void run();
  void stop() noexcept { stopped_ = true; }
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }

 private:
  UniqueFd epfd_;
  std::unordered_map<int, std::shared_ptr<Handler>> handlers_;
  std::unordered_map<int, UniqueFd> timers_;
  bool stopped_ = false;
};

}  // namespace vrnicd
