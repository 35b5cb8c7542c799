#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""free-udp-ports.py: print BASE, where UDP ports BASE and BASE + 1 on
127.0.0.1 are free now (the two ends of vm-run's UDP cable).  The search
starts at a random pair: two vm-runs that start together (make check
LANES=2) must not both take the first free pair before either binds it."""
import random
import socket
import sys

FIRST, END = 20000, 60000


def main():
    start = random.randrange(FIRST, END, 2)
    for i in range(0, END - FIRST, 2):
        base = FIRST + (start - FIRST + i) % (END - FIRST)
        socks = []
        try:
            for port in (base, base + 1):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                socks.append(s)
                s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
        print(base)
        return 0
    print("free-udp-ports.py: no two free UDP ports", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
