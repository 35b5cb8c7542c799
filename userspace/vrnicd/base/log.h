// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd logging: printf-style, levelled, to stderr or a file.
#pragma once

#include <cstdarg>
#include <cstdint>

namespace vrnicd {

enum class LogLevel : uint8_t { kError = 0, kWarn, kInfo, kDebug };

void log_set_level(LogLevel level) noexcept;
LogLevel log_level() noexcept;
// Prefix every line with this tag (e.g. "vrnicd0").
void log_set_tag(const char* tag) noexcept;
bool log_open_file(const char* path) noexcept;
// Back to stderr.
void log_close_file() noexcept;

void log_msg(LogLevel level, const char* fmt, ...) noexcept __attribute__((format(printf, 2, 3)));

// A guest-caused error: logged at warning level but rate limited, so a
// hostile guest cannot flood the log.
void log_guest_error(const char* fmt, ...) noexcept __attribute__((format(printf, 1, 2)));
// Start a new rate-limit window for guest errors now (for tests, which
// must not depend on what the tests before them logged).
void log_guest_error_new_window() noexcept;

}  // namespace vrnicd

#define LOG_ERR(...) ::vrnicd::log_msg(::vrnicd::LogLevel::kError, __VA_ARGS__)
#define LOG_WARN(...) ::vrnicd::log_msg(::vrnicd::LogLevel::kWarn, __VA_ARGS__)
#define LOG_INFO(...) ::vrnicd::log_msg(::vrnicd::LogLevel::kInfo, __VA_ARGS__)
#define LOG_DBG(...)                                              \
  do {                                                            \
    if (::vrnicd::log_level() >= ::vrnicd::LogLevel::kDebug) {    \
      ::vrnicd::log_msg(::vrnicd::LogLevel::kDebug, __VA_ARGS__); \
    }                                                             \
  } while (0)
