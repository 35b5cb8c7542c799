// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "control/control.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/unix_socket.h"
#include "device/device.h"

namespace vrnicd {

using nlohmann::json;

namespace {

// Output queued for a trace reader beyond this is dropped (and counted):
// a slow reader never holds up the device.
constexpr size_t kMaxTraceBacklog = size_t{1} << 20;

constexpr std::array<const char*, VRNIC_STAT_MAX> kStatNames = {
    "tx_packets",        "tx_bytes",       "rx_packets",          "rx_bytes",
    "rx_dropped",        "rx_icrc_errors", "retransmits",         "rnr_naks_sent",
    "rnr_naks_received", "seq_naks_sent",  "seq_naks_received",   "duplicates",
    "doorbells",         "engine_sleeps",  "send_wqes",           "cqes",
    "objects_pd",        "objects_mr",     "objects_cq",          "objects_qp",
    "objects_srq",       "mr_pages",       "rx_addr_errors",      "rx_key_errors",
    "rx_qkey_errors",    "rx_pkey_errors", "rx_invalid_requests", "rx_no_buffer",
    "tx_acks_dropped",
};

// VRNIC_VERR_* by value (Documentation/hw-spec.rst, "Vendor error codes").
constexpr std::array<const char*, 30> kVerrNames = {
    "NONE",         "WQE_OPCODE",      "WQE_LAYOUT",        "WQE_INLINE",   "WQE_AV",
    "WQE_QP_TYPE",  "WQE_LENGTH",      "WQE_ATOMIC_LENGTH", "LKEY",         "LOCAL_ACCESS",
    "LOCAL_BOUNDS", "RECV_LENGTH",     "RECV_WQE",          "RECV_RKEY",    "NAK_ACCESS",
    "NAK_INVALID",  "NAK_OPERATIONAL", "RETRY_EXCEEDED",    "RNR_EXCEEDED", "BAD_RESPONSE",
    "MR_KEY",       "MR_STATE",        "MR_PAGES",          "MR_PBL",       "INV_RKEY",
    "MW_KEY",       "MW_MR",           "MW_BOUNDS",         "MW_ACCESS",    "MW_STATE",
};

const char* verr_name(uint8_t v) { return v < kVerrNames.size() ? kVerrNames.at(v) : "?"; }

const char* port_state_name(uint8_t s) {
  switch (s) {
    case VRNIC_PORT_DOWN:
      return "DOWN";
    case VRNIC_PORT_INIT:
      return "INIT";
    case VRNIC_PORT_ARMED:
      return "ARMED";
    case VRNIC_PORT_ACTIVE:
      return "ACTIVE";
    default:
      return "?";
  }
}

const char* phys_state_name(uint8_t s) {
  switch (s) {
    case VRNIC_PORT_PHYS_POLLING:
      return "POLLING";
    case VRNIC_PORT_PHYS_DISABLED:
      return "DISABLED";
    case VRNIC_PORT_PHYS_LINK_UP:
      return "LINK_UP";
    default:
      return "?";
  }
}

const char* qp_type_name(roce::QpType t) {
  switch (t) {
    case roce::QpType::kRc:
      return "RC";
    case roce::QpType::kUc:
      return "UC";
    case roce::QpType::kUd:
      return "UD";
  }
  return "?";
}

std::string gid_string(const roce::Gid& g) {
  std::array<char, INET6_ADDRSTRLEN> buf{};
  if (::inet_ntop(AF_INET6, g.data(), buf.data(), buf.size()) == nullptr) {
    return "?";
  }
  return buf.data();
}

// IB MTU enumeration (1: 256 .. 5: 4096) in bytes; 0 when unset.
uint32_t mtu_bytes(uint32_t ib_mtu) { return ib_mtu >= 1 && ib_mtu <= 5 ? 128U << ib_mtu : 0; }

json port_json(const Port& p) {
  json gids = json::array();
  for (size_t i = 0; i < p.gids().size(); ++i) {
    const GidEntry& g = p.gids()[i];
    if (g.valid) {
      gids.push_back({{"index", i},
                      {"gid", gid_string(g.gid)},
                      {"type", g.type == VRNIC_GID_TYPE_ROCE_V2 ? "RoCEv2" : "RoCEv1"}});
    }
  }
  return {{"state", port_state_name(p.state())},
          {"phys_state", phys_state_name(p.phys_state())},
          {"active_mtu", mtu_bytes(p.active_mtu())},
          {"netdev_mtu", p.netdev_mtu()},
          {"mac", format_mac(p.mac())},
          {"link_changes", p.link_changes()},
          {"gids", gids}};
}

json wire_json(const EthPort& port) {
  const EthPort::Counters& c = port.counters();
  json w = {{"link", port.wire_name()},
            {"configured", port.has_wire()},
            {"connected", port.wire_connected()},
            {"rx_frames", c.wire_rx},
            {"tx_frames", c.wire_tx},
            {"to_engine", c.to_engine},
            {"from_engine", c.from_engine},
            {"to_nic", c.to_nic},
            {"from_nic", c.from_nic},
            {"no_route", c.dropped},
            {"link_full", c.link_full}};
  FaultConfig cfg;
  const FaultInjector* f = port.faults();
  if (f != nullptr) {
    cfg = f->config();
  }
  w["faults"] = {{"drop", cfg.drop},
                 {"reorder", cfg.reorder},
                 {"dup", cfg.dup},
                 {"corrupt", cfg.corrupt},
                 {"seed", cfg.seed},
                 {"dropped", f != nullptr ? f->dropped : 0},
                 {"reordered", f != nullptr ? f->reordered : 0},
                 {"duplicated", f != nullptr ? f->duplicated : 0},
                 {"corrupted", f != nullptr ? f->corrupted : 0}};
  return w;
}

json status_json(Device& dev, const EthPort& port) {
  const Counters& cnt = dev.engine().counters();
  json counters = json::object();
  for (size_t i = 0; i < kStatNames.size(); ++i) {
    counters[kStatNames.at(i)] = cnt.get(static_cast<vrnic_stat>(i));
  }
  const DeviceCounters& dc = dev.counters();
  return {{"ok", true},
          {"device",
           {{"state", device_state_name(dev.state())},
            {"mac", format_mac(dev.config().mac)},
            {"num_vectors", dev.config().num_vectors},
            {"admin_commands", dc.admin_cmds},
            {"admin_errors", dc.admin_errors},
            {"async_events", dc.async_events},
            {"interrupts", dc.irqs},
            {"resets", dc.resets}}},
          {"port", port_json(dev.port())},
          {"objects",
           {{"pd", cnt.get(VRNIC_STAT_PDS)},
            {"mr", cnt.get(VRNIC_STAT_MRS)},
            {"cq", cnt.get(VRNIC_STAT_CQS)},
            {"qp", cnt.get(VRNIC_STAT_QPS)},
            {"srq", cnt.get(VRNIC_STAT_SRQS)},
            {"mr_pages", cnt.get(VRNIC_STAT_MR_PAGES)}}},
          {"counters", counters},
          {"wire", wire_json(port)}};
}

// What qp list shows of a QP.
json qp_brief(const Qp& qp) {
  const QpAttrs a = qp.query();
  json j = {{"qpn", qp.qpn()},
            {"type", qp_type_name(qp.type())},
            {"state", roce::qp_state_name(a.state)},
            {"pdn", qp.pdn()},
            {"send_cq", qp.links().send_cq != nullptr ? qp.links().send_cq->cqn() : 0},
            {"recv_cq", qp.links().recv_cq != nullptr ? qp.links().recv_cq->cqn() : 0},
            {"sq_psn", a.sq_psn},
            {"rq_psn", a.rq_psn}};
  if (qp.links().srq != nullptr) {
    j["srq"] = qp.links().srq->srqn;
  }
  if (qp.type() != roce::QpType::kUd) {
    j["dest_qpn"] = a.dest_qpn;
  }
  return j;
}

json qp_detail(const Qp& qp) {
  json j = qp_brief(qp);
  const QpAttrs a = qp.query();
  const roce::QpTransport::Status st = qp.transport_status();
  const QpStats& s = qp.stats();
  j["gsi"] = qp.gsi();
  j["path_mtu"] = mtu_bytes(a.path_mtu);
  j["qkey"] = a.qkey;
  j["access"] = a.access;
  j["timeout"] = a.timeout;
  j["retry_cnt"] = a.retry_cnt;
  j["rnr_retry"] = a.rnr_retry;
  j["min_rnr_timer"] = a.min_rnr_timer;
  j["max_rd_atomic"] = a.max_rd_atomic;
  j["max_dest_rd_atomic"] = a.max_dest_rd_atomic;
  j["rate_limit_kbps"] = a.rate_limit;  // 0: unpaced
  j["max_burst"] = a.max_burst;
  if (qp.type() != roce::QpType::kUd) {
    j["dgid"] = gid_string(a.av.dgid);
    j["sgid_index"] = a.av.sgid_index;
  }
  j["counter_set"] = qp.counter_set();
  j["transport"] = {{"outstanding", st.outstanding},
                    {"outstanding_rd_atomic", st.outstanding_rd_atomic},
                    {"responder_resources", st.responder_resources},
                    {"acked_psn", st.acked_psn},
                    {"retries_left", st.retries_left},
                    {"rnr_retries_left", st.rnr_retries_left}};
  j["stats"] = {{"tx_packets", s.tx_packets},
                {"rx_packets", s.rx_packets},
                {"send_wqes", s.wqes},
                {"retransmits", s.retransmits},
                {"rnr_naks_sent", s.rnr_naks_sent},
                {"rnr_naks_received", s.rnr_naks_rcvd},
                {"seq_naks_sent", s.seq_naks_sent},
                {"seq_naks_received", s.seq_naks_rcvd},
                {"duplicates", s.duplicates},
                {"refused", s.refused},
                {"error_completions", s.errors}};
  if (s.last_error) {
    const QpStats::LastError& e = *s.last_error;
    j["last_error"] = {{"t_us", e.t_us},
                       {"queue", e.send ? "send" : "recv"},
                       {"opcode", roce::wc_opcode_name(e.opcode)},
                       {"status", roce::wc_status_name(e.status)},
                       {"vendor_err", e.vendor_err},
                       {"vendor_err_name", verr_name(e.vendor_err)},
                       {"wr_id", e.wr_id}};
  } else {
    j["last_error"] = nullptr;
  }
  return j;
}

json error_json(const std::string& why) { return {{"ok", false}, {"error", why}}; }

bool get_probability(const json& j, const char* key, double* out, std::string* err) {
  if (!j.contains(key)) {
    return true;
  }
  const json& v = j.at(key);
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
    *err = std::string(key) + " must be a probability from 0 to 1";
    return false;
  }
  *out = v.get<double>();
  return true;
}

}  // namespace

