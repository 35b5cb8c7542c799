// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: the keeper handshake, from the side of a new vrnicd
// taking a device over.  The input is what the keeper sends: any bytes as
// its header, with any number of fds (eventfds) passed beside them.  A
// device is taken only when the header and the fds fit exactly; either way
// no fd is leaked and nothing crashes.
#include <dirent.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "base/fd.h"
#include "frontend/keeper.h"

namespace {

constexpr uint32_t kChannels = 2;
constexpr uint32_t kVectors = 4;

size_t open_fds() {
  size_t n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) {
    std::abort();
  }
  while (::readdir(d) != nullptr) {
    ++n;
  }
  ::closedir(d);
  return n;
}

bool valid(const vrnicd::UniqueFd& fd) { return fd.valid() && ::fcntl(fd.get(), F_GETFD) >= 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const size_t before = open_fds();
  {
    std::array<int, 2> sv{};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv.data()) != 0) {
      std::abort();
    }
    vrnicd::UniqueFd keeper(sv[0]);
    vrnicd::UniqueFd ours(sv[1]);
    const size_t nfds = data[0] % 16;
    std::vector<vrnicd::UniqueFd> passed;
    for (size_t i = 0; i < nfds; ++i) {
      passed.emplace_back(::eventfd(0, EFD_CLOEXEC));
    }
    std::span<const uint8_t> body(data + 1, size - 1);
    iovec iov{const_cast<uint8_t*>(body.data()), body.size()};  // NOLINT: sendmsg does not write
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 16)> ctrl{};
    if (nfds > 0 && !body.empty()) {
      msg.msg_control = ctrl.data();
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
      for (size_t i = 0; i < nfds; ++i) {
        const int fd = passed[i].get();
        std::memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));  // NOLINT
      }
    }
    if (!body.empty() && ::sendmsg(keeper.get(), &msg, MSG_NOSIGNAL) < 0) {
      std::abort();
    }
    keeper.reset();  // all it says: the handshake never waits
    passed.clear();
    std::string err;
    bool busy = false;
    auto kept = vrnicd::keeper_handshake(std::move(ours), "fuzz", kChannels, kVectors, &err, &busy);
    if (kept) {
      if (!err.empty() || busy || !valid(kept->lease) || !valid(kept->shm) ||
          !valid(kept->client) || kept->doorbells.size() != kChannels ||
          kept->irqs.size() != kVectors) {
        std::abort();
      }
      for (const auto& v : {&kept->doorbells, &kept->irqs}) {
        for (const auto& fd : *v) {
          if (!valid(fd)) {
            std::abort();
          }
        }
      }
    } else if (err.empty()) {
      std::abort();  // a refusal says why
    }
  }
  if (open_fds() != before) {
    std::abort();  // an fd leaked
  }
  return 0;
}
