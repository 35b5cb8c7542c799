// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicctl: look into a running vrnicd through its control socket (see
// userspace/vrnicd/control.h for the protocol).
//
//   vrnicctl [-s SOCKET | -d NAME] [--json] status
//   vrnicctl ... qp list
//   vrnicctl ... qp show QPN
//   vrnicctl ... trace [--qp QPN] [--count N] [--seconds S]
//   vrnicctl ... fault [drop=P] [reorder=P] [dup=P] [corrupt=P] [seed=N]
#include <getopt.h>
#include <glob.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::json;

constexpr const char* kRunDir = "/run/vrnic";

struct Args {
  std::string socket;
  std::string device;
  bool json_out = false;
  std::optional<uint32_t> qp;
  long count = -1;     // trace: stop after this many events
  double seconds = 0;  // trace: stop after this long (0: never)
  std::vector<std::string> words;
};

void usage(std::FILE* out) {
  std::fputs(
      "Usage: vrnicctl [OPTIONS] COMMAND\n"
      "Look into a running vrnicd (one vrnic device) through its control socket.\n"
      "\n"
      "Commands:\n"
      "  status                    device and port state, objects, counters, wire\n"
      "  qp list                   every QP: type, state, PSNs, CQs\n"
      "  qp show QPN               one QP: attributes, outstanding work, retries,\n"
      "                            its counters and its last error\n"
      "  trace                     a live stream of WQEs, CQEs and packets\n"
      "  fault [drop=P] [reorder=P] [dup=P] [corrupt=P] [seed=N]\n"
      "                            set fault injection on the wire's ingress from\n"
      "                            now on (unnamed ones become 0); 'fault' alone\n"
      "                            turns it off\n"
      "\n"
      "Options:\n"
      "  -s, --socket PATH   the control socket (default: $VRNICCTL_SOCKET, or the\n"
      "                      one socket in /run/vrnic)\n"
      "  -d, --device NAME   the device of vrnicd@NAME: /run/vrnic/NAME.ctl\n"
      "  -j, --json          print the answer as JSON (trace: one object per line)\n"
      "      --qp QPN        trace: only this QP's events\n"
      "      --count N       trace: stop after N events\n"
      "      --seconds S     trace: stop after S seconds\n"
      "  -h, --help          show this help\n",
      out);
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "vrnicctl: %s\n", msg.c_str());
  return 1;
}

// The socket to talk to, or an empty string (with *why).
std::string find_socket(const Args& a, std::string* why) {
  if (!a.socket.empty()) {
    return a.socket;
  }
  if (!a.device.empty()) {
    return std::string(kRunDir) + "/" + a.device + ".ctl";
  }
  if (const char* env = std::getenv("VRNICCTL_SOCKET"); env != nullptr && *env != '\0') {
    return env;
  }
  glob_t g{};
  const std::string pattern = std::string(kRunDir) + "/*.ctl";
  std::string found;
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc == 1) {
    found = g.gl_pathv[0];  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
  } else {
    *why = g.gl_pathc > 1 ? "more than one device in /run/vrnic: name one with -d or -s"
                          : "no device found: give its control socket with -s (or -d NAME)";
  }
  ::globfree(&g);
  return found;
}

int connect_to(const std::string& path, std::string* why) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    *why = path + ": path too long";
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    *why = path + ": " + std::strerror(errno) + " (is vrnicd running?)";
    if (fd >= 0) {
      ::close(fd);
    }
    return -1;
  }
  return fd;
}

// Reads lines from the socket, waiting at most timeout_ms for each.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // 1: a line; 0: the connection closed; -1: timeout or error.
  int next(std::string* line, int timeout_ms) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return 1;
      }
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      const int r = ::poll(&p, 1, timeout_ms);
      if (r <= 0) {
        return -1;
      }
      char chunk[4096];  // NOLINT(cppcoreguidelines-avoid-c-arrays)
      const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
      if (n <= 0) {
        return n == 0 ? 0 : -1;
      }
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
};

std::string u64(const json& j, const char* key) {
  return j.contains(key) && !j.at(key).is_null() ? j.at(key).dump() : "-";
}