bool parse_control_request(std::string_view line, ControlRequest* req, std::string* err) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *err = "a request is one JSON object";
    return false;
  }
  if (!j.contains("cmd") || !j.at("cmd").is_string()) {
    *err = "no \"cmd\"";
    return false;
  }
  const std::string cmd = j.at("cmd").get<std::string>();
  if (cmd == "status") {
    req->cmd = ControlRequest::Cmd::kStatus;
  } else if (cmd == "qp_list") {
    req->cmd = ControlRequest::Cmd::kQpList;
  } else if (cmd == "qp_show") {
    req->cmd = ControlRequest::Cmd::kQpShow;
  } else if (cmd == "trace") {
    req->cmd = ControlRequest::Cmd::kTrace;
  } else if (cmd == "fault") {
    req->cmd = ControlRequest::Cmd::kFault;
  } else {
    *err = "unknown command \"" + cmd + "\"";
    return false;
  }
  if (j.contains("qpn")) {
    const json& q = j.at("qpn");
    if (!q.is_number_unsigned() || q.get<uint64_t>() > roce::kQpnMask) {
      *err = "qpn must be a QP number (0 to 16777215)";
      return false;
    }
    req->qpn = q.get<uint32_t>();
  }
  if (req->cmd == ControlRequest::Cmd::kQpShow && !req->qpn) {
    *err = "qp_show needs a qpn";
    return false;
  }
  if (req->cmd == ControlRequest::Cmd::kFault) {
    FaultConfig& f = req->fault;
    if (!get_probability(j, "drop", &f.drop, err) ||
        !get_probability(j, "reorder", &f.reorder, err) ||
        !get_probability(j, "dup", &f.dup, err) ||
        !get_probability(j, "corrupt", &f.corrupt, err)) {
      return false;
    }
    if (j.contains("seed")) {
      if (!j.at("seed").is_number_unsigned()) {
        *err = "seed must be an unsigned number";
        return false;
      }
      f.seed = j.at("seed").get<uint64_t>();
    }
  }
  return true;
}

