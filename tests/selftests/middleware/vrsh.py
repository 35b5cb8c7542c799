#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""A tiny rsh for the test guests, which run no sshd.

  vrsh.py serve PORT [N]         run commands for clients: until killed,
                                 or until N sessions have ended
  vrsh.py [-p PORT] [opts] HOST WORD...
                                 run WORD... through /bin/sh on HOST and
                                 exit with its status, as ssh does

Open MPI's mpirun starts its daemons through it (plm_rsh_agent).  The
client sends the command, the server runs it with stdin from /dev/null
and streams its stdout and stderr back as frames; the last frame carries
the exit status.  When the client goes away the command's process group
is killed.  Test-only: there is no authentication, so it listens only on
the guests' private link.
"""

import os
import signal
import socket
import struct
import subprocess
import sys
import threading

DEFAULT_PORT = 18800
FRAME = struct.Struct("!cI")  # kind (o, e, x), payload length


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def send_frame(sock, lock, kind, data):
    with lock:
        sock.sendall(FRAME.pack(kind, len(data)) + data)


def relay(sock, lock, kind, pipe):
    for chunk in iter(lambda: os.read(pipe.fileno(), 65536), b""):
        send_frame(sock, lock, kind, chunk)


def watch_client(sock, proc):
    """Kill the command's process group when the client disconnects."""
    try:
        while sock.recv(1):
            pass
    except OSError:
        pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def serve_one(sock):
    lock = threading.Lock()
    with sock:
        try:
            (length,) = struct.unpack("!I", recv_exact(sock, 4))
            command = recv_exact(sock, length).decode()
        except (EOFError, OSError, UnicodeDecodeError):
            return
        proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        threading.Thread(target=watch_client, args=(sock, proc), daemon=True).start()
        pumps = [threading.Thread(target=relay, args=(sock, lock, k, p))
                 for k, p in ((b"o", proc.stdout), (b"e", proc.stderr))]
        try:
            for t in pumps:
                t.start()
            for t in pumps:
                t.join()
            status = proc.wait()
            send_frame(sock, lock, b"x", struct.pack("!i", status))
        except OSError:
            proc.kill()


def serve(port, sessions):
    srv = socket.create_server(("", port))
    print(f"vrsh: serving on {port}", flush=True)
    workers = []
    while sessions is None or len(workers) < sessions:
        conn, peer = srv.accept()
        print(f"vrsh: session from {peer[0]}", flush=True)
        workers.append(threading.Thread(target=serve_one, args=(conn,), daemon=True))
        workers[-1].start()
    srv.close()
    for w in workers:
        w.join()
    return 0


def client(args):
    port = DEFAULT_PORT
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt == "-p" and args:
            port = int(args.pop(0))
        # other ssh options (-x, -q, ...) mean nothing here
    if len(args) < 2:
        sys.exit("usage: vrsh.py [-p PORT] HOST COMMAND...")
    host, command = args[0], " ".join(args[1:])
    sock = socket.create_connection((host, port), timeout=30)
    sock.settimeout(None)
    data = command.encode()
    sock.sendall(struct.pack("!I", len(data)) + data)
    outs = {b"o": sys.stdout.buffer, b"e": sys.stderr.buffer}
    try:
        while True:
            kind, length = FRAME.unpack(recv_exact(sock, FRAME.size))
            payload = recv_exact(sock, length)
            if kind == b"x":
                (status,) = struct.unpack("!i", payload)
                return status if status >= 0 else 128 - status
            outs[kind].write(payload)
            outs[kind].flush()
    except EOFError:
        print(f"vrsh: {host}: connection closed", file=sys.stderr)
        return 255


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "serve":
        sys.exit(serve(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else None))
    sys.exit(client(sys.argv[1:]))


if __name__ == "__main__":
    main()
