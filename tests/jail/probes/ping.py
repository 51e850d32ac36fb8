"""A normal handler: answers at once (used as the concurrent and the later call)."""
import json
import os
import sys

inp = json.loads(sys.stdin.read() or "null") or {}
print(json.dumps({"ok": True, "pid": os.getpid(), "echo": inp.get("echo")}))