std::string control_path_for(const std::string& socket_path) {
  constexpr std::string_view kSock = ".sock";
  if (socket_path.size() > kSock.size() && socket_path.ends_with(kSock)) {
    return socket_path.substr(0, socket_path.size() - kSock.size()) + ".ctl";
  }
  return socket_path + ".ctl";
}

ControlServer::ControlServer(EventLoop& loop, Device& dev, EthPort& port)
    : loop_(loop), dev_(dev), port_(port) {}

ControlServer::~ControlServer() {
  if (sweep_timer_ >= 0) {
    loop_.remove_timer(sweep_timer_);
  }
  while (!clients_.empty()) {
    drop(clients_.back()->fd.get());
  }
  if (listen_) {
    loop_.remove(listen_.get());
    ::unlink(path_.c_str());
  }
}

bool ControlServer::listen(const std::string& path, std::string* err) {
  // Only the owner may look in or inject faults.
  listen_ = listen_unix(path, 8, true, err);
  if (!listen_) {
    *err = "control socket " + *err;
    return false;
  }
  path_ = path;
  sweep_timer_ = loop_.add_timer(std::max<uint32_t>(idle_ms_ / 4, 10), [this] { sweep_idle(); });
  return loop_.add(listen_.get(), EPOLLIN, [this](uint32_t) { on_accept(); });
}

