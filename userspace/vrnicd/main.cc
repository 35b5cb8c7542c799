// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd: the vrnic soft RNIC.  One process is one device, attached to one
// QEMU through ivshmem-doorbell.
#include <getopt.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "bar2.h"
#include "config.h"
#include "device.h"
#include "eth_port.h"
#include "event_loop.h"
#include "guest_memory.h"
#include "info_file.h"
#include "ivshmem_server.h"
#include "log.h"

namespace vrnicd {
namespace {

struct Options {
  std::string socket_path;
  std::string guest_mem_path;
  uint64_t guest_mem_size = 0;
  EthPort::Options port;
  std::string info_file;
  std::string log_file;
  size_t bar_size = Bar2::kDefaultSize;
  // Measured on a 2-core TCG host with two busy vCPUs: spinning steals
  // the core a vCPU needs, and ticks under ~15 us make vrnicd a CPU hog
  // that the host scheduler punishes; 25 us ticks and no spin give the
  // best ping-pong latency (see make bench).
  uint32_t poll_us = 0;
  uint32_t doze_us = 20000;
  uint32_t doze_tick_us = 25;
  DeviceConfig dev;
};

void usage(std::FILE* out) {
  std::fputs(
      "Usage: vrnicd --socket PATH --guest-mem PATH [OPTIONS]\n"
      "\n"
      "The vrnic soft RNIC: serves one QEMU ivshmem-doorbell device and\n"
      "performs DMA into the guest RAM shared through memory-backend-file.\n"
      "\n"
      "Required:\n"
      "  -s, --socket PATH         ivshmem server socket (QEMU: -chardev socket,path=PATH)\n"
      "  -m, --guest-mem PATH      the guest's memory-backend-file (share=on)\n"
      "\n"
      "Options:\n"
      "      --guest-mem-size SIZE guest RAM size in bytes, or with K/M/G suffix\n"
      "                            (default: the size of the file)\n"
      "      --mac MAC             permanent MAC of port 1 (default 02:00:00:00:00:01);\n"
      "                            give the guest's NIC the same MAC\n"
      "      --nic-socket PATH     listen for the guest NIC (QEMU: -netdev\n"
      "                            stream,addr.type=unix,addr.path=PATH,server=off)\n"
      "      --wire-listen PATH    Ethernet port: listen on PATH for the link partner\n"
      "                            (another vrnicd, or QEMU -netdev stream,server=off)\n"
      "      --wire-connect PATH   Ethernet port: connect to the partner listening on\n"
      "                            PATH, and reconnect whenever the link is lost;\n"
      "                            with either, the cable is up while linked\n"
      "      --pcap FILE           write every frame on the wire to FILE (pcap)\n"
      "      --drop P              drop a received frame with probability P (0..1)\n"
      "      --reorder P           hold a received frame back behind the next one\n"
      "      --dup P               deliver a received frame twice\n"
      "      --corrupt P           flip a byte of a received frame (RoCEv2: past the\n"
      "                            BTH, so the ICRC check fails; others: dropped)\n"
      "      --seed N              seed for the faults above (default 1)\n"
      "      --vectors N           MSI-X vectors; must equal QEMU's vectors= (default 4)\n"
      "      --limit NAME=VALUE    override a device limit, e.g. max_qp=256\n"
      "      --link-down           start with the port's cable unplugged\n"
      "      --poll-us US          poll queues continuously this long after the last\n"
      "                            work (default 0)\n"
      "      --doze-us US          then poll them every --doze-tick-us until this long\n"
      "                            after the last work, before sleeping until a\n"
      "                            doorbell (default 20000)\n"
      "      --doze-tick-us US     (default 25)\n"
      "      --bar-size BYTES      BAR2 size, a power of two (default 1 MiB)\n"
      "      --info-file PATH      write the device's identity and limits to PATH\n"
      "      --log-file PATH       log to PATH instead of stderr\n"
      "      --log-level LEVEL     error, warn, info (default) or debug\n"
      "      --tag NAME            name used in log lines (default vrnicd)\n"
      "  -h, --help                show this help\n"
      "\n"
      "SIGTERM or SIGINT: tell the driver the device is gone, then exit.\n",
      out);
}

bool parse_size(std::string_view s, uint64_t* out) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) {
    return false;
  }
  const std::string_view suffix(p, static_cast<size_t>(s.data() + s.size() - p));
  int shift = 0;
  if (suffix == "K" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (!suffix.empty()) {
    return false;
  }
  if (shift > 0 && v > (UINT64_MAX >> shift)) {
    return false;
  }
  *out = v << shift;
  return true;
}

bool parse_probability(std::string_view s, double* out) {
  const std::string str(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(str.c_str(), &end);
  if (str.empty() || errno != 0 || end != str.c_str() + str.size() || !(v >= 0 && v <= 1)) {
    return false;
  }
  *out = v;
  return true;
}

bool parse_u32(std::string_view s, uint32_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

enum LongOpt : int {
  kOptGuestMemSize = 256,
  kOptMac,
  kOptNicSocket,
  kOptWireListen,
  kOptWireConnect,
  kOptPcap,
  kOptDrop,
  kOptReorder,
  kOptDup,
  kOptCorrupt,
  kOptSeed,
  kOptVectors,
  kOptLimit,
  kOptLinkDown,
  kOptPollUs,
  kOptDozeUs,
  kOptDozeTickUs,
  kOptBarSize,
  kOptInfoFile,
  kOptLogFile,
  kOptLogLevel,
  kOptTag,
};

// Returns 0 to continue, otherwise an exit status + 1.
int parse_options(int argc, char** argv, Options* o) {
  static const option kLong[] = {
      {"socket", required_argument, nullptr, 's'},
      {"guest-mem", required_argument, nullptr, 'm'},
      {"guest-mem-size", required_argument, nullptr, kOptGuestMemSize},
      {"mac", required_argument, nullptr, kOptMac},
      {"nic-socket", required_argument, nullptr, kOptNicSocket},
      {"wire-listen", required_argument, nullptr, kOptWireListen},
      {"wire-connect", required_argument, nullptr, kOptWireConnect},
      {"pcap", required_argument, nullptr, kOptPcap},
      {"drop", required_argument, nullptr, kOptDrop},
      {"reorder", required_argument, nullptr, kOptReorder},
      {"dup", required_argument, nullptr, kOptDup},
      {"corrupt", required_argument, nullptr, kOptCorrupt},
      {"seed", required_argument, nullptr, kOptSeed},
      {"vectors", required_argument, nullptr, kOptVectors},
      {"limit", required_argument, nullptr, kOptLimit},
      {"link-down", no_argument, nullptr, kOptLinkDown},
      {"poll-us", required_argument, nullptr, kOptPollUs},
      {"doze-us", required_argument, nullptr, kOptDozeUs},
      {"doze-tick-us", required_argument, nullptr, kOptDozeTickUs},
      {"bar-size", required_argument, nullptr, kOptBarSize},
      {"info-file", required_argument, nullptr, kOptInfoFile},
      {"log-file", required_argument, nullptr, kOptLogFile},
      {"log-level", required_argument, nullptr, kOptLogLevel},
      {"tag", required_argument, nullptr, kOptTag},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  int c = 0;
  while ((c = getopt_long(argc, argv, "s:m:h", kLong, nullptr)) != -1) {
    const std::string_view arg = optarg != nullptr ? optarg : "";
    switch (c) {
      case 's':
        o->socket_path = arg;
        break;
      case 'm':
        o->guest_mem_path = arg;
        break;
      case kOptGuestMemSize:
        if (!parse_size(arg, &o->guest_mem_size)) {
          std::fprintf(stderr, "vrnicd: bad --guest-mem-size '%s'\n", optarg);
          return 3;
        }
        break;
      case kOptMac: {
        auto mac = parse_mac(arg);
        if (!mac || ((*mac)[0] & 1U) != 0) {
          std::fprintf(stderr, "vrnicd: bad --mac '%s' (want a unicast aa:bb:cc:dd:ee:ff)\n",
                       optarg);
          return 3;
        }
        o->dev.mac = *mac;
        break;
      }
      case kOptNicSocket:
        o->port.nic_socket = arg;
        break;
      case kOptWireListen:
        o->port.wire_listen = arg;
        break;
      case kOptWireConnect:
        o->port.wire_connect = arg;
        break;
      case kOptPcap:
        o->port.pcap = arg;
        break;
      case kOptDrop:
      case kOptReorder:
      case kOptDup:
      case kOptCorrupt: {
        double p = -1;
        if (!parse_probability(arg, &p)) {
          std::fprintf(stderr, "vrnicd: bad probability '%s' (want 0..1)\n", optarg);
          return 2;
        }
        (c == kOptDrop      ? o->port.faults.drop
         : c == kOptReorder ? o->port.faults.reorder
         : c == kOptDup     ? o->port.faults.dup
                            : o->port.faults.corrupt) = p;
        break;
      }
      case kOptSeed: {
        auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), o->port.faults.seed);
        if (ec != std::errc() || p != arg.data() + arg.size()) {
          std::fprintf(stderr, "vrnicd: bad --seed '%s'\n", optarg);
          return 2;
        }
        break;
      }
      case kOptVectors:
        if (!parse_u32(arg, &o->dev.num_vectors) || o->dev.num_vectors < 2 ||
            o->dev.num_vectors > 64) {
          std::fprintf(stderr, "vrnicd: --vectors must be 2..64\n");
          return 3;
        }
        break;
      case kOptLimit:
        if (!set_limit(o->dev.limits, arg)) {
          std::fprintf(stderr, "vrnicd: bad --limit '%s'\n", optarg);
          return 3;
        }
        break;
      case kOptLinkDown:
        o->dev.cable_up = false;
        break;
      case kOptPollUs:
        if (!parse_u32(arg, &o->poll_us) || o->poll_us > 1000000) {
          std::fprintf(stderr, "vrnicd: --poll-us must be 0..1000000\n");
          return 3;
        }
        break;
      case kOptDozeUs:
        if (!parse_u32(arg, &o->doze_us) || o->doze_us > 10000000) {
          std::fprintf(stderr, "vrnicd: --doze-us must be 0..10000000\n");
          return 3;
        }
        break;
      case kOptDozeTickUs:
        if (!parse_u32(arg, &o->doze_tick_us) || o->doze_tick_us == 0 || o->doze_tick_us > 100000) {
          std::fprintf(stderr, "vrnicd: --doze-tick-us must be 1..100000\n");
          return 3;
        }
        break;
      case kOptBarSize: {
        uint64_t v = 0;
        if (!parse_size(arg, &v)) {
          std::fprintf(stderr, "vrnicd: bad --bar-size '%s'\n", optarg);
          return 3;
        }
        o->bar_size = v;
        break;
      }
      case kOptInfoFile:
        o->info_file = arg;
        break;
      case kOptLogFile:
        o->log_file = arg;
        break;
      case kOptLogLevel:
        if (arg == "error") {
          log_set_level(LogLevel::kError);
        } else if (arg == "warn") {
          log_set_level(LogLevel::kWarn);
        } else if (arg == "info") {
          log_set_level(LogLevel::kInfo);
        } else if (arg == "debug") {
          log_set_level(LogLevel::kDebug);
        } else {
          std::fprintf(stderr, "vrnicd: bad --log-level '%s'\n", optarg);
          return 3;
        }
        break;
      case kOptTag:
        log_set_tag(optarg);
        break;
      case 'h':
        usage(stdout);
        return 1;
      default:
        usage(stderr);
        return 3;
    }
  }
  if (optind != argc) {
    std::fprintf(stderr, "vrnicd: unexpected argument '%s'\n", argv[optind]);
    return 3;
  }
  if (o->socket_path.empty() || o->guest_mem_path.empty()) {
    std::fprintf(stderr, "vrnicd: --socket and --guest-mem are required (see --help)\n");
    return 3;
  }
  const uint32_t max_eq = o->dev.limits.max_eq;
  if (max_eq < 2 || max_eq > 1024) {
    std::fprintf(stderr, "vrnicd: max_eq must be 2..1024\n");
    return 3;
  }
  return 0;
}

// How the engine waits for work; see "Doorbell suppression" in
// Documentation/hw-spec.rst.
struct PollPolicy {
  std::chrono::microseconds spin;       // poll continuously this long after work
  std::chrono::microseconds doze;       // then poll every tick until this long
  std::chrono::microseconds doze_tick;  // after work; then sleep for a doorbell
};

// The dispatch loop, with three speeds.  After work the engine spins on
// its doorbell records; then it dozes, polling them every tick while
// yielding the CPU (the guest's vCPUs need it: this machine may have as
// few cores as busy threads); only then does it set the asleep flag and
// sleep until a doorbell, a timer or any other event.  While it spins or
// dozes, producers see the flag clear and write no doorbell.
void run_dispatch(EventLoop& loop, Device& dev, const PollPolicy& p) {
  using Clock = std::chrono::steady_clock;
  auto last_work = Clock::now();
  while (!loop.stopped()) {
    if (dev.engine_poll_st()) {
      last_work = Clock::now();
      loop.run_once(0);
      continue;
    }
    const auto idle = Clock::now() - last_work;
    if (idle < p.spin) {
      loop.run_once(0);
      continue;
    }
    if (idle < p.doze) {
      loop.run_once_for(p.doze_tick);
      continue;
    }
    if (!dev.engine_prepare_sleep_st()) {
      last_work = Clock::now();
      continue;
    }
    int timeout_ms = -1;
    const uint64_t deadline = dev.engine_next_deadline_us();
    if (deadline != UINT64_MAX) {
      const uint64_t now = dev.engine().now_us();
      timeout_ms = deadline <= now
                       ? 0
                       : static_cast<int>(std::min<uint64_t>((deadline - now + 999) / 1000, 60000));
    }
    loop.run_once(timeout_ms);
    dev.engine_wake_st();
    // Whatever woke us (a doorbell, a timer, the heartbeat), the next poll
    // says whether there is work; without any, sleep again at once rather
    // than spin and doze for nothing.
    last_work = Clock::now() - p.doze;
  }
}

int run(const Options& o) {
  std::string err;
  auto bar = Bar2::create(o.bar_size, &err);
  if (!bar) {
    LOG_ERR("%s", err.c_str());
    return 1;
  }
  auto mem = GuestMemory::map_file(o.guest_mem_path, o.guest_mem_size, &err);
  if (!mem) {
    LOG_ERR("guest memory: %s", err.c_str());
    return 1;
  }

  EventLoop loop;
  if (!loop.valid()) {
    return 1;
  }

  // The device is created before the server so that the server's callbacks
  // can reach it; the server is its interrupt sink.
  std::unique_ptr<Device> dev;
  IvshmemServer server(loop, bar->fd(), o.dev.num_vectors, VRNIC_DB_NUM_CHANNELS,
                       IvshmemServer::Callbacks{
                           .on_connect = [] {},
                           .on_disconnect = [&dev] { dev->on_disconnect_st(); },
                           .on_doorbell =
                               [&dev](uint32_t ch, uint64_t count) {
                                 if (ch == VRNIC_DB_CHANNEL_CTRL) {
                                   dev->on_ctrl_doorbell_st();
                                 } else if (ch == VRNIC_DB_CHANNEL_ENGINE) {
                                   dev->on_engine_doorbell_st(count);
                                 }
                               },
                       });
  dev = std::make_unique<Device>(o.dev, *bar, *mem, server);
  dev->init_registers_st();

  if (!server.listen(o.socket_path, &err)) {
    LOG_ERR("ivshmem server: %s", err.c_str());
    return 1;
  }

  EthPort port(
      loop, [&dev] { return dev->port().mac(); },
      [&dev](std::span<const std::byte> f) { return dev->engine().receive_frame(f); },
      [&dev](bool up) { dev->set_cable_st(up); });
  if (!port.start(o.port, &err)) {
    LOG_ERR("%s", err.c_str());
    return 1;
  }
  if (port.has_wire()) {
    dev->engine().set_wire([&port](std::span<const std::byte> f) { port.engine_tx(f); });
  }

  loop.add_timer(o.dev.heartbeat_ms, [&dev] { dev->on_heartbeat_st(); });

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  UniqueFd sfd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!sfd) {
    LOG_ERR("signalfd: %s", std::strerror(errno));
    return 1;
  }
  int exit_signal = 0;
  loop.add(sfd.get(), EPOLLIN, [&](uint32_t) {
    signalfd_siginfo si{};
    if (::read(sfd.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
      exit_signal = static_cast<int>(si.ssi_signo);
      loop.stop();
    }
  });

  if (!o.info_file.empty() && !write_info_file(o.info_file, *dev)) {
    LOG_ERR("%s: %s", o.info_file.c_str(), std::strerror(errno));
    return 1;
  }

  LOG_INFO("vrnic device ready: socket %s, guest RAM %s (%llu MiB), MAC %s, %u vectors",
           o.socket_path.c_str(), o.guest_mem_path.c_str(),
           static_cast<unsigned long long>(mem->ram_size() >> 20), format_mac(o.dev.mac).c_str(),
           o.dev.num_vectors);
  // Doze ticks need timer precision finer than the default 50 us slack.
  if (::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) != 0) {
    LOG_WARN("cannot reduce the timer slack: %s", std::strerror(errno));
  }
  run_dispatch(loop, *dev,
               {std::chrono::microseconds(o.poll_us), std::chrono::microseconds(o.doze_us),
                std::chrono::microseconds(o.doze_tick_us)});

  LOG_INFO("exiting on %s", exit_signal != 0 ? strsignal(exit_signal) : "error");
  dev->shutdown_st();
  return exit_signal != 0 ? 0 : 1;
}

}  // namespace
}  // namespace vrnicd

int main(int argc, char** argv) {
  vrnicd::Options opts;
  const int rc = vrnicd::parse_options(argc, argv, &opts);
  if (rc != 0) {
    return rc - 1;
  }
  if (!opts.log_file.empty() && !vrnicd::log_open_file(opts.log_file.c_str())) {
    std::fprintf(stderr, "vrnicd: cannot open log file %s: %s\n", opts.log_file.c_str(),
                 std::strerror(errno));
    return 2;
  }
  return vrnicd::run(opts);
}
