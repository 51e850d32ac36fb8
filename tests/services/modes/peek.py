"""Tries to read the file its input names; reports the outcome."""
import json
import sys

path = json.load(sys.stdin)["path"]
try:
    with open(path) as f:
        f.read()
    outcome = "read"
except OSError as e:
    outcome = type(e).__name__
print(json.dumps({"outcome": outcome}))
