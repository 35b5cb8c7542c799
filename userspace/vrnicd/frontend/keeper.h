// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The keeper: the device's connection to QEMU outlives vrnicd.
//
// QEMU's ivshmem-doorbell takes its shared memory (BAR2) and its eventfds
// from the server once, when the device is created, and never again: it
// refuses a second shared memory, and its chardev does not reconnect.  A
// vrnicd that dies takes the device's only copies of those with it, and a
// new vrnicd could never reach the guest's device again.  (Hot-unplugging
// the device to plug in a new one is no way out: QEMU 7.2 leaves the old
// device's interrupt eventfd handlers behind under TCG and crashes when
// the numbers are reused.)
//
// So once QEMU is connected, vrnicd forks a keeper: a small process that
// holds duplicates of the connection, BAR2 and every eventfd, and serves
// them on a UNIX socket next to the ivshmem socket (SOCKET.keeper).  A new
// vrnicd for the same socket takes them over and is the same device to the
// guest, as firmware restarted behind a PCI function is: the driver sees
// the device reset, resets it, and probes it again.  Only one vrnicd serves
// the device at a time: the keeper hands it over only once the last one's
// lease (a socket it holds) has closed.  The keeper exits when QEMU goes
// away.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/fd.h"

namespace vrnicd {

// What the keeper holds for the device, and the lease on it: the keeper
// hands the device to no other vrnicd while the lease is open.
struct KeptDevice {
  UniqueFd lease;
  UniqueFd shm;                     // BAR2
  UniqueFd client;                  // QEMU's ivshmem connection
  std::vector<UniqueFd> doorbells;  // the device peer's eventfds, per channel
  std::vector<UniqueFd> irqs;       // QEMU's MSI-X eventfds, per vector
};

// SOCKET.keeper, the keeper's socket for the ivshmem socket path.
std::string keeper_path(const std::string& ivshmem_socket);

// Fork a keeper serving dups of these fds on path, to the next vrnicd once
// *lease (ours) is closed.  It lives until QEMU's connection closes.  False
// (with *err) when it could not be started.
bool start_keeper(const std::string& path, int shm, int client, const std::vector<int>& doorbells,
                  const std::vector<int>& irqs, UniqueFd* lease, std::string* err);

// Take the device over from the keeper at path.  nullopt with *err empty
// when there is no keeper; nullopt with *err set when one answered with
// something that does not fit (num_channels doorbells and num_vectors
// interrupt eventfds are expected) or another vrnicd holds the lease.
// *busy (if given) says which: the lease is someone else's.
std::optional<KeptDevice> adopt_from_keeper(const std::string& path, uint32_t num_channels,
                                            uint32_t num_vectors, std::string* err,
                                            bool* busy = nullptr);

// adopt_from_keeper() once connected to a trusted keeper (path names it in
// errors): its answer read from sock, checked, and taken.  The keeper is
// trusted but its answer is checked all the same (tests/fuzz/fuzz_keeper).
std::optional<KeptDevice> keeper_handshake(UniqueFd sock, const std::string& path,
                                           uint32_t num_channels, uint32_t num_vectors,
                                           std::string* err, bool* busy = nullptr);

}  // namespace vrnicd
