#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""nic-queues.py QMP_SOCKET GUEST_RAM: a guest's virtio-net queues.

As QEMU sees them (its QMP socket) and as the guest left them in its RAM:
which side a stalled NIC waits for.  avail is the guest's producer index,
last_avail how far QEMU took, used its completions; the event fields say
when each side wants to be told next (VIRTIO_F_EVENT_IDX).
"""
import json
import socket
import struct
import sys


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(5)
        self.sock.connect(path)
        self.f = self.sock.makefile("rw")
        self.f.readline()  # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.f.flush()
        while True:
            r = json.loads(self.f.readline())
            if "return" in r or "error" in r:
                return r.get("return", r.get("error"))


def main():
    qmp = Qmp(sys.argv[1])
    with open(sys.argv[2], "rb") as ram:
        def u16(addr):
            ram.seek(addr)
            return struct.unpack("<H", ram.read(2))[0]

        for dev in qmp.cmd("x-query-virtio"):
            if dev["name"] != "virtio-net":
                continue
            for q, name in ((0, "rx"), (1, "tx")):
                st = qmp.cmd("x-query-virtio-queue-status", path=dev["path"], queue=q)
                n, avail, used = st["vring-num"], st["vring-avail"], st["vring-used"]
                print(f"{name}: guest avail {u16(avail + 2)} flags {u16(avail)} used_event "
                      f"{u16(avail + 4 + 2 * n)}; QEMU last_avail {st['last-avail-idx']} "
                      f"shadow {st['shadow-avail-idx']} used {st['used-idx']} "
                      f"signalled {st['signalled-used']} inuse {st['inuse']}; "
                      f"used flags {u16(used)} avail_event {u16(used + 4 + 8 * n)}")


if __name__ == "__main__":
    main()
