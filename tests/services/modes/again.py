"""Reports what it can see of an earlier call of the same endpoint (a file in its /tmp, a
process, an environment variable), then leaves all three behind for the next call."""
import json
import os
import subprocess
import sys
import tempfile

from seen import other_processes

tmp = os.environ.get("TMPDIR") or tempfile.gettempdir()
seen = {
    "argv": sys.argv[1:],
    "stdin": sys.stdin.read(),
    "envTag": os.environ.get("TAG"),
    "tmpEntries": sorted(os.listdir(tmp)),
    "leftVar": os.environ.get("LEFT_BEHIND"),
    "processes": other_processes(),
    "proxy": os.environ.get("HTTP_PROXY"),
}
with open(os.path.join(tmp, "left-behind"), "w") as f:
    f.write(str(sys.argv[1:]))
os.environ["LEFT_BEHIND"] = "yes"
subprocess.Popen(["sleep", "30"], start_new_session=True, env=os.environ)
print(json.dumps(seen))
