# A persistent-mode server (docs/protocol.md, "Persistent mode"): counts the calls it served and
# reports what it sees, or dies, or tries to read outside its fileAccess, as the input asks.
import json
import os
import sys

served = 0
instance = os.urandom(8).hex()
for line in sys.stdin:
    req = json.loads(line)
    op = req["input"].get("op")
    served += 1
    if op == "die":
        sys.stderr.write("dying on request\n")
        sys.stderr.flush()
        os._exit(7)
    if op == "read":
        try:
            with open(req["input"]["path"]) as f:
                f.read()
            outcome = "read"
        except OSError as e:
            outcome = type(e).__name__
        print(json.dumps({"id": req["id"], "result": {"outcome": outcome}}), flush=True)
        continue
    if op == "tmp":
        with open(os.path.join(os.environ["TMPDIR"], "kept"), "a") as f:
            f.write("x")
    kept = os.path.join(os.environ["TMPDIR"], "kept")
    print(json.dumps({"id": req["id"], "result": {
        "served": served,
        "instance": instance,
        "persistent": os.environ.get("LAVS_PERSISTENT"),
        "tmp": os.path.getsize(kept) if os.path.exists(kept) else 0,
    }}), flush=True)
