"""A private, throwaway PostgreSQL cluster for fault tests that stop or freeze the server.

The shared server on 5432 is never stopped, restarted or reconfigured: tests
that need a dead, restarted or hung server get their own cluster (initdb +
pg_ctl from the PostgreSQL 15 binaries, run as the ``postgres`` OS user
because initdb refuses root) in a temporary directory on a port of its own.

The port stays the cluster's while it is stopped, so a restart cannot lose
it: it is taken below the kernel's ephemeral range (where no ``bind(0)`` and
no outgoing connection lands) and reserved for the cluster's life by an
abstract Unix socket bound to a name of its own, which other private
clusters respect; the kernel releases it when its holder closes it or exits,
and it leaves no file behind.
"""

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile

import psycopg2

from predictor.db.schema import init_schema

BIN = os.environ.get("PBS_SOFTWALLTIME_PG_BIN", "/usr/lib/postgresql/15/bin")
OS_USER = "postgres"


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
            return int(ports.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def reserved_port(rng=random.SystemRandom()):
    """``(port, holder)``: a port below the ephemeral range, free now, reserved for this process by ``holder``
    (an abstract Unix socket; close it to give the port back)."""
    high = _ephemeral_low()
    for _ in range(200):
        port = rng.randrange(20000, high)
        holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            holder.bind("\0swt_pgcluster_port_{}".format(port))
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", port))
            return port, holder
        except OSError:
            holder.close()
    raise RuntimeError("no free port below the ephemeral range")


class PrivateCluster:
    """One cluster: ``start``, ``stop``, ``restart``, ``freeze``/``thaw``, ``destroy``."""

    def __init__(self, parent=None):
        """A new cluster in a temporary directory under ``parent`` (default: the system's), not started."""
        self.port, self._port_lock = reserved_port()
        self.root = tempfile.mkdtemp(prefix="swt_pg_", dir=parent)
        self.data = os.path.join(self.root, "data")
        shutil.chown(self.root, OS_USER)
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")

    def dsn(self, user="postgres", dbname="postgres"):
        return "host=127.0.0.1 port={} user={} dbname={}".format(self.port, user, dbname)

    def _run(self, program, *args):
        command = ["runuser", "-u", OS_USER, "--", os.path.join(BIN, program)] + list(args)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)

    def start(self):
        options = "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={} -c fsync=off".format(
            self.port, self.root)
        self._run("pg_ctl", "-D", self.data, "-o", options, "-l", os.path.join(self.root, "log"), "-w", "start")

    def stop(self):
        self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")

    def restart(self):
        self.stop()
        self.start()

    def reload(self):
        """Make the running server read its config files again (pg_hba.conf, postgresql.conf)."""
        self._run("pg_ctl", "-D", self.data, "reload")

    def _postmaster(self):
        with open(os.path.join(self.data, "postmaster.pid")) as pid_file:
            return int(pid_file.readline())

    def _signal_all(self, signum):
        """``signum`` to the postmaster first (so it forks no one new), then to each of its children.

        A backend may exit between the listing and the signal: it needs none.
        """
        postmaster = self._postmaster()
        os.kill(postmaster, signum)
        children = subprocess.run(["pgrep", "-P", str(postmaster)], stdout=subprocess.PIPE, check=False)
        for pid in children.stdout.split():
            try:
                os.kill(int(pid), signum)
            except ProcessLookupError:
                pass

    def freeze(self):
        """SIGSTOP the postmaster and every backend: a server that accepts TCP but never answers."""
        self._signal_all(signal.SIGSTOP)

    def thaw(self):
        self._signal_all(signal.SIGCONT)

    def ensure_running(self):
        """Undo whatever a test did: thaw a frozen server, start a stopped one."""
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.thaw()
        else:
            self.start()

    def setup_schema(self, reader="swt_reader", writer="swt_writer"):
        """Apply the schema and create login roles for the reader and writer groups."""
        init_schema(self.dsn())
        conn = psycopg2.connect(self.dsn())
        conn.autocommit = True
        try:
            with conn.cursor() as cursor:
                cursor.execute("CREATE ROLE {} LOGIN IN ROLE softwalltime_reader".format(reader))
                cursor.execute("CREATE ROLE {} LOGIN IN ROLE softwalltime_writer".format(writer))
        finally:
            conn.close()
        return self.dsn(reader), self.dsn(writer)

    def destroy(self):
        try:
            if os.path.exists(os.path.join(self.data, "postmaster.pid")):
                self.thaw()
                self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self._port_lock.close()
