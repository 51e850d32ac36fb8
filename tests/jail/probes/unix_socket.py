"""Probe: reach a unix socket outside the jail by its path. Input {"path": P, "kind": "stream" or
"dgram", "message": M}: every way a handler could try - a new socket (stream, seqpacket, datagram;
also through the raw system call with garbage in the family's upper bits), one end of a
socketpair (datagram, raw, and a stream or seqpacket pair given a destination address or
connected again after its peer closed), and open() of the socket's path. "escaped" means one of
them connected to P or delivered M to it; `attempts` says what each got."""
import ctypes
import errno
import json
import os
import socket
import sys

SYS_SOCKET = 41  # x86_64


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def exchange_stream(s, path, message):
    s.settimeout(2)
    s.connect(path)
    s.sendall(message.encode())
    reply = s.recv(256)
    return "connected, reply " + reply.decode("utf-8", "replace")


def main(inp):
    path, kind, message = inp["path"], inp.get("kind", "stream"), inp.get("message", "ping")
    attempts = {}
    escaped = False

    def attempt(name, fn):
        nonlocal escaped
        try:
            attempts[name] = fn()
            escaped = True
        except OSError as e:
            attempts[name] = err(e)

    def new_socket(type_):
        with socket.socket(socket.AF_UNIX, type_) as s:
            if type_ & 0xf == socket.SOCK_DGRAM:
                s.sendto(message.encode(), path)
                return "sent"
            return exchange_stream(s, path, message)

    attempt("socket", lambda: new_socket(socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM))
    attempt("socket-seqpacket", lambda: new_socket(socket.SOCK_SEQPACKET))
    attempt("socket-nonblock-cloexec", lambda: new_socket(
        (socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM)
        | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC))

    def raw_syscall():
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        type_ = socket.SOCK_STREAM if kind == "stream" else socket.SOCK_DGRAM
        fd = libc.syscall(ctypes.c_long(SYS_SOCKET), ctypes.c_long((1 << 32) | socket.AF_UNIX),
                          ctypes.c_long(type_), ctypes.c_long(0))
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        with socket.socket(fileno=fd) as s:
            if kind == "dgram":
                s.sendto(message.encode(), path)
                return "sent"
            return exchange_stream(s, path, message)

    attempt("socket-syscall-high-bits", raw_syscall)

    def pair_send(type_):
        a, b = socket.socketpair(socket.AF_UNIX, type_)
        with a, b:
            a.sendto(message.encode(), path)
            return "sent"

    attempt("socketpair-dgram-sendto", lambda: pair_send(socket.SOCK_DGRAM))
    attempt("socketpair-raw-sendto", lambda: pair_send(socket.SOCK_RAW))

    def pair_sendmsg(type_):
        a, b = socket.socketpair(socket.AF_UNIX, type_)
        with a, b:
            a.sendmsg([message.encode()], [], 0, path)
            # A seqpacket end ignores the address: the datagram went to its peer, not to P.
            b.settimeout(0.2)
            got = b.recv(256)
            if got:
                raise OSError(errno.EISCONN, "delivered to the peer, address ignored")
            return "sent"

    attempt("socketpair-stream-sendmsg", lambda: pair_sendmsg(socket.SOCK_STREAM))
    attempt("socketpair-seqpacket-sendmsg", lambda: pair_sendmsg(socket.SOCK_SEQPACKET))

    def pair_reconnect(type_):
        a, b = socket.socketpair(socket.AF_UNIX, type_)
        b.close()
        with a:
            return exchange_stream(a, path, message)

    attempt("socketpair-stream-connect-after-close", lambda: pair_reconnect(socket.SOCK_STREAM))
    attempt("socketpair-seqpacket-connect-after-close", lambda: pair_reconnect(socket.SOCK_SEQPACKET))

    def open_path():
        fd = os.open(path, os.O_RDWR)
        os.close(fd)
        return "opened"

    attempt("open", open_path)
    return {"escaped": escaped, "detail": "; ".join(f"{k}: {v}" for k, v in attempts.items()),
            "attempts": attempts}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
