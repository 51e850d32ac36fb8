"""Probe: the hard-link trick. Input {"source": S (outside), "link": L (inside data/)}: link S to L,
then read it through L. "escaped" means the link was created (a name for an outside file now
lives in the allowed folder); what could be read through it is returned."""
import errno
import json
import os
import sys


def err(e):
    code = errno.errorcode.get(e.errno, "") if isinstance(e, OSError) and e.errno else ""
    return f"{type(e).__name__}{' ' + code if code else ''}: {e}"


def main(inp):
    source, link = inp["source"], inp["link"]
    try:
        if os.path.lexists(link):
            os.unlink(link)
        os.link(source, link)
    except OSError as e:
        return {"escaped": False, "detail": "link: " + err(e)}
    out = {"escaped": True, "detail": f"linked {source} to {link}"}
    try:
        with open(link, "rb") as f:
            out["content"] = f.read(256).decode("utf-8", "replace")
    except OSError as e:
        out["detail"] += "; reading it: " + err(e)
    return out


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