void ControlServer::sweep_idle() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<int> idle;
  for (const auto& c : clients_) {
    if (c->trace_sub == 0 && now - c->active > std::chrono::milliseconds(idle_ms_)) {
      idle.push_back(c->fd.get());
    }
  }
  for (const int fd : idle) {
    drop(fd);
  }
}

void ControlServer::on_accept() {
  UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (fd) {
    serve(std::move(fd));
  }
}

bool ControlServer::serve(UniqueFd fd) {
  if (clients_.size() >= kMaxClients) {
    return false;  // closed: too many at once
  }
  const std::optional<ucred> cred = peer_cred(fd.get());
  if (!cred) {
    return false;
  }
  if (std::count_if(clients_.begin(), clients_.end(), [&](const auto& c) {
        return c->uid == cred->uid;
      }) >= static_cast<std::ptrdiff_t>(kMaxClientsPerUid)) {
    return false;  // closed: that user has enough open
  }
  const int n = fd.get();
  auto c = std::make_unique<Client>();
  c->fd = std::move(fd);
  c->uid = cred->uid;
  c->active = std::chrono::steady_clock::now();
  if (!loop_.add(n, EPOLLIN | EPOLLRDHUP, [this, n](uint32_t ev) { on_client(n, ev); })) {
    return false;
  }
  clients_.push_back(std::move(c));
  return true;
}

void ControlServer::on_client(int fd, uint32_t events) {
  auto it = client_at(fd);
  if (it == clients_.end()) {
    return;
  }
  Client& c = **it;
  if ((events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) != 0) {
    drop(fd);
    return;
  }
  if ((events & EPOLLOUT) != 0 && !flush(c)) {
    drop(fd);
    return;
  }
  if ((events & EPOLLIN) == 0) {
    return;
  }
  std::array<char, 1024> buf{};
  const ssize_t n = ::read(fd, buf.data(), buf.size());
  if (n <= 0) {
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      drop(fd);
    }
    return;
  }
  if (c.trace_sub != 0 || c.closing) {
    return;  // one request per connection
  }
  c.active = std::chrono::steady_clock::now();
  c.in.append(buf.data(), static_cast<size_t>(n));
  if (c.in.find('\n') != std::string::npos) {
    handle_line(c);
  } else if (c.in.size() > kMaxRequest) {
    c.out = error_json("request too long").dump() + "\n";
    c.closing = true;
  } else {
    return;
  }
  if (!flush(c)) {
    drop(fd);
  }
}

