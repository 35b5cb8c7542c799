// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/trace.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "engine/counters.h"

namespace vrnicd {

using nlohmann::json;

namespace {

// As Wireshark names them: the transport, then the operation.
std::string packet_opcode(uint8_t opcode) {
  static constexpr std::array<const char*, 8> kTransports = {"RC_", "UC_", "RD_", "UD_",
                                                             "",    "",    "",    ""};
  return std::string(kTransports.at(opcode >> roce::kTransportShift)) + roce::opcode_name(opcode);
}

}  // namespace

int Tracer::subscribe(uint32_t qpn, Sink sink) {
  const int id = next_id_++;
  subs_.push_back({id, qpn, std::move(sink)});
  return id;
}

void Tracer::unsubscribe(int id) {
  std::erase_if(subs_, [id](const Sub& s) { return s.id == id; });
}

bool Tracer::wants(uint32_t qpn) const noexcept {
  return std::any_of(subs_.begin(), subs_.end(),
                     [qpn](const Sub& s) { return s.qpn == kAllQps || s.qpn == qpn; });
}

void Tracer::emit(uint32_t qpn, const std::string& line) {
  // A sink may unsubscribe (its reader went away) while we walk the list.
  std::vector<int> gone;
  for (const Sub& s : subs_) {
    if ((s.qpn == kAllQps || s.qpn == qpn) && !s.sink(line)) {
      gone.push_back(s.id);
    }
  }
  for (const int id : gone) {
    unsubscribe(id);
  }
}

void Tracer::wqe(uint32_t qpn, const roce::SendWqe& w) {
  if (!wants(qpn)) {
    return;
  }
  json j = {
      {"t_us", clock_.now_us()}, {"event", "wqe"},       {"qpn", qpn},
      {"index", w.index},        {"wr_id", w.wr_id},     {"opcode", roce::wr_opcode_name(w.opcode)},
      {"length", w.length},      {"num_sge", w.num_sge}, {"signaled", w.signaled},
      {"inline", w.is_inline}};
  if (w.opcode == roce::WrOpcode::kWrite || w.opcode == roce::WrOpcode::kWriteImm ||
      w.opcode == roce::WrOpcode::kRead || w.opcode == roce::WrOpcode::kCompareSwap ||
      w.opcode == roce::WrOpcode::kFetchAdd || w.opcode == roce::WrOpcode::kAtomicWrite ||
      w.opcode == roce::WrOpcode::kFlush) {
    j["remote_addr"] = w.remote_addr;
    j["rkey"] = w.rkey;
  }
  emit(qpn, j.dump());
}

void Tracer::cqe(uint32_t qpn, bool send, const roce::Completion& c) {
  if (!wants(qpn)) {
    return;
  }
  json j = {{"t_us", clock_.now_us()},
            {"event", "cqe"},
            {"qpn", qpn},
            {"queue", send ? "send" : "recv"},
            {"wr_id", c.wr_id},
            {"opcode", roce::wc_opcode_name(c.opcode)},
            {"status", roce::wc_status_name(c.status)},
            {"byte_len", c.byte_len}};
  if (c.status != roce::WcStatus::kSuccess) {
    j["vendor_err"] = c.vendor_err;
  }
  emit(qpn, j.dump());
}

void Tracer::packet(uint32_t qpn, bool tx, const roce::Packet& p, size_t payload_len,
                    size_t frame_size) {
  if (!wants(qpn)) {
    return;
  }
  const roce::OpcodeInfo& oi = roce::opcode_info(p.bth.opcode);
  json j = {{"t_us", clock_.now_us()},
            {"event", tx ? "tx" : "rx"},
            {"qpn", qpn},
            {"opcode", packet_opcode(p.bth.opcode)},
            {"dest_qp", p.bth.dest_qp},
            {"psn", p.bth.psn},
            {"ack_req", p.bth.ack_req},
            {"payload", payload_len},
            {"frame", frame_size}};
  if ((oi.bits & roce::kHasReth) != 0) {
    j["va"] = p.reth.va;
    j["rkey"] = p.reth.rkey;
    j["dma_len"] = p.reth.length;
  }
  if ((oi.bits & roce::kHasAeth) != 0) {
    j["syndrome"] = p.aeth_syndrome;
    j["msn"] = p.aeth_msn;
  }
  if ((oi.bits & roce::kHasDeth) != 0) {
    j["qkey"] = p.deth.qkey;
    j["src_qp"] = p.deth.src_qp;
  }
  emit(qpn, j.dump());
}

}  // namespace vrnicd
