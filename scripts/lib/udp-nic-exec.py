#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""udp-nic-exec.py LPORT RPORT COMMAND [ARG...]: an rxe guest's NIC socket.

A UDP socket on 127.0.0.1, bound to LPORT and connected to RPORT, then
exec of COMMAND (QEMU) with @NICFD@ in its arguments replaced by the
socket's fd.  QEMU's own socket (local.type=inet) gets
net.core.rmem_default, some 25 jumbo frames: a burst from vrnicd while the
TCG guest is busy overflows it, and every drop costs a go-back-N resend.
16 MiB holds the burst (beyond net.core.rmem_max only as root:
SO_RCVBUFFORCE).
"""
import os
import socket
import sys

SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33
BUFFER = 16 << 20


def main():
    lport, rport = int(sys.argv[1]), int(sys.argv[2])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for force, plain in ((SO_RCVBUFFORCE, socket.SO_RCVBUF),
                         (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
        try:
            s.setsockopt(socket.SOL_SOCKET, force, BUFFER)
        except PermissionError:
            s.setsockopt(socket.SOL_SOCKET, plain, BUFFER)
    s.bind(("127.0.0.1", lport))
    s.connect(("127.0.0.1", rport))
    os.set_inheritable(s.fileno(), True)
    args = [a.replace("@NICFD@", str(s.fileno())) for a in sys.argv[3:]]
    os.execvp(args[0], args)


if __name__ == "__main__":
    main()
