// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The work and completion queue entries of uapi/vrnic-hw.h, encoded and
// decoded in one place for all of userspace: libvrnic builds send and
// receive WQEs and reads CQEs with it, vrnicd parses WQEs and writes CQEs
// with it, and the host test harness plays the driver with it.  (The kernel
// has its own C copy of the WQE builder in drivers/vrnic/vrnic_wqe.c;
// tests/unit/kcodec holds it to the decoders here.)
//
// Everything here is CPU order; the entries are little endian.  Decoders
// treat the entry as hostile: every count and length is checked against
// the entry's stride, and a malformed entry is reported, never read past.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "hw_access.h"
#include "vrnic-hw.h"

namespace vrnic {

// A scatter/gather element.
struct WqeSge {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

// ---------------------------------------------------------------------------
// Send WQEs

// Where a send WQE's data (SGEs or inline bytes) starts.
constexpr size_t sqe_data_offset(bool ud) noexcept {
  return ud ? VRNIC_SQE_UD_DATA_OFFSET : VRNIC_SQE_DATA_OFFSET;
}

// Builds a send WQE in place, field by field: begin() first, then the
// fields the opcode needs, then the data (SGEs or inline).  The slot is the
// producer's until it publishes the producer index, so plain stores do.
class SqeWriter {
 public:
  SqeWriter() noexcept = default;
  SqeWriter(std::byte* slot, size_t stride, bool ud) noexcept
      : slot_(slot), stride_(stride), ud_(ud) {}

  [[nodiscard]] bool valid() const noexcept { return slot_ != nullptr; }

  // The header: every other field 0.  flags are VRNIC_WQE_CTRL_SIGNALED,
  // _SOLICITED and _FENCE.
  void begin(uint64_t wr_id, uint32_t opcode, uint32_t flags) const noexcept {
    vrnic_sqe h{};
    h.wr_id = to_le64(wr_id);
    h.ctrl = to_le32(
        field_prep<VRNIC_WQE_CTRL_OPCODE_MASK>(opcode) |
        (flags & (VRNIC_WQE_CTRL_SIGNALED | VRNIC_WQE_CTRL_SOLICITED | VRNIC_WQE_CTRL_FENCE)));
    std::memcpy(slot_, &h, sizeof(h));
  }
  void set_imm(uint32_t imm) const noexcept { put(offsetof(vrnic_sqe, imm_data), to_le32(imm)); }
  void set_remote(uint64_t addr, uint32_t rkey) const noexcept {
    put(offsetof(vrnic_sqe, remote_addr), to_le64(addr));
    put(offsetof(vrnic_sqe, rkey), to_le32(rkey));
  }
  // BIND_MW (after begin()): the window's new key, the range of the MR of
  // mr_lkey, and the window's rights.
  void set_bind(uint32_t rkey, uint64_t addr, uint64_t length, uint32_t mr_lkey,
                uint32_t access) const noexcept {
    put(offsetof(vrnic_sqe_bind_mw, rkey), to_le32(rkey));
    put(offsetof(vrnic_sqe_bind_mw, addr), to_le64(addr));
    put(offsetof(vrnic_sqe_bind_mw, length), to_le64(length));
    put(offsetof(vrnic_sqe_bind_mw, mr_lkey), to_le32(mr_lkey));
    put(offsetof(vrnic_sqe_bind_mw, access), to_le32(access));
  }
  // LOCAL_INV and SEND_WITH_INV: the key to invalidate.
  void set_invalidate(uint32_t key) const noexcept {
    put(offsetof(vrnic_sqe, imm_data), to_le32(key));
  }
  void set_atomic(uint64_t compare_add, uint64_t swap) const noexcept {
    put(offsetof(vrnic_sqe, compare_add), to_le64(compare_add));
    put(offsetof(vrnic_sqe, swap), to_le64(swap));
  }
  // ATOMIC_WRITE: the 8 bytes at data, as they are in memory.
  void set_atomic_write(const void* data) const noexcept {
    std::memcpy(slot_ + offsetof(vrnic_sqe, compare_add), data, sizeof(uint64_t));
  }
  // FLUSH (after set_remote()): VRNIC_FLUSH_* type and level, and the
  // range's length.
  void set_flush(uint32_t type_level, uint32_t length) const noexcept {
    put(offsetof(vrnic_sqe, imm_data), to_le32(type_level));
    put(offsetof(vrnic_sqe, length), to_le32(length));
  }
  // UD: where the datagram goes.
  void set_ud(const vrnic_av& av, uint32_t remote_qpn, uint32_t remote_qkey) const noexcept {
    std::memcpy(slot_ + VRNIC_SQE_DATA_OFFSET, &av, sizeof(av));
    put(offsetof(vrnic_sqe, remote_qpn), to_le32(remote_qpn));
    put(offsetof(vrnic_sqe, remote_qkey), to_le32(remote_qkey));
  }
  // The SGEs (any type with addr, length and lkey).  false if they do not
  // fit the stride.
  template <typename S>
  [[nodiscard]] bool set_sges(std::span<const S> sges) const noexcept {
    const size_t data = sqe_data_offset(ud_);
    if (sges.size() > VRNIC_MAX_SGE || data + sges.size() * sizeof(vrnic_sge) > stride_) {
      return false;
    }
    for (size_t i = 0; i < sges.size(); ++i) {
      const vrnic_sge hw{to_le64(sges[i].addr), to_le32(sges[i].length), to_le32(sges[i].lkey)};
      std::memcpy(slot_ + data + i * sizeof(hw), &hw, sizeof(hw));
    }
    set_ctrl((ctrl() & ~(VRNIC_WQE_CTRL_NUM_SGE_MASK | VRNIC_WQE_CTRL_INLINE)) |
             field_prep<VRNIC_WQE_CTRL_NUM_SGE_MASK>(static_cast<uint32_t>(sges.size())));
    return true;
  }
  // Inline data gathered from buffers (any type with addr and length, addr
  // a pointer in this process).  false if it does not fit the stride.
  template <typename B>
  [[nodiscard]] bool set_inline(std::span<const B> bufs) const noexcept {
    const size_t data = sqe_data_offset(ud_);
    size_t total = 0;
    for (const B& b : bufs) {
      if (b.length > stride_ - data - total) {
        return false;
      }
      if (b.length != 0) {
        std::memcpy(slot_ + data + total, b.addr, b.length);
      }
      total += b.length;
    }
    put(offsetof(vrnic_sqe, length), to_le32(static_cast<uint32_t>(total)));
    set_ctrl((ctrl() & ~VRNIC_WQE_CTRL_NUM_SGE_MASK) | VRNIC_WQE_CTRL_INLINE);
    return true;
  }

