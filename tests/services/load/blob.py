import json
import sys

params = json.load(sys.stdin)
sys.stdout.write(json.dumps({"tag": params["tag"], "data": "x" * params["size"]}))
