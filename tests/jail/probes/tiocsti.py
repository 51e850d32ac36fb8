"""Probe: TIOCSTI, pushing a character into the input of a terminal (the classic escape from a
process that shares its parent's tty). Tried on fds 0, 1, 2 and on /dev/tty.
Input {"char": C} (default a space). "escaped" means one of these ioctls succeeded.

hearth never hands a handler a terminal, so those fail anyway; "ownPty" tells whether the ioctl
itself is filtered: a child opens a pseudo-terminal of its own, makes it its controlling terminal
and tries TIOCSTI there ("ok" when it worked, which is harmless but means no filter stops it)."""
import errno
import fcntl
import json
import os
import sys
import termios

TIOCSTI = 0x5412


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def own_pty(char):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        message = "ok"
        try:
            os.close(r)
            os.setsid()
            master, slave = os.openpty()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            fcntl.ioctl(slave, TIOCSTI, char)
        except OSError as e:
            message = err(e)
        finally:
            os.write(w, message.encode())
            os._exit(0)
    os.close(w)
    message = os.read(r, 512).decode() or "the child died"
    os.waitpid(pid, 0)
    return message


def main(inp):
    char = inp.get("char", " ").encode()[:1]
    attempts = {}
    for fd in (0, 1, 2):
        try:
            fcntl.ioctl(fd, TIOCSTI, char)
            attempts[f"fd{fd}"] = "ok"
        except OSError as e:
            attempts[f"fd{fd}"] = err(e)
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        try:
            fcntl.ioctl(tty, TIOCSTI, char)
            attempts["/dev/tty"] = "ok"
        except OSError as e:
            attempts["/dev/tty"] = "ioctl: " + err(e)
        finally:
            os.close(tty)
    except OSError as e:
        attempts["/dev/tty"] = "open: " + err(e)
    escaped = [k for k, v in attempts.items() if v == "ok"]
    return {"escaped": bool(escaped), "detail": "; ".join(f"{k}: {v}" for k, v in attempts.items()),
            "ownPty": own_pty(char)}


if __name__ == "__main__":
    # Run by hand on a terminal, it takes no input (reading it would wait for the terminal).
    text = "" if sys.stdin.isatty() else sys.stdin.read()
    print(json.dumps(main(json.loads(text or "null") or {})))
