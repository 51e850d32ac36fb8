"""Probe: create (or append to) one file. Input {"path": P, "text": T}.
"escaped" means the write succeeded (the file is then checked on the host from outside as well:
a private /tmp may accept the write without the host seeing it)."""
import errno
import json
import os
import sys


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    path = inp["path"]
    text = inp.get("text", "hearth-jail-escape\n").encode()
    try:
        # Append, never truncate: a probe that escapes must not destroy the file it reached.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text)
        finally:
            os.close(fd)
    except OSError as e:
        return {"escaped": False, "detail": err(e)}
    return {"escaped": True, "detail": f"wrote {len(text)} bytes to {path}"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
