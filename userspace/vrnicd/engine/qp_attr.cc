// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// MODIFY_QP and QUERY_QP: the QP state machine and the attributes each
// transition requires (IBA 11.2.5, as ib_modify_qp_is_ok() has them).  The
// attributes' ranges were checked when the command was decoded
// (admin_verbs.cc); what needs the QP and the port is checked here.
#include <algorithm>

#include "engine/address.h"
#include "engine/port.h"
#include "engine/qp.h"

namespace vrnicd {
namespace {

using roce::QpState;
using roce::QpType;

// What INIT -> RTR needs besides the state.
uint32_t rtr_needs(QpType type) {
  switch (type) {
    case QpType::kRc:
      return VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN |
             VRNIC_QP_ATTR_RQ_PSN | VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER;
    case QpType::kUc:
      return VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN |
             VRNIC_QP_ATTR_RQ_PSN;
    case QpType::kUd:
      return 0;
  }
  return 0;
}

// The transitions the IB specification allows, with the attributes each
// requires.
bool transition_ok(QpState cur, QpState next, QpType type, uint32_t mask) {
  if (next == QpState::kReset || next == QpState::kErr) {
    return true;
  }
  auto has = [&](uint32_t bits) { return (mask & bits) == bits; };
  switch (cur) {
    case QpState::kReset:
      return next == QpState::kInit && has(VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT) &&
             has(type == QpType::kUd ? VRNIC_QP_ATTR_QKEY : VRNIC_QP_ATTR_ACCESS);
    case QpState::kInit:
      return next == QpState::kInit || (next == QpState::kRtr && has(rtr_needs(type)));
    case QpState::kRtr:
      if (next != QpState::kRts) {
        return false;
      }
      if (type == QpType::kRc) {
        return has(VRNIC_QP_ATTR_SQ_PSN | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                   VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_MAX_RD_ATOMIC);
      }
      return has(VRNIC_QP_ATTR_SQ_PSN);
    case QpState::kRts:
    case QpState::kSqd:
      return next == QpState::kRts || next == QpState::kSqd;
    case QpState::kSqe:
      return next == QpState::kRts && type != QpType::kRc;
    case QpState::kErr:
      return false;
  }
  return false;
}

// A send queue's pacing is set as it starts to send (RTR -> RTS) or
// while it sends (RTS -> RTS), as on mlx5.
bool rate_limit_ok(QpState cur, QpState next, uint32_t mask) {
  return (mask & VRNIC_QP_ATTR_RATE_LIMIT) == 0 ||
         ((cur == QpState::kRtr || cur == QpState::kRts) && next == QpState::kRts);
}

}  // namespace

uint8_t Qp::modify(const QpAttrs& a, const Port& port) {
  const QpState cur = tp_.state();
  const QpState next = (a.mask & VRNIC_QP_ATTR_STATE) != 0 ? a.state : cur;
  if (!transition_ok(cur, next, type(), a.mask) || !rate_limit_ok(cur, next, a.mask)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  roce::Path path;
  if ((a.mask & VRNIC_QP_ATTR_AV) != 0 && type() != QpType::kUd &&
      !resolve_path(a.av, qpn(), port, &path)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  apply(a, port, path);
  if (next != cur) {
    if (next == QpState::kErr || next == QpState::kReset) {
      tp_.send_owed_responses();
    }
    tp_.set_state(next);
    if (next == QpState::kReset) {
      reset_rings();
      tp_.set_rate_limit(0, 0);  // RESET forgets every attribute
    }
  }
  return VRNIC_AQ_STATUS_OK;
}

// Store the attributes a sets: in the transport's configuration what the
// protocol uses, in extra_ the rest.
void Qp::apply(const QpAttrs& a, const Port& port, const roce::Path& path) {
  roce::QpConfig& c = tp_.config();
  const auto set = [&](uint32_t bit, auto& field, auto value) {
    if ((a.mask & bit) != 0) {
      field = value;
    }
  };
  set(VRNIC_QP_ATTR_ACCESS, c.access, a.access);
  set(VRNIC_QP_ATTR_DEST_QPN, c.dest_qpn, a.dest_qpn & roce::kQpnMask);
  set(VRNIC_QP_ATTR_QKEY, c.qkey, a.qkey);
  set(VRNIC_QP_ATTR_PKEY_INDEX, extra_.pkey_index, a.pkey_index);
  set(VRNIC_QP_ATTR_PORT, extra_.port, a.port);
  set(VRNIC_QP_ATTR_TIMEOUT, c.timeout, a.timeout);
  set(VRNIC_QP_ATTR_RETRY_CNT, c.retry_cnt, a.retry_cnt);
  set(VRNIC_QP_ATTR_RNR_RETRY, c.rnr_retry, a.rnr_retry);
  set(VRNIC_QP_ATTR_MIN_RNR_TIMER, c.min_rnr_timer, a.min_rnr_timer);
  set(VRNIC_QP_ATTR_MAX_RD_ATOMIC, c.max_rd_atomic, a.max_rd_atomic);
  set(VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC, c.max_dest_rd_atomic, a.max_dest_rd_atomic);
  set(VRNIC_QP_ATTR_SQD_ASYNC_NOTIFY, extra_.sqd_async_notify, a.sqd_async_notify);
  set(VRNIC_QP_ATTR_AV, extra_.av, a.av);
  if ((a.mask & VRNIC_QP_ATTR_PATH_MTU) != 0) {
    extra_.path_mtu = a.path_mtu;
    c.mtu = 128U << std::min<uint32_t>(a.path_mtu, port.active_mtu());
  }
  if ((a.mask & VRNIC_QP_ATTR_AV) != 0 && type() != QpType::kUd) {
    c.path = path;
  }
  if ((a.mask & VRNIC_QP_ATTR_RQ_PSN) != 0) {
    tp_.set_rq_psn(a.rq_psn);
  }
  if ((a.mask & VRNIC_QP_ATTR_SQ_PSN) != 0) {
    tp_.set_sq_psn(a.sq_psn);
  }
  if ((a.mask & VRNIC_QP_ATTR_RATE_LIMIT) != 0) {
    tp_.set_rate_limit(a.rate_limit, a.max_burst);
  }
  if (type() == QpType::kUd) {
    c.mtu = 128U << port.active_mtu();  // datagrams fit the port MTU
  }
}

QpAttrs Qp::query() const {
  const roce::QpConfig& c = cfg();
  QpAttrs a;
  a.state = tp_.state();
  a.access = c.access;
  a.path_mtu = extra_.path_mtu;
  a.dest_qpn = c.dest_qpn;
  a.rq_psn = tp_.rq_psn();
  a.sq_psn = tp_.sq_psn();
  a.qkey = c.qkey;
  a.pkey_index = extra_.pkey_index;
  a.port = extra_.port;
  a.sq_draining = tp_.sq_draining();
  a.timeout = c.timeout;
  a.retry_cnt = c.retry_cnt;
  a.rnr_retry = c.rnr_retry;
  a.min_rnr_timer = c.min_rnr_timer;
  a.max_rd_atomic = c.max_rd_atomic;
  a.max_dest_rd_atomic = c.max_dest_rd_atomic;
  a.sqd_async_notify = extra_.sqd_async_notify;
  a.av = extra_.av;
  a.rate_limit = tp_.rate_limit();
  a.max_burst = tp_.max_burst();
  return a;
}

}  // namespace vrnicd
