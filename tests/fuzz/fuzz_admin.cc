// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: a hostile driver.  The input is a program of register
// writes, guest-RAM writes, raw admin commands and doorbells, run against
// the device model.  Guest RAM is a heap buffer, so any device access
// outside it is caught by AddressSanitizer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/bar2.h"
#include "base/config.h"
#include "base/guest_memory.h"
#include "base/irq.h"
#include "base/log.h"
#include "device/device.h"
#include "hw_access.h"

namespace {

constexpr size_t kRamSize = 256 * 1024;
constexpr uint64_t kSq = 0x1000;
constexpr uint64_t kCq = 0x2000;
constexpr uint64_t kAeq = 0x3000;

class NullIrq final : public vrnicd::IrqSink {
 public:
  void raise(uint32_t /*vector*/) noexcept override {}
};

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      v = (v << 8) | u8();
    }
    return v;
  }
  void bytes(void* dst, size_t n) {
    auto* d = static_cast<uint8_t*>(dst);
    for (size_t i = 0; i < n; ++i) {
      d[i] = u8();
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small tables: the device is built and reset on every input, and with
  // a few objects of each kind an input can also run every table full.
  static const vrnicd::DeviceConfig cfg = [] {
    vrnicd::log_set_level(vrnicd::LogLevel::kError);
    vrnicd::DeviceConfig c;
    for (const char* limit : {"max_qp=16", "max_cq=16", "max_mr=64", "max_pd=8", "max_srq=8",
                              "max_ah=16", "max_eq=4", "max_mcast_grp=4"}) {
      if (!vrnicd::set_limit(c.limits, limit)) {
        __builtin_trap();
      }
    }
    return c;
  }();
  static std::string err;
  static auto bar = vrnicd::Bar2::create(64 * 1024, &err);

  std::vector<std::byte> ram(kRamSize);
  vrnicd::GuestMemory mem({{0, kRamSize, ram.data()}});
  NullIrq irq;
  vrnicd::Device dev(cfg, *bar, mem, irq);
  dev.init_registers_st();

  // Start from a working admin queue so that commands get executed.
  auto set = [&](uint32_t off, uint32_t v) { bar->set_reg(off, v); };
  set(VRNIC_REG_AQ_SQ_BASE_LO, kSq);
  set(VRNIC_REG_AQ_CQ_BASE_LO, kCq);
  set(VRNIC_REG_AQ_DEPTH, 4);
  set(VRNIC_REG_AEQ_BASE_LO, kAeq);
  set(VRNIC_REG_AEQ_DEPTH, 4);
  set(VRNIC_REG_CTRL, VRNIC_CTRL_ENABLE);
  dev.on_ctrl_doorbell_st();

  Input in(data, size);
  uint32_t pi = 0;
  while (!in.empty()) {
    switch (in.u8() % 6) {
      case 0: {  // a register write in the register page
        const uint32_t off = (in.u8() % (VRNIC_BAR2_PAGE_SIZE / 4)) * 4;
        set(off, in.u32());
        break;
      }
      case 1: {  // scribble on guest RAM
        const uint32_t off = in.u32() % kRamSize;
        const size_t n = std::min<size_t>(in.u8() % 65, kRamSize - off);
        in.bytes(ram.data() + off, n);
        break;
      }
      case 2: {  // one raw admin command, then the doorbell
        vrnic_aq_cmd cmd{};
        in.bytes(&cmd, sizeof(cmd));
        cmd.hdr.opcode = static_cast<uint16_t>(cmd.hdr.opcode % (VRNIC_AQ_OP_MAX + 2));
        std::memcpy(ram.data() + kSq + vrnic::ring_slot(pi, 4) * sizeof(cmd), &cmd, sizeof(cmd));
        set(VRNIC_REG_AQ_SQ_PI, ++pi);
        set(VRNIC_REG_AQ_CQ_CI, bar->reg(VRNIC_REG_AQ_SQ_CI));
        dev.on_ctrl_doorbell_st();
        break;
      }
      case 3:
        dev.on_ctrl_doorbell_st();
        break;
      case 4:
        dev.set_cable_st((in.u8() & 1) != 0);
        break;
      default:
        dev.on_heartbeat_st();
        break;
    }
  }
  return 0;
}