void print_status(const json& r) {
  const json& d = r.at("device");
  const json& p = r.at("port");
  std::printf("device:   %s  mac %s  %s vectors\n", d.at("state").get<std::string>().c_str(),
              d.at("mac").get<std::string>().c_str(), u64(d, "num_vectors").c_str());
  std::printf(
      "          admin commands %s (errors %s), async events %s, interrupts %s, resets %s\n",
      u64(d, "admin_commands").c_str(), u64(d, "admin_errors").c_str(),
      u64(d, "async_events").c_str(), u64(d, "interrupts").c_str(), u64(d, "resets").c_str());
  std::printf("port 1:   %s (%s)  active_mtu %s  netdev mtu %s  mac %s  link changes %s\n",
              p.at("state").get<std::string>().c_str(),
              p.at("phys_state").get<std::string>().c_str(), u64(p, "active_mtu").c_str(),
              u64(p, "netdev_mtu").c_str(), p.at("mac").get<std::string>().c_str(),
              u64(p, "link_changes").c_str());
  for (const json& g : p.at("gids")) {
    std::printf("          gid %s: %s (%s)\n", u64(g, "index").c_str(),
                g.at("gid").get<std::string>().c_str(), g.at("type").get<std::string>().c_str());
  }
  std::printf("objects: ");
  for (const auto& [k, v] : r.at("objects").items()) {
    std::printf(" %s %s", k.c_str(), v.dump().c_str());
  }
  std::printf("\ncounters (non-zero):\n");
  for (const auto& [k, v] : r.at("counters").items()) {
    if (v.get<uint64_t>() != 0) {
      std::printf("  %-22s %s\n", k.c_str(), v.dump().c_str());
    }
  }
  const json& w = r.at("wire");
  const json& f = w.at("faults");
  std::printf(
      "wire:     %s %s  rx %s tx %s frames (to engine %s, from engine %s; dropped: no route %s,"
      " link full %s)\n",
      w.value("link", "?").c_str(),
      !w.at("configured").get<bool>() ? ""
      : w.at("connected").get<bool>() ? "linked"
                                      : "no partner",
      u64(w, "rx_frames").c_str(), u64(w, "tx_frames").c_str(), u64(w, "to_engine").c_str(),
      u64(w, "from_engine").c_str(), u64(w, "no_route").c_str(), u64(w, "link_full").c_str());
  std::printf(
      "faults:   drop %s reorder %s dup %s corrupt %s (seed %s): dropped %s reordered %s"
      " duplicated %s corrupted %s\n",
      u64(f, "drop").c_str(), u64(f, "reorder").c_str(), u64(f, "dup").c_str(),
      u64(f, "corrupt").c_str(), u64(f, "seed").c_str(), u64(f, "dropped").c_str(),
      u64(f, "reordered").c_str(), u64(f, "duplicated").c_str(), u64(f, "corrupted").c_str());
}

void print_qp_list(const json& r) {
  std::printf("%8s %-4s %-5s %5s %6s %6s %9s %9s %8s\n", "QPN", "TYPE", "STATE", "PDN", "SCQ",
              "RCQ", "SQ_PSN", "RQ_PSN", "DEST_QPN");
  for (const json& q : r.at("qps")) {
    std::printf("%8s %-4s %-5s %5s %6s %6s %9s %9s %8s\n", u64(q, "qpn").c_str(),
                q.at("type").get<std::string>().c_str(), q.at("state").get<std::string>().c_str(),
                u64(q, "pdn").c_str(), u64(q, "send_cq").c_str(), u64(q, "recv_cq").c_str(),
                u64(q, "sq_psn").c_str(), u64(q, "rq_psn").c_str(), u64(q, "dest_qpn").c_str());
  }
}

