#!/usr/bin/env python3
"""A fault-injecting HTTP proxy between ftstack's sink and one ClickHouse
server, for tests/live/fleet_test.sh. Loopback only.

    proxy.py LISTEN_PORT UPSTREAM_PORT MODE NTH STATE_DIR [SECONDS]

Every request is read whole (Content-Length body), sent upstream with
"Connection: close", and the answer read until the server closes. The NTH
INSERT (counting from 1; SELECTs never count) gets MODE's fault, once:

  cut_after_answer  the server answered; the client gets nothing, the
                    connection is closed
  cut_mid_body      half the body goes upstream, then both sides are closed
  hold              the answer is held SECONDS, then the connection closed
  fake_500          the server's answer is replaced by a 500
  kill              half the body goes upstream, STATE_DIR/paused is
                    created, and the proxy waits until the server dies
                    (the test kills it), then closes the client
  refuse            this insert passes; then the proxy stops listening for
                    SECONDS (connections refused) and listens again

STATE_DIR/fired is created when the fault happened, STATE_DIR/ready once
the proxy listens. Runs until killed.
"""
import os
import socket
import sys
import threading
import time
import urllib.parse

LISTEN, UPSTREAM, MODE, NTH, STATE = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3],
                                      int(sys.argv[4]), sys.argv[5])
SECONDS = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
lock = threading.Lock()
inserts = 0
fired = False
listener = None


def touch(name):
    with open(os.path.join(STATE, name), "w") as f:
        f.write("1\n")


def read_request(conn):
    """The request's head (bytes, without the blank line) and body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None, None
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head, body


def closing_head(head):
    """HEAD with its Connection header replaced by "Connection: close"."""
    lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
    return b"\r\n".join(lines + [b"Connection: close"]) + b"\r\n\r\n"


def is_insert(head):
    target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query).get("query", [""])[0]
    return query.lstrip().upper().startswith("INSERT")


def read_all(sock):
    out = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return out
            out += chunk
    except OSError:
        return out


def fault_for(head):
    """MODE when this request is the NTH insert and nothing fired yet."""
    global inserts, fired
    if not is_insert(head):
        return "pass"
    with lock:
        inserts += 1
        if fired or inserts != NTH:
            return "pass"
        fired = True
    return MODE


def refuse_for_a_while():
    global listener
    old, listener = listener, None
    old.shutdown(socket.SHUT_RDWR)  # wakes the accept() and stops listening
    old.close()
    time.sleep(SECONDS)
    listener = listen()


def handle(conn):
    try:
        head, body = read_request(conn)
        if head is None:
            return
        mode = fault_for(head)
        try:
            up = socket.create_connection(("127.0.0.1", UPSTREAM))
        except OSError:
            return            # the server is down: the client sees the close
        with up:
            if mode in ("cut_mid_body", "kill"):
                up.sendall(closing_head(head) + body[: len(body) // 2])
                if mode == "kill":
                    touch("paused")
                    read_all(up)  # until the server dies
                touch("fired")
                return
            up.sendall(closing_head(head) + body)
            answer = read_all(up)
        if mode == "cut_after_answer":
            touch("fired")
            return
        if mode == "hold":
            touch("fired")
            time.sleep(SECONDS)
            return
        if mode == "fake_500":
            msg = b"proxy: 500 after the server wrote\n"
            answer = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n%s" % (len(msg), msg))
            touch("fired")
        conn.sendall(answer)
        if mode == "refuse":
            touch("fired")
            threading.Thread(target=refuse_for_a_while, daemon=True).start()
    except OSError:
        pass
    finally:
        conn.close()


def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", LISTEN))
    s.listen(64)
    return s


def main():
    global listener
    listener = listen()
    touch("ready")
    while True:
        s = listener
        if s is None:
            time.sleep(0.05)
            continue
        try:
            conn, _ = s.accept()
        except OSError:
            continue          # closed by refuse_for_a_while
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


main()
