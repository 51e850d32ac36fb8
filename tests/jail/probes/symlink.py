"""Probe: go through a symbolic link that points out of the allowed folder.
Input {"link": L, "target": T (optional: create L -> T first), "op": "read" | "write",
"name": N (write: the file created inside the folder the link points to)}.
"escaped" means the read or write through the link succeeded."""
import errno
import json
import os
import sys


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    link = inp["link"]
    target = inp.get("target")
    if target:
        try:
            if os.path.lexists(link):
                os.unlink(link)
            os.symlink(target, link)
        except OSError as e:
            return {"escaped": False, "detail": "creating the link: " + err(e)}
    try:
        if inp.get("op", "read") == "read":
            with open(link, "rb") as f:
                data = f.read(4096)
            return {"escaped": True, "detail": f"read {len(data)} bytes through {link}",
                    "content": data[:256].decode("utf-8", "replace")}
        path = os.path.join(link, inp.get("name", "hearth-escape.txt"))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, b"hearth-jail-escape\n")
        os.close(fd)
        return {"escaped": True, "detail": f"wrote {path}"}
    except OSError as e:
        return {"escaped": False, "detail": err(e)}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
