# The same computation as add.py, as a persistent-mode server (docs/protocol.md): one request
# line in, one answer line out, for as long as hearth keeps the process.
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    value = req["input"]
    sys.stdout.write(json.dumps({"id": req["id"], "result": {"sum": value["a"] + value["b"]}}) + "\n")
    sys.stdout.flush()