void ControlServer::handle_line(Client& c) {
  ControlRequest req;
  std::string err;
  const std::string line = c.in.substr(0, c.in.find('\n'));
  if (!parse_control_request(line, &req, &err)) {
    c.out = error_json(err).dump() + "\n";
    c.closing = true;
    return;
  }
  if (req.cmd == ControlRequest::Cmd::kTrace) {
    start_trace(c, req.qpn);
    return;
  }
  c.out = answer(req) + "\n";
  c.closing = true;
}

std::string ControlServer::answer(const ControlRequest& req) {
  switch (req.cmd) {
    case ControlRequest::Cmd::kStatus:
      return status_json(dev_, port_).dump();
    case ControlRequest::Cmd::kQpList: {
      json qps = json::array();
      for (const Qp* qp : dev_.engine().objects().qps()) {
        qps.push_back(qp_brief(*qp));
      }
      return json{{"ok", true}, {"qps", qps}}.dump();
    }
    case ControlRequest::Cmd::kQpShow: {
      const Qp* qp = dev_.engine().objects().find_qp(req.qpn.value_or(0));
      if (qp == nullptr) {
        return error_json("no QP " + std::to_string(req.qpn.value_or(0))).dump();
      }
      json j = qp_detail(*qp);
      j["ok"] = true;
      return j.dump();
    }
    case ControlRequest::Cmd::kFault:
      if (!port_.has_wire()) {
        return error_json("the port has no wire to inject faults on").dump();
      }
      port_.set_faults(req.fault);
      LOG_INFO("fault injection now drop %g reorder %g dup %g corrupt %g (seed %llu)",
               req.fault.drop, req.fault.reorder, req.fault.dup, req.fault.corrupt,
               static_cast<unsigned long long>(req.fault.seed));
      return json{{"ok", true}, {"faults", wire_json(port_)["faults"]}}.dump();
    case ControlRequest::Cmd::kTrace:
      break;
  }
  return error_json("not a one-answer command").dump();
}

// The first line says the trace is on; then one line per event.  Lines a
// slow reader cannot take are dropped and counted, and the count is
// reported in the stream once there is room again.
void ControlServer::start_trace(Client& c, std::optional<uint32_t> qpn) {
  c.out = json{{"ok", true}, {"trace", qpn ? json(*qpn) : json("all")}}.dump() + "\n";
  const int fd = c.fd.get();
  c.trace_sub = dev_.engine().tracer().subscribe(
      qpn.value_or(Tracer::kAllQps), [this, fd](const std::string& line) {
        auto it = client_at(fd);
        if (it == clients_.end()) {
          return false;
        }
        Client& cl = **it;
        if (cl.out.size() + line.size() > kMaxTraceBacklog) {
          ++cl.lost;
          return true;
        }
        if (cl.lost != 0) {
          cl.out += json{{"event", "lost"}, {"lines", cl.lost}}.dump() + "\n";
          cl.lost = 0;
        }
        cl.out += line;
        cl.out += '\n';
        return flush(cl);
      });
}

// Write what we can; watch for room when some is left.  false: the
// connection is done (an error, or the answer is out).
bool ControlServer::flush(Client& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno == EAGAIN) {
        loop_.modify(c.fd.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP);
        return true;
      }
      return false;
    }
    c.out.erase(0, static_cast<size_t>(n));
    c.active = std::chrono::steady_clock::now();
  }
  loop_.modify(c.fd.get(), EPOLLIN | EPOLLRDHUP);
  return !c.closing;
}

ControlServer::Clients::iterator ControlServer::client_at(int fd) {
  return std::find_if(clients_.begin(), clients_.end(),
                      [fd](const auto& c) { return c->fd.get() == fd; });
}

void ControlServer::drop(int fd) {
  auto it = client_at(fd);
  if (it == clients_.end()) {
    return;
  }
  if ((*it)->trace_sub != 0) {
    dev_.engine().tracer().unsubscribe((*it)->trace_sub);
  }
  loop_.remove(fd);
  clients_.erase(it);
}

}  // namespace vrnicd
