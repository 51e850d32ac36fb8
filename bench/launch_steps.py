#!/usr/bin/env python3
"""Where a confined launch spends its time: runs `hearth-launch --jail ... -- /bin/true` N times
with HEARTH_LAUNCH_TRACE=1 and prints the median and p10/p90 time of each step (the time since
the previous step, in the order the steps happened, across the launcher's three processes).

Usage: bench/launch_steps.py [BUILD_DIR] [N]   (default build/release, 60)
The options are those of hearth-spawn-bench's `jail` variant; the seccomp filter is the daemon's
(`hearth-spawn-bench --print-filter none`). Memory and pids cgroups are used when writable.
"""
import collections
import glob
import os
import statistics
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 60
launcher = os.path.join(build, "bin", "hearth-launch")
bpf = subprocess.run([os.path.join(build, "bin", "hearth-spawn-bench"), "--print-filter", "none"],
                     check=True, capture_output=True, text=True).stdout.strip()
data = tempfile.mkdtemp(prefix="hearth-steps-", dir="/var/tmp")
args = [launcher, "--jail", f"--rw={data}", "--nproc=256", "--tmp=67108864", "--net=none",
        f"--seccomp-bpf={bpf}"]
made = []
for controller, extra in (("memory", ["--memory=1073741824"]), ("pids", [])):
    for line in open("/proc/self/cgroup"):
        _, names, path = line.rstrip("\n").split(":", 2)
        if names == controller:
            d = f"/sys/fs/cgroup/{controller}{path.rstrip('/')}/hearth-steps-{os.getpid()}"
            try:
                os.mkdir(d)
                made.append(d)
                args += extra + [f"--cgroup-{controller}={d}"]
            except OSError:
                pass
args += ["--", "/bin/true", "true"]

steps = collections.defaultdict(list)
order = []
for _ in range(runs):
    r = subprocess.run(args, env={"HEARTH_LAUNCH_TRACE": "1"}, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    events = sorted((float(l.split()[3]), " ".join(l.split()[4:])) for l in r.stderr.splitlines()
                    if l.startswith("hearth-launch trace"))
    prev = events[0][0]
    for t, name in events:
        if name not in order:
            order.append(name)
        steps[name].append((t - prev) * 1e6)
        prev = t
    steps["total"].append((events[-1][0] - events[0][0]) * 1e6)
for name in order + ["total"]:
    v = sorted(steps[name])
    print(f"{name:14s} median {statistics.median(v):6.0f} us   p10 {v[len(v) // 10]:6.0f}   "
          f"p90 {v[len(v) * 9 // 10]:6.0f}")
for d in made:
    os.rmdir(d)
os.rmdir(data)
