// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "base/event_loop.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace vrnicd {

EventLoop::EventLoop() : epfd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epfd_) {
    LOG_ERR("epoll_create1: %s", std::strerror(errno));
  }
}

bool EventLoop::add(int fd, uint32_t events, Handler handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    LOG_ERR("epoll_ctl(ADD, %d): %s", fd, std::strerror(errno));
    return false;
  }
  handlers_[fd] = std::make_shared<Handler>(std::move(handler));
  return true;
}

bool EventLoop::modify(int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epfd_.get(), EPOLL_CTL_MOD, fd, &ev) != 0) {
    LOG_ERR("epoll_ctl(MOD, %d): %s", fd, std::strerror(errno));
    return false;
  }
  return true;
}

void EventLoop::remove(int fd) {
  if (handlers_.erase(fd) != 0) {
    ::epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  }
}

int EventLoop::add_timer(uint32_t period_ms, std::function<void()> cb) {
  UniqueFd tfd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!tfd) {
    LOG_ERR("timerfd_create: %s", std::strerror(errno));
    return -1;
  }
  itimerspec its{};
  its.it_interval.tv_sec = period_ms / 1000;
  its.it_interval.tv_nsec = static_cast<long>(period_ms % 1000) * 1000000L;
  its.it_value = its.it_interval;
  if (::timerfd_settime(tfd.get(), 0, &its, nullptr) != 0) {
    LOG_ERR("timerfd_settime: %s", std::strerror(errno));
    return -1;
  }
  const int id = tfd.get();
  if (!add(id, EPOLLIN, [id, cb = std::move(cb)](uint32_t /*events*/) {
        uint64_t expirations = 0;
        if (::read(id, &expirations, sizeof(expirations)) ==
            static_cast<ssize_t>(sizeof(expirations))) {
          cb();
        }
      })) {
    return -1;
  }
  timers_[id] = std::move(tfd);
  return id;
}

void EventLoop::remove_timer(int id) {
  remove(id);
  timers_.erase(id);
}

bool EventLoop::run_once(int timeout_ms) {
  return run_once_for(timeout_ms < 0 ? std::chrono::microseconds(-1)
                                     : std::chrono::milliseconds(timeout_ms));
}

bool EventLoop::run_once_for(std::chrono::microseconds timeout) {
  if (stopped_) {
    return false;
  }
  std::array<epoll_event, 32> events{};
  timespec ts{};
  const bool forever = timeout.count() < 0;
  if (!forever) {
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1000000);
    ts.tv_nsec = static_cast<long>(timeout.count() % 1000000) * 1000;
  }
  const int n = ::epoll_pwait2(epfd_.get(), events.data(), static_cast<int>(events.size()),
                               forever ? nullptr : &ts, nullptr);
  if (n < 0) {
    if (errno != EINTR) {
      LOG_ERR("epoll_pwait2: %s", std::strerror(errno));
      stopped_ = true;
    }
    return !stopped_;
  }
  for (int i = 0; i < n && !stopped_; ++i) {
    auto it = handlers_.find(events[i].data.fd);
    if (it == handlers_.end()) {
      continue;  // removed by an earlier handler in this batch
    }
    // Hold a reference: the handler may remove itself.
    const std::shared_ptr<Handler> h = it->second;
    (*h)(events[i].events);
  }
  return !stopped_;
}

void EventLoop::run() {
  while (run_once(-1)) {
  }
}

}  // namespace vrnicd
