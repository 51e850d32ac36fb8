"""Control, not an escape: what ordinary handler code does with processes and pipes must keep
working in the jail (seccomp refuses unix sockets but stream socketpairs and pipes stay):
subprocess with pipes, sh, multiprocessing (Process, Pipe), socket.socketpair(), asyncio's
subprocesses, and node's child_process (spawn with stdio pipes, execFile) when node is
installed. (multiprocessing's Pool, Queue and locks need POSIX semaphores in /dev/shm, which the
jail does not give: they fail with EACCES, with or without the unix-socket rules.) "escaped" is true when everything worked (as for the other controls); `results` says
what each got."""
import asyncio
import json
import multiprocessing
import shutil
import socket
import subprocess
import sys


def square(x):
    return x * x


def child(conn):
    conn.send(conn.recv() + 1)
    conn.close()


def main(inp):
    results = {}
    only = inp.get("only")

    def check(name, fn):
        if only and name not in only:
            return
        try:
            results[name] = fn()
        except Exception as e:  # noqa: BLE001 - reported
            results[name] = f"FAILED {type(e).__name__}: {e}"

    check("subprocess", lambda: subprocess.run(["sh", "-c", "echo sh-ok; cat"], input="in-ok",
                                               capture_output=True, text=True, check=True).stdout)
    def process():
        p = multiprocessing.Process(target=square, args=(3,))
        p.start()
        p.join()
        return p.exitcode
    check("multiprocessing.Process", process)

    def pipe():
        a, b = multiprocessing.Pipe()
        p = multiprocessing.Process(target=child, args=(b,))
        p.start()
        a.send(41)
        got = a.recv()
        p.join()
        return got
    check("multiprocessing.Pipe", pipe)

    def pair():
        a, b = socket.socketpair()
        with a, b:
            a.sendall(b"pair-ok")
            return b.recv(16).decode()
    check("socket.socketpair", pair)

    async def run_async():
        proc = await asyncio.create_subprocess_exec("sh", "-c", "echo async-ok",
                                                    stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        return out.decode()
    check("asyncio.subprocess", lambda: asyncio.run(run_async()))

    node = shutil.which("node")
    if node:
        script = r"""
const cp = require('child_process');
const c = cp.spawn('sh', ['-c', 'cat; echo spawn-ok'], {stdio: ['pipe', 'pipe', 'pipe']});
let out = '';
c.stdout.on('data', d => out += d);
c.on('close', code => {
  cp.execFile('sh', ['-c', 'echo execfile-ok'], (err, stdout) => {
    console.log(JSON.stringify({spawn: out, code, execFile: err ? String(err) : stdout}));
  });
});
c.stdin.end('node-in ');
"""
        check("node child_process", lambda: json.loads(subprocess.run(
            [node, "-e", script], capture_output=True, text=True, timeout=20, check=True).stdout))
    ok = all(not (isinstance(v, str) and v.startswith("FAILED")) for v in results.values())
    return {"escaped": ok, "detail": json.dumps(results), "results": results}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
