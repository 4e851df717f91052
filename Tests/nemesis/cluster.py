"""The campaign's cluster: every process in a network namespace of its own, on a private /24 of the run's own.

    hub namespace: bridge br0 ── veth ── pg1 (primary)   .2
                                ── veth ── pg2 (standby)  .3
                                ── veth ── r1, r2, r3     .21 .22 .23   (`twobits serve`)
                                ── veth ── apple          .10           (`twobits sandbox`)
                                ── veth ── the harness    .1            (the one end left in the root namespace)

`layout="sqlite"`: one replica (r1) on the SQLite ledger, no PostgreSQL, the ledger's directory on an ext4
image of its own (a loop device, 64 MiB) that the nemesis fills to the last byte and freezes (`fsfreeze`).

Only addresses and namespaces created here are ever touched; `Cluster.close()` removes them all (and the
processes and the temporary directory), whatever happened. Partitions: `ip link set … down` on a member's
bridge port (cut from everything), or blackhole routes between two members (cut from each other only);
this kernel has neither `sch_netem` nor `act_gact`, so `tc` is not used.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "python"))
from conftest import KEY_ID, TEAM_ID, Deployment, current_month, http  # noqa: E402

PROMOTION = "spring"
APP_ID = "TEAMID1234.com.example.strong"
APP_ATTEST = {"apps": [APP_ID], "environment": "production", "root_ca_file": "appattest-root.pem",
              "receipts": {"root_ca_file": "receipt-root.pem", "enabled": False}}
APPLE_TIMEOUT_MS = 1000
REQUEST_DEADLINE_MS = 4000
PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1] if list(Path("/usr/lib/postgresql").glob("*/bin")) else None
MEMBERS = {"pg1": 2, "pg2": 3, "apple": 10, "r1": 21, "r2": 22, "r3": 23}
REPLICAS = ["r1", "r2", "r3"]


def run(*args, check=True, timeout=60):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))}: exit {result.returncode}: {result.stderr.strip()}")
    return result


def why_unavailable(layout="roles"):
    """Why the campaign cannot run here, or None."""
    if os.geteuid() != 0:
        return "the fault campaign needs root (network namespaces)"
    if not shutil.which("ip"):
        return "no `ip` command (iproute2)"
    if layout == "sqlite":
        missing = [tool for tool in ("mkfs.ext4", "fsfreeze", "mount", "umount") if not shutil.which(tool)]
        if missing:
            return f"no {', '.join(missing)} (the SQLite layout's ledger disk)"
    elif PG_BIN is None or not (PG_BIN / "initdb").exists():
        return "no PostgreSQL server (apt-get install postgresql)"
    probe = f"tbnprobe{os.getpid()}"
    result = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if result.returncode != 0:
        return f"`ip netns add` fails here: {result.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def free_octet():
    """A third octet o such that 10.213.o.0/24 is used by no route and no namespace of another run."""
    routes = run("ip", "-4", "route", "show", "table", "all").stdout
    spaces = run("ip", "netns", "list").stdout
    for o in list(range(100 + os.getpid() % 100, 250)) + list(range(100, 250)):
        if f"10.213.{o}." not in routes and f"tbn{o}-" not in spaces:
            return o
    raise RuntimeError("no free 10.213.x.0/24")


class Cluster:
    def __init__(self, binary, layout="roles", log=print):
        self.binary = str(binary)
        self.layout = layout
        self.sqlite = layout == "sqlite"
        self.replicas = ["r1"] if self.sqlite else REPLICAS
        self.members = {name: host for name, host in MEMBERS.items() if not self.sqlite or name in ("apple", "r1")}
        self.disk = None           # the SQLite layout's mounted ledger file system
        self.log = log
        self.octet = free_octet()
        self.net = f"10.213.{self.octet}"
        self.namespaces = []
        self.host_link = None
        self.procs = {}            # name -> Popen
        self.pg_dirs = {}          # pg1/pg2 -> Path
        self.primary = "pg1"       # which PostgreSQL takes writes now
        self.failed_over = False
        self.dir = Path(tempfile.mkdtemp(prefix="twobits-nemesis."))
        os.chmod(self.dir, 0o755)

    def ns(self, name):
        return f"tbn{self.octet}-{name}"

    def ip(self, name):
        return f"{self.net}.{MEMBERS[name]}" if name != "host" else f"{self.net}.1"

    # -- network ---------------------------------------------------------------------------------

    def build_network(self):
        hub = self.ns("hub")
        run("ip", "netns", "add", hub)
        self.namespaces.append(hub)
        run("ip", "-n", hub, "link", "set", "lo", "up")
        run("ip", "-n", hub, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", hub, "link", "set", "br0", "up")
        # The harness's own end, in the root namespace.
        self.host_link = f"tbn{self.octet}h"
        run("ip", "link", "add", self.host_link, "type", "veth", "peer", "name", f"tbn{self.octet}hp")
        run("ip", "link", "set", f"tbn{self.octet}hp", "netns", hub)
        run("ip", "-n", hub, "link", "set", f"tbn{self.octet}hp", "name", "p-host")
        run("ip", "-n", hub, "link", "set", "p-host", "master", "br0", "up")
        run("ip", "addr", "add", f"{self.ip('host')}/24", "dev", self.host_link)
        run("ip", "link", "set", self.host_link, "up")
        for index, name in enumerate(self.members):
            space = self.ns(name)
            run("ip", "netns", "add", space)
            self.namespaces.append(space)
            a, b = f"tbn{self.octet}x{index}", f"tbn{self.octet}y{index}"
            run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
            run("ip", "link", "set", a, "netns", space)
            run("ip", "-n", space, "link", "set", a, "name", "eth0")
            run("ip", "-n", space, "addr", "add", f"{self.ip(name)}/24", "dev", "eth0")
            run("ip", "-n", space, "link", "set", "eth0", "up")
            run("ip", "-n", space, "link", "set", "lo", "up")
            run("ip", "link", "set", b, "netns", hub)
            run("ip", "-n", hub, "link", "set", b, "name", f"p-{name}")
            run("ip", "-n", hub, "link", "set", f"p-{name}", "master", "br0", "up")

    def cut(self, name):
        """Cuts a member from everything: its bridge port goes down."""
        run("ip", "-n", self.ns("hub"), "link", "set", f"p-{name}", "down")

    def mend(self, name):
        run("ip", "-n", self.ns("hub"), "link", "set", f"p-{name}", "up")

    def separate(self, a, b):
        """Cuts a and b from each other only: a blackhole route on each side."""
        run("ip", "-n", self.ns(a), "route", "add", "blackhole", f"{self.ip(b)}/32")
        run("ip", "-n", self.ns(b), "route", "add", "blackhole", f"{self.ip(a)}/32")

    def join(self, a, b):
        run("ip", "-n", self.ns(a), "route", "del", "blackhole", f"{self.ip(b)}/32", check=False)
        run("ip", "-n", self.ns(b), "route", "del", "blackhole", f"{self.ip(a)}/32", check=False)

    # -- PostgreSQL ------------------------------------------------------------------------------

    def as_postgres(self, member, *args, timeout=60, check=True):
        return run("ip", "netns", "exec", self.ns(member), "runuser", "-u", "postgres", "--", *args,
                   timeout=timeout, check=check)

    def pg_ctl(self, member, *args, check=True):
        return self.as_postgres(member, PG_BIN / "pg_ctl", "-D", self.pg_dirs[member] / "data", *args, check=check)

    def start_postgres(self):
        password = "nemesis-" + os.urandom(6).hex()
        primary = self.dir / "pg1"
        primary.mkdir()
        shutil.chown(primary, "postgres", "postgres")
        self.pg_dirs["pg1"] = primary
        (primary / "pwfile").write_text(password)
        shutil.chown(primary / "pwfile", "postgres", "postgres")
        self.as_postgres("pg1", PG_BIN / "initdb", "-D", primary / "data", "-U", "postgres", "--auth-local=trust",
                         "--auth-host=scram-sha-256", f"--pwfile={primary / 'pwfile'}", "-E", "UTF8", "--no-sync", timeout=120)
        # Synchronous replication: a commit the primary acknowledged is on the standby, so promoting the standby
        # loses nothing acknowledged (with asynchronous replication a failover may, by design of PostgreSQL).
        with open(primary / "data" / "postgresql.conf", "a") as conf:
            conf.write(f"listen_addresses = '{self.ip('pg1')}'\nport = 5432\nunix_socket_directories = '{primary}'\n"
                       "max_connections = 200\nfsync = off\nfull_page_writes = off\nsynchronous_commit = on\n"
                       "wal_sender_timeout = 5s\nlog_min_messages = warning\n")
        with open(primary / "data" / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {self.net}.0/24 scram-sha-256\nhost replication postgres {self.net}.0/24 trust\n")
        self.pg_ctl("pg1", "-l", primary / "server.log", "-w", "-t", "30", "start")
        psql = [PG_BIN / "psql", "-h", primary, "-p", "5432", "-U", "postgres", "-d", "postgres", "-qAt", "-v", "ON_ERROR_STOP=1"]
        self.as_postgres("pg1", *psql, "-c", f"CREATE ROLE twobits LOGIN PASSWORD '{password}'",
                         "-c", "CREATE DATABASE twobits OWNER twobits")
        standby = self.dir / "pg2"
        standby.mkdir()
        shutil.chown(standby, "postgres", "postgres")
        self.pg_dirs["pg2"] = standby
        self.as_postgres("pg2", PG_BIN / "pg_basebackup", "-h", self.ip("pg1"), "-p", "5432", "-U", "postgres", "-D",
                         standby / "data", "-R", "-X", "stream", "-c", "fast", "--no-sync", timeout=120)
        with open(standby / "data" / "postgresql.conf", "a") as conf:
            conf.write(f"listen_addresses = '{self.ip('pg2')}'\nunix_socket_directories = '{standby}'\n"
                       "synchronous_standby_names = ''\nwal_receiver_timeout = 5s\n")
        self.pg_ctl("pg2", "-l", standby / "server.log", "-w", "-t", "30", "start")
        # Synchronous from now on (the standby exists): what the primary acknowledges is on the standby.
        self.as_postgres("pg1", *psql, "-c", "ALTER SYSTEM SET synchronous_standby_names = '*'", "-c", "SELECT pg_reload_conf()")
        self.database = (f"postgresql://twobits:{password}@{self.ip('pg1')}:5432,{self.ip('pg2')}:5432/twobits"
                         "?target_session_attrs=read-write&connect_timeout=2" + os.environ.get("NEMESIS_DATABASE_EXTRA", ""))
        # connect_timeout 2 (libpq's is 5 here by default): after the failover the fenced primary is still the first
        # host of the list, and each new connection waits that long on it before the standby; with this campaign's
        # 4 s request deadline 5 s would let no request through.

    def fail_over(self):
        """Fences the primary (cut, then stopped) and promotes the standby: the order an operator must keep."""
        self.cut("pg1")
        self.pg_ctl("pg1", "-m", "immediate", "-w", "stop", check=False)
        self.pg_ctl("pg2", "-w", "-t", "30", "promote")
        self.primary = "pg2"
        self.failed_over = True

    # -- the SQLite layout's ledger disk ---------------------------------------------------------------

    def start_disk(self, megabytes=64):
        """An ext4 image on a loop device, mounted for the ledger alone (no blocks reserved for root)."""
        image, disk = self.dir / "ledger.img", self.dir / "ledger-disk"
        disk.mkdir()
        with open(image, "wb") as f:
            f.truncate(megabytes * 1024 * 1024)
        run("mkfs.ext4", "-q", "-F", "-m", "0", image)
        run("mount", "-o", "loop", image, disk)
        self.disk = disk
        self.database = str(disk / "twobits.sqlite")

    def fill_disk(self):
        """Fills the ledger's file system until not one byte fits (64 KiB writes, then smaller ones)."""
        fd = os.open(self.disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for size in (65536, 4096, 512, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def empty_disk(self):
        (self.disk / "filler").unlink(missing_ok=True)

    def freeze_disk(self):
        run("fsfreeze", "-f", self.disk)

    def thaw_disk(self):
        run("fsfreeze", "-u", self.disk, check=False)

    # -- the sandbox and the replicas ------------------------------------------------------------

    def start_services(self):
        extra = {"database": self.database, **({} if self.sqlite else {"database_pool_wait_ms": 1000}),
                 "apple": {"base_url": f"http://{self.ip('apple')}:8081", "timeout_ms": APPLE_TIMEOUT_MS},
                 "server": {"threads": 2, "request_deadline_ms": REQUEST_DEADLINE_MS, "shutdown_grace_ms": 500},
                 "app_attest": APP_ATTEST}
        os.environ["TWOBITS_BIN"] = self.binary
        bits = {"mode": "reinstall-counter", "ban_at": 3} if self.layout == "counter" else {"bit0": "promotion", "bit1": "ban"}
        self.deployment = Deployment(self.dir / "deployment", layout=bits,
                                     promotions=None if self.layout == "counter" else [{"id": PROMOTION, "starts": current_month()}],
                                     extra=extra)
        d = self.deployment
        self.api_keys = d.api_keys
        self.sandbox_url = f"http://{self.ip('apple')}:8081"
        self.spawn("apple", ["sandbox", "--team-id", TEAM_ID, "--key-id", KEY_ID, "--key-file", str(d.apple_key),
                             "--listen", f"{self.ip('apple')}:8081", "--environment", "development",
                             "--app-attest-root", str(d.dir / "appattest-root.pem"),
                             "--receipt-root", str(d.dir / "receipt-root.pem")])
        self.wait_ok(self.sandbox_url + "/sandbox/v1/healthz", "apple")
        self.urls = {}
        for name in self.replicas:
            path = d.dir / f"config-{name}.json"
            path.write_text(json.dumps({**d.config, "listen": f"{self.ip(name)}:8080"}, indent=2))
            self.urls[name] = f"http://{self.ip(name)}:8080"
            self.start_replica(name)

    def spawn(self, name, args):
        log = open(self.dir / f"{name}.log", "ab")
        self.procs[name] = subprocess.Popen(["ip", "netns", "exec", self.ns(name), self.binary, *args],
                                            cwd=self.deployment.dir, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        log.close()

    def wait_ok(self, url, name, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.procs[name].poll() is not None:
                raise RuntimeError(f"{name} exited {self.procs[name].returncode}: {self.tail(name)}")
            try:
                if http("GET", url, timeout=2).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{name} not ready after {timeout} s: {self.tail(name)}")

    def start_replica(self, name):
        self.spawn(name, ["serve", "--config", str(self.deployment.dir / f"config-{name}.json")])
        self.wait_ok(self.urls[name] + "/readyz", name)

    def signal(self, name, sig):
        self.procs[name].send_signal(sig)

    def kill_replica(self, name):
        self.procs[name].send_signal(signal.SIGKILL)
        self.procs[name].wait(timeout=15)

    def tail(self, name, lines=20):
        path = self.dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    # -- teardown ----------------------------------------------------------------------------------

    def close(self, keep=None):
        """Everything goes, whatever state it is in; `keep` copies the logs there first."""
        if self.disk:
            self.thaw_disk()  # first: a process waiting on a frozen file system cannot die
        for name, proc in self.procs.items():
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGCONT)
                    proc.kill()
                    proc.wait(timeout=10)
                except Exception:  # noqa: BLE001 - teardown goes on
                    pass
        for member, directory in self.pg_dirs.items():
            pid_file = directory / "data" / "postmaster.pid"
            if pid_file.exists():
                try:
                    os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
        for space in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", space], capture_output=True)
        if self.host_link:
            subprocess.run(["ip", "link", "del", self.host_link], capture_output=True)
        if self.disk:
            subprocess.run(["umount", "-l", str(self.disk)], capture_output=True)
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            for log in list(self.dir.glob("*.log")) + list(self.dir.glob("pg*/server.log")):
                shutil.copy(log, Path(keep) / (log.parent.name + "-" + log.name if log.parent != self.dir else log.name))
        shutil.rmtree(self.dir, ignore_errors=True)