void print_object(const json& j, const std::string& indent) {
  for (const auto& [k, v] : j.items()) {
    if (k == "ok") {
      continue;
    }
    if (v.is_object()) {
      std::printf("%s%s:\n", indent.c_str(), k.c_str());
      print_object(v, indent + "  ");
    } else {
      std::printf("%s%-22s %s\n", indent.c_str(), k.c_str(),
                  v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
    }
  }
}

void print_event(const json& e) {
  std::string line;
  for (const auto& [k, v] : e.items()) {
    if (k == "t_us" || k == "event" || k == "qpn") {
      continue;
    }
    line += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  std::printf("%12s qp %-6s %-4s%s\n", u64(e, "t_us").c_str(), u64(e, "qpn").c_str(),
              e.value("event", "?").c_str(), line.c_str());
  std::fflush(stdout);
}

// Build the request from the command words; nullopt with *why if bad.
std::optional<json> build_request(const Args& a, std::string* why) {
  const std::vector<std::string>& w = a.words;
  if (w.empty()) {
    *why = "no command (try --help)";
    return std::nullopt;
  }
  if (w[0] == "status" && w.size() == 1) {
    return json{{"cmd", "status"}};
  }
  if (w[0] == "qp" && w.size() == 2 && w[1] == "list") {
    return json{{"cmd", "qp_list"}};
  }
  if (w[0] == "qp" && w.size() == 3 && w[1] == "show") {
    char* end = nullptr;
    const unsigned long n = std::strtoul(w[2].c_str(), &end, 0);
    if (w[2].empty() || *end != '\0' || n > 0xffffff) {
      *why = "qp show: '" + w[2] + "' is no QP number";
      return std::nullopt;
    }
    return json{{"cmd", "qp_show"}, {"qpn", n}};
  }
  if (w[0] == "trace" && w.size() == 1) {
    json r = {{"cmd", "trace"}};
    if (a.qp) {
      r["qpn"] = *a.qp;
    }
    return r;
  }
  if (w[0] == "fault") {
    json r = {{"cmd", "fault"}, {"drop", 0}, {"reorder", 0}, {"dup", 0}, {"corrupt", 0}};
    for (size_t i = 1; i < w.size(); ++i) {
      const size_t eq = w[i].find('=');
      const std::string key = w[i].substr(0, eq);
      if (eq == std::string::npos || (key != "drop" && key != "reorder" && key != "dup" &&
                                      key != "corrupt" && key != "seed")) {
        *why = "fault: '" + w[i] + "' is not drop=P, reorder=P, dup=P, corrupt=P or seed=N";
        return std::nullopt;
      }
      const std::string val = w[i].substr(eq + 1);
      char* end = nullptr;
      if (key == "seed") {
        r[key] = std::strtoull(val.c_str(), &end, 0);
      } else {
        r[key] = std::strtod(val.c_str(), &end);
      }
      if (val.empty() || *end != '\0') {
        *why = "fault: '" + w[i] + "': not a number";
        return std::nullopt;
      }
    }
    return r;
  }
  *why = "unknown command '" + w[0] + "' (try --help)";
  return std::nullopt;
}

int run_trace(const Args& a, int fd, LineReader& rd) {
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::duration<double>(a.seconds);
  long seen = 0;
  std::string line;
  while (a.count < 0 || seen < a.count) {
    int wait_ms = 1000;
    if (a.seconds > 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0) {
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    const int r = rd.next(&line, wait_ms);
    if (r == 0) {
      return fail("vrnicd closed the trace");
    }
    if (r < 0) {
      continue;  // quiet: wait on
    }
    const json e = json::parse(line, nullptr, false);
    if (e.is_discarded()) {
      return fail("bad trace line from vrnicd");
    }
    ++seen;
    if (a.json_out) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    } else {
      print_event(e);
    }
  }
  ::close(fd);
  return 0;
}

bool parse_args(int argc, char** argv, Args* a, int* rc) {
  const std::vector<option> opts = {
      {"socket", required_argument, nullptr, 's'}, {"device", required_argument, nullptr, 'd'},
      {"json", no_argument, nullptr, 'j'},         {"qp", required_argument, nullptr, 'q'},
      {"count", required_argument, nullptr, 'c'},  {"seconds", required_argument, nullptr, 't'},
      {"help", no_argument, nullptr, 'h'},         {nullptr, 0, nullptr, 0}};
  int c = 0;
  // Options may follow the command words too ("qp list --json").
  while ((c = ::getopt_long(argc, argv, "s:d:jh", opts.data(), nullptr)) != -1) {
    char* end = nullptr;
    switch (c) {
      case 's':
        a->socket = optarg;
        break;
      case 'd':
        a->device = optarg;
        break;
      case 'j':
        a->json_out = true;
        break;
      case 'q':
        a->qp = static_cast<uint32_t>(std::strtoul(optarg, &end, 0));
        break;
      case 'c':
        a->count = std::strtol(optarg, &end, 0);
        break;
      case 't':
        a->seconds = std::strtod(optarg, &end);
        break;
      case 'h':
        usage(stdout);
        *rc = 0;
        return false;
      default:
        usage(stderr);
        *rc = 2;
        return false;
    }
    if (end != nullptr && *end != '\0') {
      std::fprintf(stderr, "vrnicctl: bad number '%s'\n", optarg);
      *rc = 2;
      return false;
    }
  }
  for (int i = optind; i < argc; ++i) {
    a->words.emplace_back(argv[i]);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
  }
  return true;
}

int run(int argc, char** argv) {
  Args a;
  int rc = 0;
  if (!parse_args(argc, argv, &a, &rc)) {
    return rc;
  }
  std::string why;
  const std::optional<json> req = build_request(a, &why);
  if (!req) {
    std::fprintf(stderr, "vrnicctl: %s\n", why.c_str());
    return 2;
  }
  const std::string path = find_socket(a, &why);
  if (path.empty()) {
    return fail(why);
  }
  const int fd = connect_to(path, &why);
  if (fd < 0) {
    return fail(why);
  }
  const std::string line = req->dump() + "\n";
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    ::close(fd);
    return fail(std::string("send: ") + std::strerror(errno));
  }
  LineReader rd(fd);
  std::string answer;
  if (rd.next(&answer, 10000) != 1) {
    ::close(fd);
    return fail("no answer from vrnicd");
  }
  const json r = json::parse(answer, nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("ok")) {
    ::close(fd);
    return fail("a bad answer from vrnicd");
  }
  if (!r.at("ok").get<bool>()) {
    ::close(fd);
    if (a.json_out) {
      std::printf("%s\n", answer.c_str());
    }
    return fail(r.value("error", "failed"));
  }
  const auto& cmd = req->at("cmd").get_ref<const std::string&>();
  if (cmd == "trace") {
    return run_trace(a, fd, rd);
  }
  ::close(fd);
  if (a.json_out) {
    std::printf("%s\n", r.dump(2).c_str());
  } else if (cmd == "status") {
    print_status(r);
  } else if (cmd == "qp_list") {
    print_qp_list(r);
  } else {
    print_object(r, "");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vrnicctl: %s\n", e.what());
    return 1;
  }
}