 private:
  template <typename T>
  void put(size_t off, T v) const noexcept {
    std::memcpy(slot_ + off, &v, sizeof(v));
  }
  [[nodiscard]] uint32_t ctrl() const noexcept {
    uint32_t v = 0;
    std::memcpy(&v, slot_ + offsetof(vrnic_sqe, ctrl), sizeof(v));
    return le32(v);
  }
  void set_ctrl(uint32_t v) const noexcept { put(offsetof(vrnic_sqe, ctrl), to_le32(v)); }

  std::byte* slot_ = nullptr;
  size_t stride_ = 0;
  bool ud_ = false;
};

// A REG_MR WQE's registration (struct vrnic_sqe_reg_mr).
struct FastRegFields {
  uint32_t key = 0;
  uint64_t iova = 0;
  uint64_t length = 0;
  uint64_t pbl_addr = 0;
  uint32_t access = 0;
  uint32_t npages = 0;
  uint32_t page_shift = 0;
};

// A BIND_MW WQE's binding (struct vrnic_sqe_bind_mw).
struct BindMwFields {
  uint32_t rkey = 0;
  uint64_t addr = 0;
  uint64_t length = 0;
  uint32_t mr_lkey = 0;
  uint32_t access = 0;
};

// Whether the device knows a send WQE opcode.
constexpr bool sqe_opcode_known(uint32_t opcode) noexcept {
  return opcode <= VRNIC_WQE_SEND_WITH_INV || opcode == VRNIC_WQE_FLUSH ||
         opcode == VRNIC_WQE_ATOMIC_WRITE || opcode == VRNIC_WQE_REG_MR;
}

// The WQEs whose operands are all in the header: no SGEs, no data.
constexpr bool sqe_opcode_header_only(uint32_t opcode) noexcept {
  return opcode == VRNIC_WQE_ATOMIC_WRITE || opcode == VRNIC_WQE_FLUSH;
}

// The memory management WQEs: no SGEs, no data.
constexpr bool sqe_opcode_local(uint32_t opcode) noexcept {
  return opcode == VRNIC_WQE_REG_MR || opcode == VRNIC_WQE_LOCAL_INV || opcode == VRNIC_WQE_BIND_MW;
}

// A send WQE as the device reads it.
struct SqeFields {
  uint64_t wr_id = 0;
  uint32_t opcode = 0;  // enum vrnic_wqe_opcode
  bool signaled = false;
  bool solicited = false;
  bool fence = false;
  bool is_inline = false;
  uint32_t imm = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  uint32_t remote_qpn = 0;  // UD
  uint32_t remote_qkey = 0;
  vrnic_av av{};              // UD
  uint32_t flush_length = 0;  // FLUSH: the range's length
  uint32_t num_sge = 0;
  std::array<WqeSge, VRNIC_MAX_SGE> sge{};
  std::span<const std::byte> inline_data;  // within the entry decoded
  FastRegFields reg;                       // REG_MR
  BindMwFields bind;                       // BIND_MW
};

// The fields of a send WQE's header, whatever its opcode.
inline void sqe_parse_header(const vrnic_sqe& h, SqeFields* out) noexcept {
  const uint32_t ctrl = le32(h.ctrl);
  out->wr_id = le64(h.wr_id);
  out->opcode = field_get<VRNIC_WQE_CTRL_OPCODE_MASK>(ctrl);
  out->signaled = (ctrl & VRNIC_WQE_CTRL_SIGNALED) != 0;
  out->solicited = (ctrl & VRNIC_WQE_CTRL_SOLICITED) != 0;
  out->fence = (ctrl & VRNIC_WQE_CTRL_FENCE) != 0;
  out->is_inline = (ctrl & VRNIC_WQE_CTRL_INLINE) != 0;
  out->imm = le32(h.imm_data);
  out->remote_addr = le64(h.remote_addr);
  out->rkey = le32(h.rkey);
  out->compare_add = le64(h.compare_add);
  out->swap = le64(h.swap);
  out->remote_qpn = le32(h.remote_qpn);
  out->remote_qkey = le32(h.remote_qkey);
  out->flush_length = 0;
  out->num_sge = 0;
  out->inline_data = {};
}

// A memory management WQE's own layout (REG_MR, BIND_MW; LOCAL_INV has
// only the header).  They carry no data.
inline uint32_t sqe_parse_local(std::span<const std::byte> entry, uint32_t ctrl,
                                SqeFields* out) noexcept {
  if (out->opcode == VRNIC_WQE_REG_MR) {
    vrnic_sqe_reg_mr r{};
    std::memcpy(&r, entry.data(), sizeof(r));
    out->reg = {le32(r.key),    le64(r.iova),   le64(r.length),    le64(r.pbl_addr),
                le32(r.access), le32(r.npages), le32(r.page_shift)};
  } else if (out->opcode == VRNIC_WQE_BIND_MW) {
    vrnic_sqe_bind_mw b{};
    std::memcpy(&b, entry.data(), sizeof(b));
    out->bind = {le32(b.rkey), le64(b.addr), le64(b.length), le32(b.mr_lkey), le32(b.access)};
  }
  return out->is_inline || field_get<VRNIC_WQE_CTRL_NUM_SGE_MASK>(ctrl) != 0 ? VRNIC_VERR_WQE_LAYOUT
                                                                             : VRNIC_VERR_NONE;
}

// Parse a send WQE (the stride bytes of its slot, copied out of the ring
// by the caller).  Returns VRNIC_VERR_NONE, or why it is malformed:
// VRNIC_VERR_WQE_OPCODE for an unknown opcode, VRNIC_VERR_WQE_LAYOUT for
// SGEs or inline data that do not fit the entry.  The header fields are
// filled in either way.
inline uint32_t sqe_parse(std::span<const std::byte> entry, bool ud, SqeFields* out) noexcept {
  vrnic_sqe h{};
  const size_t data = sqe_data_offset(ud);
  if (entry.size() < data) {
    return VRNIC_VERR_WQE_LAYOUT;
  }
  std::memcpy(&h, entry.data(), sizeof(h));
  const uint32_t ctrl = le32(h.ctrl);
  sqe_parse_header(h, out);
  if (!sqe_opcode_known(out->opcode)) {
    return VRNIC_VERR_WQE_OPCODE;
  }
  if (sqe_opcode_local(out->opcode)) {
    return sqe_parse_local(entry, ctrl, out);
  }
  if (sqe_opcode_header_only(out->opcode)) {
    // Its operands are in the header: SGEs or inline bytes are a layout
    // error.
    if (out->opcode == VRNIC_WQE_FLUSH) {
      out->flush_length = le32(h.length);
    }
    return out->is_inline || field_get<VRNIC_WQE_CTRL_NUM_SGE_MASK>(ctrl) != 0
               ? VRNIC_VERR_WQE_LAYOUT
               : VRNIC_VERR_NONE;
  }
  if (ud) {
    std::memcpy(&out->av, entry.data() + VRNIC_SQE_DATA_OFFSET, sizeof(out->av));
  }
  if (out->is_inline) {
    const uint32_t len = le32(h.length);
    if (len > entry.size() - data) {
      return VRNIC_VERR_WQE_LAYOUT;
    }
    out->inline_data = entry.subspan(data, len);
    return VRNIC_VERR_NONE;
  }
  const uint32_t nsge = field_get<VRNIC_WQE_CTRL_NUM_SGE_MASK>(ctrl);
  if (nsge > VRNIC_MAX_SGE || data + nsge * sizeof(vrnic_sge) > entry.size()) {
    return VRNIC_VERR_WQE_LAYOUT;
  }
  for (uint32_t i = 0; i < nsge; ++i) {
    vrnic_sge s{};
    std::memcpy(&s, entry.data() + data + i * sizeof(s), sizeof(s));
    out->sge[i] = {le64(s.addr), le32(s.length), le32(s.lkey)};
  }
  out->num_sge = nsge;
  return VRNIC_VERR_NONE;
}

// ---------------------------------------------------------------------------
// Receive WQEs (receive rings and SRQs)

// Write a receive WQE into a slot of 2^log_stride bytes.  false if its SGEs
// do not fit.
template <typename S>
bool rqe_write(std::byte* slot, uint32_t log_stride, uint64_t wr_id,
               std::span<const S> sges) noexcept {
  if (sges.size() > VRNIC_MAX_SGE ||
      sizeof(vrnic_rqe) + sges.size() * sizeof(vrnic_sge) > (size_t{1} << log_stride)) {
    return false;
  }
  const vrnic_rqe h{to_le64(wr_id), to_le32(static_cast<uint32_t>(sges.size())), 0};
  std::memcpy(slot, &h, sizeof(h));
  for (size_t i = 0; i < sges.size(); ++i) {
    const vrnic_sge hw{to_le64(sges[i].addr), to_le32(sges[i].length), to_le32(sges[i].lkey)};
    std::memcpy(slot + sizeof(h) + i * sizeof(hw), &hw, sizeof(hw));
  }
  return true;
}

struct RqeFields {
  uint64_t wr_id = 0;
  uint32_t num_sge = 0;
  std::array<WqeSge, VRNIC_MAX_SGE> sge{};
};

// Parse a receive WQE (its slot's bytes).  Returns VRNIC_VERR_NONE, or
// VRNIC_VERR_RECV_WQE when its SGEs do not fit.
inline uint32_t rqe_parse(std::span<const std::byte> entry, RqeFields* out) noexcept {
  vrnic_rqe h{};
  if (entry.size() < sizeof(h)) {
    return VRNIC_VERR_RECV_WQE;
  }
  std::memcpy(&h, entry.data(), sizeof(h));
  out->wr_id = le64(h.wr_id);
  const uint32_t nsge = le32(h.num_sge);
  out->num_sge = 0;
  if (nsge > VRNIC_MAX_SGE || sizeof(h) + nsge * sizeof(vrnic_sge) > entry.size()) {
    return VRNIC_VERR_RECV_WQE;
  }
  for (uint32_t i = 0; i < nsge; ++i) {
    vrnic_sge s{};
    std::memcpy(&s, entry.data() + sizeof(h) + i * sizeof(s), sizeof(s));
    out->sge[i] = {le64(s.addr), le32(s.length), le32(s.lkey)};
  }
  out->num_sge = nsge;
  return VRNIC_VERR_NONE;
}

// ---------------------------------------------------------------------------
// Completions

struct CqeFields {
  uint64_t wr_id = 0;
  uint32_t opcode = VRNIC_CQE_SEND;  // enum vrnic_cqe_opcode
  uint32_t status = VRNIC_CQE_SUCCESS;
  uint32_t vendor_err = 0;
  uint32_t byte_len = 0;
  bool has_imm = false;
  bool has_inv = false;  // a SEND_WITH_INV received: imm is the key invalidated
  uint32_t imm = 0;
  bool grh = false;      // UD receive: a GRH starts the buffer
  bool ipv4 = false;     // ... and it holds an IPv4 header
  bool roce_v1 = false;  // ... or a RoCEv1 GRH, as received
  uint32_t qpn = 0;
  uint32_t src_qp = 0;
  uint32_t wqe_idx = 0;
};

// The device writes entry idx of a CQ ring of 2^log_depth entries: the
// info word, with its owner bit, last.
inline void cqe_write(std::byte* slot, const CqeFields& f, uint32_t idx,
                      uint32_t log_depth) noexcept {
  vrnic_cqe e{};
  e.wr_id = to_le64(f.wr_id);
  e.byte_len = to_le32(f.byte_len);
  e.imm_data = to_le32(f.imm);
  e.qpn = to_le32(f.qpn);
  e.src_qp = to_le32(f.src_qp);
  e.wqe_idx = to_le32(f.wqe_idx);
  const uint32_t info =
      field_prep<VRNIC_CQE_OPCODE_MASK>(f.opcode) | field_prep<VRNIC_CQE_STATUS_MASK>(f.status) |
      field_prep<VRNIC_CQE_VENDOR_ERR_MASK>(f.vendor_err) | (f.has_imm ? VRNIC_CQE_F_IMM : 0) |
      (f.has_inv ? VRNIC_CQE_F_INV : 0) | (f.grh ? VRNIC_CQE_F_GRH : 0) |
      (f.ipv4 ? VRNIC_CQE_F_IPV4 : 0) | (f.roce_v1 ? VRNIC_CQE_F_ROCE_V1 : 0) |
      field_prep<VRNIC_CQE_OWNER_MASK>(ring_owner(idx, log_depth));
  std::memcpy(slot, &e, offsetof(vrnic_cqe, info));
  // The owner word last: the consumer reads nothing before it.
  store_release32(slot + offsetof(vrnic_cqe, info), to_le32(info));
}

// The consumer reads entry ci if the device has written it.  An opcode or
// status outside the uapi lists (a device bug) reads as GENERAL_ERR, as the
// kernel driver reports it too.
inline bool cqe_read(const std::byte* slot, uint32_t ci, uint32_t log_depth,
                     CqeFields* out) noexcept {
  const uint32_t info = le32(load_acquire32(slot + offsetof(vrnic_cqe, info)));
  if (field_get<VRNIC_CQE_OWNER_MASK>(info) != ring_owner(ci, log_depth)) {
    return false;
  }
  vrnic_cqe e{};
  std::memcpy(&e, slot, offsetof(vrnic_cqe, info));  // after the acquire above
  out->wr_id = le64(e.wr_id);
  out->byte_len = le32(e.byte_len);
  out->imm = le32(e.imm_data);
  out->qpn = le32(e.qpn);
  out->src_qp = le32(e.src_qp);
  out->wqe_idx = le32(e.wqe_idx);
  out->opcode = field_get<VRNIC_CQE_OPCODE_MASK>(info);
  out->status = field_get<VRNIC_CQE_STATUS_MASK>(info);
  out->vendor_err = field_get<VRNIC_CQE_VENDOR_ERR_MASK>(info);
  out->has_imm = (info & VRNIC_CQE_F_IMM) != 0;
  out->has_inv = (info & VRNIC_CQE_F_INV) != 0;
  out->grh = (info & VRNIC_CQE_F_GRH) != 0;
  out->ipv4 = (info & VRNIC_CQE_F_IPV4) != 0;
  out->roce_v1 = (info & VRNIC_CQE_F_ROCE_V1) != 0;
  if (vrnic_cqe_opcode_valid(out->opcode) == 0 || vrnic_cqe_status_valid(out->status) == 0) {
    out->status = VRNIC_CQE_GENERAL_ERR;
    out->opcode = VRNIC_CQE_SEND;
  }
  return true;
}

// Entry idx of a CQ ring, already read (its owner bit matched): move it
// to entry to_idx of the same ring, with to_idx's owner bit.  For the
// consumer only, on entries the device has written and will not touch
// until the consumer index passes them.
inline void cqe_move(const std::byte* from, std::byte* to, uint32_t to_idx,
                     uint32_t log_depth) noexcept {
  uint32_t info = le32(load_acquire32(from + offsetof(vrnic_cqe, info)));
  info = (info & ~VRNIC_CQE_OWNER_MASK) |
         field_prep<VRNIC_CQE_OWNER_MASK>(ring_owner(to_idx, log_depth));
  std::memmove(to, from, offsetof(vrnic_cqe, info));
  store_release32(to + offsetof(vrnic_cqe, info), to_le32(info));
}

}  // namespace vrnic
