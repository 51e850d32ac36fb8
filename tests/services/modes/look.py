import json
import os

others = []
for entry in os.listdir("/proc"):
    if entry.isdigit() and int(entry) != os.getpid():
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                others.append(f.read().replace(b"\0", b" ").decode().strip())
        except OSError:
            pass
print(json.dumps({
    "tmpDir": os.environ.get("TMPDIR"),
    "tmpFile": os.path.exists(os.path.join(os.environ["TMPDIR"], "left-behind")),
    "tmpEntries": sorted(os.listdir(os.environ["TMPDIR"])),
    "env": os.environ.get("LEFT_BEHIND"),
    "processes": [c for c in others if c],
}))
