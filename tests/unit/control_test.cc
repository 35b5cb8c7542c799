// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd's control socket (vrnicctl): requests parsed strictly, and the
// answers and trace events about a device that moved data.
#include "control/control.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datapath.h"

namespace {

using nlohmann::json;
using vrnic_test::DataPath;
using vrnicd::ControlRequest;
using vrnicd::parse_control_request;

TEST(ControlRequest, ParsesEveryCommand) {
  ControlRequest r;
  std::string err;
  ASSERT_TRUE(parse_control_request(R"({"cmd":"status"})", &r, &err)) << err;
  EXPECT_EQ(r.cmd, ControlRequest::Cmd::kStatus);
  ASSERT_TRUE(parse_control_request(R"({"cmd":"qp_show","qpn":17})", &r, &err)) << err;
  EXPECT_EQ(r.cmd, ControlRequest::Cmd::kQpShow);
  EXPECT_EQ(r.qpn, 17U);
  r = {};
  ASSERT_TRUE(parse_control_request(R"({"cmd":"trace"})", &r, &err)) << err;
  EXPECT_EQ(r.cmd, ControlRequest::Cmd::kTrace);
  EXPECT_FALSE(r.qpn);
  ASSERT_TRUE(
      parse_control_request(R"({"cmd":"fault","drop":0.05,"reorder":0.5,"seed":9})", &r, &err))
      << err;
  EXPECT_EQ(r.cmd, ControlRequest::Cmd::kFault);
  EXPECT_DOUBLE_EQ(r.fault.drop, 0.05);
  EXPECT_DOUBLE_EQ(r.fault.reorder, 0.5);
  EXPECT_DOUBLE_EQ(r.fault.dup, 0);
  EXPECT_EQ(r.fault.seed, 9U);
}

TEST(ControlRequest, RefusesWhatIsMalformed) {
  for (const char* bad :
       {"", "status", "[]", R"({"cmd":1})", R"({"cmd":"reboot"})", R"({"cmd":"qp_show"})",
        R"({"cmd":"qp_show","qpn":-1})", R"({"cmd":"qp_show","qpn":16777216})",
        R"({"cmd":"qp_show","qpn":"1"})", R"({"cmd":"fault","drop":1.5})",
        R"({"cmd":"fault","dup":-0.1})", R"({"cmd":"fault","seed":-3})",
        R"({"cmd":"fault","drop":"x"})", R"({"cmd":"status")"}) {
    ControlRequest r;
    std::string err;
    EXPECT_FALSE(parse_control_request(bad, &r, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(ControlRequest, SocketPathBesideTheDevice) {
  EXPECT_EQ(vrnicd::control_path_for("/run/vrnic/a.sock"), "/run/vrnic/a.ctl");
  EXPECT_EQ(vrnicd::control_path_for("/tmp/ivshmem"), "/tmp/ivshmem.ctl");
  EXPECT_EQ(vrnicd::control_path_for(".sock"), ".sock.ctl");
}

class ControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dp_.bring_up());
    ASSERT_EQ(dp_.create_pd(&pd_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_cq(8, &cq_), VRNIC_AQ_STATUS_OK);
    buf_ = dp_.alloc(8192);
    ASSERT_EQ(dp_.reg_mr(pd_, buf_, 8192, VRNIC_ACCESS_ALL, &key_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &a_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &b_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(a_, b_.qpn), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(b_, a_.qpn), VRNIC_AQ_STATUS_OK);
  }

  json ask(const std::string& line) {
    ControlRequest r;
    std::string err;
    EXPECT_TRUE(parse_control_request(line, &r, &err)) << err;
    return json::parse(control_.answer(r));
  }

  // A SEND of len bytes from a to b.
  void send(uint32_t len) {
    const vrnic_sge rsge{buf_ + 4096, 4096, key_};
    dp_.post_recv(b_, 1, std::span(&rsge, 1));
    DataPath::SendWr wr;
    wr.opcode = VRNIC_WQE_SEND;
    wr.wr_id = 2;
    const vrnic_sge ssge{buf_, len, key_};
    dp_.post_send(a_, wr, std::span(&ssge, 1));
    dp_.run();
    while (dp_.poll(cq_)) {
    }
  }

  DataPath dp_;
  vrnicd::EventLoop loop_;
  vrnicd::EthPort port_{loop_, [] { return vrnicd::MacAddr{}; },
                        [](std::span<const std::byte>) { return false; }, [](bool) {}};
  vrnicd::ControlServer control_{loop_, dp_.dev(), port_};
  uint32_t pd_ = 0;
  DataPath::Cq cq_;
  DataPath::Qp a_;
  DataPath::Qp b_;
  uint64_t buf_ = 0;
  uint32_t key_ = 0;
};

TEST_F(ControlTest, StatusCountsObjectsAndTraffic) {
  send(3000);
  const json s = ask(R"({"cmd":"status"})");
  ASSERT_TRUE(s.at("ok").get<bool>());
  EXPECT_EQ(s.at("device").at("state"), "READY");
  EXPECT_EQ(s.at("port").at("state"), "ACTIVE");
  EXPECT_EQ(s.at("port").at("gids").size(), 1U);
  EXPECT_EQ(s.at("port").at("gids")[0].at("gid"), "::ffff:10.0.0.1");
  EXPECT_EQ(s.at("objects").at("qp"), 2);
  EXPECT_EQ(s.at("objects").at("pd"), 1);
  EXPECT_EQ(s.at("counters").at("send_wqes"), 1);
  EXPECT_GE(s.at("counters").at("tx_packets").get<uint64_t>(), 3U);  // 3 packets and an ACK
  EXPECT_FALSE(s.at("wire").at("configured").get<bool>());
  EXPECT_EQ(s.at("wire").at("link"), "none");
}

TEST_F(ControlTest, QpListAndShow) {
  send(100);
  const json l = ask(R"({"cmd":"qp_list"})");
  ASSERT_EQ(l.at("qps").size(), 2U);
  for (const json& q : l.at("qps")) {
    EXPECT_EQ(q.at("type"), "RC");
    EXPECT_EQ(q.at("state"), "RTS");
    EXPECT_EQ(q.at("dest_qpn"), q.at("qpn") == a_.qpn ? b_.qpn : a_.qpn);
  }
  const json q = ask(R"({"cmd":"qp_show","qpn":)" + std::to_string(a_.qpn) + "}");
  ASSERT_TRUE(q.at("ok").get<bool>()) << q.dump();
  EXPECT_EQ(q.at("stats").at("send_wqes"), 1);
  EXPECT_EQ(q.at("stats").at("tx_packets"), 1);
  EXPECT_EQ(q.at("stats").at("rx_packets"), 1);  // the ACK
  EXPECT_EQ(q.at("transport").at("outstanding"), 0);
  EXPECT_EQ(q.at("transport").at("acked_psn"),
            (q.at("sq_psn").get<uint32_t>() + 0xffffff) & 0xffffff);
  EXPECT_TRUE(q.at("last_error").is_null());
  const json none = ask(R"({"cmd":"qp_show","qpn":4242})");
  EXPECT_FALSE(none.at("ok").get<bool>());
}

TEST_F(ControlTest, QpShowKeepsTheLastErrorWithItsVendorCode) {
  DataPath::SendWr wr;
  wr.opcode = VRNIC_WQE_RDMA_WRITE;
  wr.wr_id = 9;
  wr.remote_addr = buf_;
  wr.rkey = key_ ^ 0x100;  // no such key at b
  const vrnic_sge sge{buf_, 64, key_};
  dp_.post_send(a_, wr, std::span(&sge, 1));
  dp_.run();
  const json q = ask(R"({"cmd":"qp_show","qpn":)" + std::to_string(a_.qpn) + "}");
  ASSERT_FALSE(q.at("last_error").is_null()) << q.dump();
  EXPECT_EQ(q.at("state"), "ERR");
  EXPECT_EQ(q.at("last_error").at("status"), "REM_ACCESS_ERR");
  EXPECT_EQ(q.at("last_error").at("vendor_err"), VRNIC_VERR_NAK_ACCESS);
  EXPECT_EQ(q.at("last_error").at("vendor_err_name"), "NAK_ACCESS");
  EXPECT_EQ(q.at("last_error").at("wr_id"), 9);
}

TEST_F(ControlTest, TraceShowsWqeWirePacketsAndCqesInOrder) {
  std::vector<json> events;
  const int id = dp_.dev().engine().tracer().subscribe(a_.qpn, [&](const std::string& line) {
    events.push_back(json::parse(line));
    return true;
  });
  send(100);
  dp_.dev().engine().tracer().unsubscribe(id);
  send(100);  // not traced
  std::vector<std::string> kinds;
  for (const json& e : events) {
    EXPECT_EQ(e.at("qpn"), a_.qpn);
    kinds.push_back(e.at("event").get<std::string>() + ":" + e.at("opcode").get<std::string>());
  }
  const std::vector<std::string> want = {"wqe:SEND", "tx:RC_SEND_ONLY", "rx:RC_ACKNOWLEDGE",
                                         "cqe:SEND"};
  EXPECT_EQ(kinds, want);
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[1].at("dest_qp"), b_.qpn);
  EXPECT_EQ(events[1].at("payload"), 100);
  EXPECT_EQ(events[3].at("status"), "SUCCESS");
}

TEST_F(ControlTest, FaultNeedsAWire) {
  const json f = ask(R"({"cmd":"fault","drop":0.1})");
  EXPECT_FALSE(f.at("ok").get<bool>());
}

// The control socket is for vrnicd's own user, but even so one client
// cannot take every slot or keep one forever (issue 24, defect 8): a user
// gets at most kMaxClientsPerUid connections at once, and a connection
// that sends nothing is closed after the idle timeout.  Before, sixteen
// idle connections locked vrnicctl out for good.
TEST_F(ControlTest, ClientsPerUserAndIdleConnectionsAreLimited) {
  char dir[] = "/tmp/vrnic-ctl-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/ctl";
  control_.set_idle_ms(1000);
  std::string err;
  ASSERT_TRUE(control_.listen(path, &err)) << err;
  const auto open_one = [&] {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    loop_.run_once(10);
    return fd;
  };
  // Closed by the server: a read sees the end (or a reset).
  const auto closed = [&](int fd) {
    for (int i = 0; i < 10; ++i) {
      loop_.run_once(2);
    }
    pollfd p{fd, POLLIN, 0};
    char c = 0;
    return ::poll(&p, 1, 0) == 1 && ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
  };
  std::vector<int> fds;
  for (size_t i = 0; i < vrnicd::ControlServer::kMaxClientsPerUid + 1; ++i) {
    fds.push_back(open_one());
  }
  for (size_t i = 0; i < vrnicd::ControlServer::kMaxClientsPerUid; ++i) {
    EXPECT_FALSE(closed(fds[i])) << i;
  }
  EXPECT_TRUE(closed(fds.back())) << "a fifth connection of one user was kept";
  // Idle for longer than the timeout: all closed, and a new one is served.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1600);
  while (std::chrono::steady_clock::now() < until) {
    loop_.run_once(20);
  }
  for (size_t i = 0; i < vrnicd::ControlServer::kMaxClientsPerUid; ++i) {
    EXPECT_TRUE(closed(fds[i])) << "idle connection " << i << " was kept";
  }
  const int fd = open_one();
  const std::string req = "{\"cmd\":\"status\"}\n";
  ASSERT_EQ(::write(fd, req.data(), req.size()), static_cast<ssize_t>(req.size()));
  std::string got;
  for (int i = 0; i < 100 && got.find('\n') == std::string::npos; ++i) {
    loop_.run_once(10);
    std::array<char, 4096> buf{};
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) {
      got.append(buf.data(), static_cast<size_t>(n));
    }
  }
  EXPECT_NE(got.find("\"ok\":true"), std::string::npos) << got;
  for (const int f : fds) {
    ::close(f);
  }
  ::close(fd);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

}  // namespace
