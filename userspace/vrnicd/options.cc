// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd's command line: one table entry per option, each with the code
// that checks and applies its argument.
#include "options.h"

#include <getopt.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "base/log.h"

namespace vrnicd {
namespace {

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

bool parse_u64(std::string_view s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_log_level(std::string_view s) {
  static constexpr std::array<std::pair<std::string_view, LogLevel>, 4> kLevels = {{
      {"error", LogLevel::kError},
      {"warn", LogLevel::kWarn},
      {"info", LogLevel::kInfo},
      {"debug", LogLevel::kDebug},
  }};
  for (const auto& [name, level] : kLevels) {
    if (s == name) {
      log_set_level(level);
      return true;
    }
  }
  return false;
}

// An option: how getopt knows it, and what it does with its argument.
// apply() returns false when the argument is bad; why says what it wants.
struct Spec {
  const char* name;
  int short_name;  // 0: long only
  bool has_arg;
  const char* why;
  bool (*apply)(std::string_view arg, Options* o);
};

bool set_string(std::string* field, std::string_view arg) {
  *field = arg;
  return true;
}

bool u32_in(std::string_view arg, uint32_t lo, uint32_t hi, uint32_t* out) {
  return parse_u32(arg, out) && *out >= lo && *out <= hi;
}

// clang-format off
constexpr std::array<Spec, 28> kSpecs = {{
    {"socket", 's', true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->socket_path, a); }},
    {"guest-mem", 'm', true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->guest_mem_path, a); }},
    {"guest-mem-size", 0, true, "a size in bytes, or with K/M/G",
     [](std::string_view a, Options* o) { return parse_size(a, &o->guest_mem_size); }},
    {"mac", 0, true, "a unicast aa:bb:cc:dd:ee:ff",
     [](std::string_view a, Options* o) {
       const auto mac = parse_mac(a);
       if (!mac || ((*mac)[0] & 1U) != 0) {
         return false;
       }
       o->dev.mac = *mac;
       return true;
     }},
    {"nic-socket", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->port.nic_socket, a); }},
    {"nic-connect", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->port.nic_connect, a); }},
    {"wire-listen", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->port.wire_listen, a); }},
    {"wire", 0, true, "tap:NAME or udp:LOCAL,REMOTE",
     [](std::string_view a, Options* o) {
       return (a.starts_with("tap:") && a.size() > 4) ||
                      (a.starts_with("udp:") && a.find(',') != std::string_view::npos)
                  ? set_string(&o->port.wire, a)
                  : false;
     }},
    {"wire-connect", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->port.wire_connect, a); }},
    {"pcap", 0, true, "a file",
     [](std::string_view a, Options* o) { return set_string(&o->port.pcap, a); }},
    {"drop", 0, true, "a probability 0..1",
     [](std::string_view a, Options* o) { return parse_probability(a, &o->port.faults.drop); }},
    {"reorder", 0, true, "a probability 0..1",
     [](std::string_view a, Options* o) { return parse_probability(a, &o->port.faults.reorder); }},
    {"dup", 0, true, "a probability 0..1",
     [](std::string_view a, Options* o) { return parse_probability(a, &o->port.faults.dup); }},
    {"corrupt", 0, true, "a probability 0..1",
     [](std::string_view a, Options* o) { return parse_probability(a, &o->port.faults.corrupt); }},
    {"seed", 0, true, "a number",
     [](std::string_view a, Options* o) { return parse_u64(a, &o->port.faults.seed); }},
    {"vectors", 0, true, "2..64",
     [](std::string_view a, Options* o) { return u32_in(a, 2, 64, &o->dev.num_vectors); }},
    {"limit", 0, true, "NAME=VALUE, a known limit",
     [](std::string_view a, Options* o) { return set_limit(o->dev.limits, a); }},
    {"link-down", 0, false, "",
     [](std::string_view /*a*/, Options* o) {
       o->dev.cable_up = false;
       return true;
     }},
    {"poll-us", 0, true, "0..1000000",
     [](std::string_view a, Options* o) { return u32_in(a, 0, 1000000, &o->poll_us); }},
    {"doze-us", 0, true, "0..10000000",
     [](std::string_view a, Options* o) { return u32_in(a, 0, 10000000, &o->doze_us); }},
    {"doze-tick-us", 0, true, "1..100000",
     [](std::string_view a, Options* o) { return u32_in(a, 1, 100000, &o->doze_tick_us); }},
    {"doze-ring", 0, false, "",
     [](std::string_view /*a*/, Options* o) {
       o->doze_ring = true;
       return true;
     }},
    {"bar-size", 0, true, "a size in bytes, or with K/M/G",
     [](std::string_view a, Options* o) {
       uint64_t v = 0;
       if (!parse_size(a, &v)) {
         return false;
       }
       o->bar_size = v;
       return true;
     }},
    {"control", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->control_path, a); }},
    {"info-file", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->info_file, a); }},
    {"log-file", 0, true, "a path",
     [](std::string_view a, Options* o) { return set_string(&o->log_file, a); }},
    {"log-level", 0, true, "error, warn, info or debug",
     [](std::string_view a, Options* /*o*/) { return parse_log_level(a); }},
    {"tag", 0, true, "a name",
     [](std::string_view a, Options* /*o*/) {
       log_set_tag(std::string(a).c_str());
       return true;
     }},
}};
// clang-format on

