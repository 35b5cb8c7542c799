#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Reliable Datagram Sockets over RDMA, for vrnic_pair_rds.sh.

  rds_check.py recv LOCAL_IP PORT COUNT
  rds_check.py send LOCAL_IP PORT PEER_IP PEER_PORT COUNT

Both sides bind an AF_RDS socket on the IB transport (SO_RDS_TRANSPORT
RDS_TRANS_IB, so the kernel cannot fall back to TCP) and say which
transport they got.  The sender sends COUNT messages of 1 B to 128 KiB
(an RDS message may be at most half the socket's send buffer, and 128 KiB
fits the default wmem_max), each a sequence number, its size and bytes
derived from both; then it waits for the receiver's verdict.  The
receiver checks that every message arrives once, in order, from the
sender, with every byte right, and answers with the number it checked.
Each side prints what it found and exits 0 only when all is well.
"""
import hashlib
import socket
import struct
import sys

SOL_RDS = 276
SO_RDS_TRANSPORT = 8
RDS_TRANS_IB = 0
SIZES = (1, 7, 64, 1000, 4096, 8000, 65536, 100000, 131072)
HEADER = struct.Struct("<II")


def payload(seq, size):
    """The bytes of message seq: its header, then bytes derived from both."""
    head = HEADER.pack(seq, size)
    return (head + hashlib.shake_256(head).digest(max(size - HEADER.size, 0)))[:size]


def size_of(seq):
    return SIZES[seq % len(SIZES)]


def rds_socket(ip, port):
    sock = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    sock.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB)
    sock.bind((ip, port))
    transport = sock.getsockopt(SOL_RDS, SO_RDS_TRANSPORT)
    print(f"bound {ip}:{port}, transport {'IB' if transport == RDS_TRANS_IB else transport}")
    if transport != RDS_TRANS_IB:
        sys.exit(1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    return sock


def receive(ip, port, count):
    sock = rds_socket(ip, port)
    sock.settimeout(120)
    good = 0
    sender = None
    for seq in range(count):
        data, addr = sock.recvfrom(2 << 20)
        sender = sender or addr
        want = payload(seq, size_of(seq))
        if addr != sender or data != want:
            got = HEADER.unpack(data[:HEADER.size]) if len(data) >= HEADER.size else None
            print(f"message {seq}: {len(data)} bytes from {addr}, header {got}: "
                  f"want {len(want)} bytes from {sender}")
            break
        good += 1
    print(f"received {good} of {count} messages in order, every byte right")
    sock.sendto(struct.pack("<I", good), sender)
    return good == count


def send(ip, port, peer_ip, peer_port, count):
    sock = rds_socket(ip, port)
    total = 0
    for seq in range(count):
        data = payload(seq, size_of(seq))
        sock.sendto(data, (peer_ip, peer_port))
        total += len(data)
    print(f"sent {count} messages, {total} bytes")
    sock.settimeout(120)
    data, _ = sock.recvfrom(64)
    (good,) = struct.unpack("<I", data)
    print(f"the receiver checked {good} of {count}")
    return good == count


def main(argv):
    # The harness starts the sender once it sees "bound": no buffering.
    sys.stdout.reconfigure(line_buffering=True)
    if len(argv) == 5 and argv[1] == "recv":
        ok = receive(argv[2], int(argv[3]), int(argv[4]))
    elif len(argv) == 7 and argv[1] == "send":
        ok = send(argv[2], int(argv[3]), argv[4], int(argv[5]), int(argv[6]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
