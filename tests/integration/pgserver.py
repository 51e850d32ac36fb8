"""A throwaway PostgreSQL server for the integration tests: Debian's server binaries, initdb into a
temporary folder, listening on a Unix socket in that folder only (no TCP), stopped and removed at
the end. As root (CI), the server runs as the `postgres` user, since initdb refuses root. The
system cluster Debian's package starts is never used."""
import glob
import os
import shutil
import subprocess
import tempfile
import urllib.parse
from pathlib import Path


def server_bin():
    """The newest /usr/lib/postgresql/*/bin with initdb and pg_ctl."""
    found = []
    for d in glob.glob("/usr/lib/postgresql/*/bin"):
        if os.path.exists(os.path.join(d, "initdb")) and os.path.exists(os.path.join(d, "pg_ctl")):
            try:
                found.append((int(Path(d).parent.name), d))
            except ValueError:
                pass
    if not found:
        raise RuntimeError("no PostgreSQL server in /usr/lib/postgresql/*/bin: run "
                           "scripts/install-deps.sh")
    return Path(sorted(found)[-1][1])


class PgServer:
    def __init__(self, fsync=False):
        """fsync: as a real server runs (benchmarks); tests need no durability of the machine."""
        self.fsync = fsync
        self.bin = server_bin()
        self.as_postgres = os.geteuid() == 0
        self.dir = Path(tempfile.mkdtemp(prefix="hearth-pg-"))
        self.data = self.dir / "data"
        # The port only names the socket file; several servers of one machine need different ones.
        self.port = 20000 + os.getpid() % 20000
        if self.as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        os.chmod(self.dir, 0o755)
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U",
                   "hearth_admin", "--no-sync", "-E", "UTF8"])
        self.start()
        self.databases = 0

    def _run(self, args, check=True, **kw):
        if self.as_postgres:
            args = ["runuser", "-u", "postgres", "--", *args]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60, **kw)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: {r.stdout}{r.stderr}")
        return r

    def start(self):
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-o",
                   f"-k {self.dir} -c listen_addresses='' -p {self.port} "
                   f"-c fsync={'on' if self.fsync else 'off'} -c max_connections=200",
                   "-l", str(self.dir / "log"), "-w", "start"])

    def stop(self, mode="fast"):
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"],
                  check=False)

    def url(self, database="postgres"):
        host = urllib.parse.quote(str(self.dir), safe="")
        return f"postgresql://hearth_admin@/{database}?host={host}&port={self.port}"

    def psql(self, database, sql):
        r = subprocess.run([str(self.bin.parent / "bin" / "psql") if (self.bin / "psql").exists()
                            else "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-d", self.url(database), "-c", sql],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        return r.stdout.strip()

    def fresh_database(self, hint="t"):
        self.databases += 1
        name = f"{hint}_{self.databases}"
        self.psql("postgres", f'CREATE DATABASE "{name}"')
        return name

    def close(self):
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