// What getopt_long() takes: the table, then --help, then the terminator.
std::vector<option> getopt_table() {
  std::vector<option> t;
  for (size_t i = 0; i < kSpecs.size(); ++i) {
    const Spec& s = kSpecs[i];
    t.push_back({s.name, s.has_arg ? required_argument : no_argument, nullptr,
                 s.short_name != 0 ? s.short_name : 256 + static_cast<int>(i)});
  }
  t.push_back({"help", no_argument, nullptr, 'h'});
  t.push_back({nullptr, 0, nullptr, 0});
  return t;
}

const Spec* spec_for(int c) {
  for (size_t i = 0; i < kSpecs.size(); ++i) {
    if (c == kSpecs[i].short_name || c == 256 + static_cast<int>(i)) {
      return &kSpecs[i];
    }
  }
  return nullptr;
}

// What the options mean together.
bool options_consistent(const Options& o) {
  if (o.socket_path.empty() || o.guest_mem_path.empty()) {
    std::fprintf(stderr, "vrnicd: --socket and --guest-mem are required (see --help)\n");
    return false;
  }
  if (!o.port.nic_socket.empty() && !o.port.nic_connect.empty()) {
    std::fprintf(stderr, "vrnicd: give --nic-socket or --nic-connect, not both\n");
    return false;
  }
  if (int{!o.port.wire_listen.empty()} + int{!o.port.wire_connect.empty()} +
          int{!o.port.wire.empty()} >
      1) {
    std::fprintf(stderr, "vrnicd: give one of --wire-listen, --wire-connect and --wire\n");
    return false;
  }
  if (o.dev.limits.max_eq < 2 || o.dev.limits.max_eq > 1024) {
    std::fprintf(stderr, "vrnicd: max_eq must be 2..1024\n");
    return false;
  }
  return true;
}

}  // namespace

// vrnicd --help.  Every option in it is in vrnicd.8 too (make lint checks).
constexpr const char* kUsage =
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
    "      --nic-connect PATH    or connect to the guest NIC's socket (QEMU: server=on),\n"
    "                            and reconnect whenever it is lost: a new vrnicd\n"
    "                            finds the NIC again\n"
    "      --wire-listen PATH    Ethernet port: listen on PATH for the link partner\n"
    "                            (another vrnicd, or QEMU -netdev stream,server=off)\n"
    "      --wire-connect PATH   Ethernet port: connect to the partner listening on\n"
    "                            PATH, and reconnect whenever the link is lost;\n"
    "                            with either, the cable is up while linked\n"
    "      --wire tap:NAME       Ethernet port: the host TAP device NAME (created if\n"
    "                            need be), e.g. to join a Linux bridge\n"
    "      --wire udp:LOCAL,REMOTE\n"
    "                            Ethernet port: a UDP tunnel from LOCAL to REMOTE\n"
    "                            (HOST:PORT each), one frame per datagram as QEMU's\n"
    "                            -netdev dgram sends them: to a vrnicd or QEMU on\n"
    "                            another host\n"
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
    "      --doze-ring           while dozing, have producers ring the doorbell\n"
    "                            too, so that new work ends the tick at once\n"
    "      --bar-size BYTES      BAR2 size, a power of two (default 1 MiB)\n"
    "      --control PATH        the control socket for vrnicctl (default: the\n"
    "                            socket's path with .ctl for .sock, or + .ctl)\n"
    "      --info-file PATH      write the device's identity and limits to PATH\n"
    "      --log-file PATH       log to PATH instead of stderr\n"
    "      --log-level LEVEL     error, warn, info (default) or debug\n"
    "      --tag NAME            name used in log lines (default vrnicd)\n"
    "  -h, --help                show this help\n"
    "\n"
    "SIGTERM or SIGINT: tell the driver the device is gone, then exit.\n"
    "SIGUSR1: stop serving the admin queue until the next reset (fault\n"
    "injection: a hung command processor).\n";

void usage(std::FILE* out) { std::fputs(kUsage, out); }

int parse_options(int argc, char** argv, Options* o) {
  const std::vector<option> table = getopt_table();
  int c = 0;
  while ((c = getopt_long(argc, argv, "s:m:h", table.data(), nullptr)) != -1) {
    if (c == 'h') {
      usage(stdout);
      return 1;
    }
    const Spec* spec = spec_for(c);
    if (spec == nullptr) {
      usage(stderr);
      return 3;
    }
    const std::string_view arg = optarg != nullptr ? optarg : "";
    if (!spec->apply(arg, o)) {
      std::fprintf(stderr, "vrnicd: bad --%s '%s' (want %s)\n", spec->name, optarg, spec->why);
      return 3;
    }
  }
  if (optind != argc) {
    std::fprintf(stderr, "vrnicd: unexpected argument '%s'\n", argv[optind]);
    return 3;
  }
  return options_consistent(*o) ? 0 : 3;
}

}  // namespace vrnicd
