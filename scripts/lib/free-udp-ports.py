#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""free-udp-ports.py: print BASE, where UDP ports BASE and BASE + 1 on
127.0.0.1 are free now (the two ends of vm-run's UDP cable)."""
import socket
import sys


def main():
    for base in range(20000, 60000, 2):
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
