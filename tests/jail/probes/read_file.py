"""Probe: read one file. Input {"path": P} (relative to the service folder, or absolute).
"escaped" means the read succeeded; the first bytes read are returned, so that a leaked secret
shows up in the response (the tests check from outside that it never does)."""
import errno
import json
import sys


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    path = inp["path"]
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
    except OSError as e:
        return {"escaped": False, "detail": err(e)}
    return {"escaped": True, "detail": f"read {len(data)} bytes from {path}",
            "content": data[:256].decode("utf-8", "replace")}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
