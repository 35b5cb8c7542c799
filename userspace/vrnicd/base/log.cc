// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "base/log.h"

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace vrnicd {
namespace {

LogLevel g_level = LogLevel::kInfo;
std::FILE* g_file = nullptr;
std::array<char, 32> g_tag{"vrnicd"};

// Guest errors: at most kGuestBurst lines per kGuestWindow.
constexpr int kGuestBurst = 20;
constexpr auto kGuestWindow = std::chrono::seconds(5);
std::chrono::steady_clock::time_point g_guest_window_start;
int g_guest_count = 0;
int g_guest_suppressed = 0;

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
}

void vlog(LogLevel level, const char* fmt, va_list ap) {
  std::FILE* out = g_file != nullptr ? g_file : stderr;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm tm{};
  localtime_r(&ts.tv_sec, &tm);
  std::array<char, 16> tbuf{};
  std::strftime(tbuf.data(), tbuf.size(), "%H:%M:%S", &tm);
  std::fprintf(out, "%s.%03ld %s %s: ", tbuf.data(), ts.tv_nsec / 1000000, g_tag.data(),
               level_name(level));
  std::vfprintf(out, fmt, ap);
  std::fputc('\n', out);
  std::fflush(out);
}

}  // namespace

void log_set_level(LogLevel level) noexcept { g_level = level; }
LogLevel log_level() noexcept { return g_level; }

void log_set_tag(const char* tag) noexcept { std::snprintf(g_tag.data(), g_tag.size(), "%s", tag); }

void log_close_file() noexcept {
  if (g_file != nullptr) {
    std::fclose(g_file);
    g_file = nullptr;
  }
}

bool log_open_file(const char* path) noexcept {
  std::FILE* f = std::fopen(path, "a");
  if (f == nullptr) {
    return false;
  }
  if (g_file != nullptr) {
    std::fclose(g_file);
  }
  g_file = f;
  return true;
}

void log_msg(LogLevel level, const char* fmt, ...) noexcept {
  if (level > g_level) {
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vlog(level, fmt, ap);
  va_end(ap);
}

void log_guest_error(const char* fmt, ...) noexcept {
  auto now = std::chrono::steady_clock::now();
  if (now - g_guest_window_start > kGuestWindow) {
    if (g_guest_suppressed > 0) {
      log_msg(LogLevel::kWarn, "guest error: %d more suppressed", g_guest_suppressed);
    }
    g_guest_window_start = now;
    g_guest_count = 0;
    g_guest_suppressed = 0;
  }
  if (++g_guest_count > kGuestBurst) {
    ++g_guest_suppressed;
    return;
  }
  if (LogLevel::kWarn > g_level) {
    return;
  }
  std::array<char, 512> buf{};
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf.data(), buf.size(), fmt, ap);
  va_end(ap);
  log_msg(LogLevel::kWarn, "guest error: %s", buf.data());
}

void log_guest_error_new_window() noexcept {
  g_guest_window_start = std::chrono::steady_clock::now();
  g_guest_count = 0;
  g_guest_suppressed = 0;
}

}  // namespace vrnicd
