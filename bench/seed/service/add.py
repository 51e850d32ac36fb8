import json
import sys

req = json.load(sys.stdin)
print(json.dumps({"sum": req["a"] + req["b"]}))
