"""A throw-away PostgreSQL server for the tests, from Debian's ``postgresql`` package (never a container).

``initdb`` makes a cluster in the given folder (a user ``snap`` whose password is random, scram-sha-256
authentication), and ``postgres`` serves it on 127.0.0.1 at a free port with no Unix socket; ``stop()`` shuts
it down fast. Without the server binaries the caller's test fails with the install command.

initdb and postgres refuse to run as root. A test run as root (a CI container) starts both in a user
namespace (``unshare --user --map-user=1000 --map-group=1000``): inside it they run as uid 1000, which the
kernel maps to root outside, so they keep access to the test's tmp_path. ``runuser -u nobody`` would not do:
pytest makes its temporary root ``/tmp/pytest-of-root`` mode 0700, so ``nobody`` cannot reach a folder under
it. Run as any other user, they are started directly.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

INSTALL = "apt-get install -y postgresql"
USER = "snap"
START_TIMEOUT_S = 30


class ServerMissing(RuntimeError):
    """No PostgreSQL server binaries (or no way to run them here); the message names the fix."""


def server_binaries() -> Path:
    """The folder holding initdb and postgres: Debian's newest /usr/lib/postgresql/N/bin, else the PATH's."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda path: int(path.parent.parent.name or 0))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb is not None and shutil.which("postgres") is not None:
        return Path(initdb).parent
    raise ServerMissing(
        f"the PostgreSQL server binaries (initdb, postgres) are not installed. Install Debian's package: {INSTALL}"
    )


def unprivileged() -> list[str]:
    """The command prefix that runs the server as a user other than root (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("unshare") is None:
        raise ServerMissing("running as root, and unshare (util-linux) is missing to start PostgreSQL as non-root")
    return ["unshare", "--user", "--map-user=1000", "--map-group=1000"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    """One cluster in ``folder``, served on a free loopback port until :meth:`stop`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.password = f"pw-{secrets.token_urlsafe(18)}"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.started_in_s = 0.0

    @property
    def log(self) -> Path:
        return self.folder / "postgres.log"

    def url(self, database: str = "postgres") -> str:
        """The database's URL, without the password (the environment gives it: PGPASSWORD)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        began = time.monotonic()
        binaries = server_binaries()
        prefix = unprivileged()
        data = self.folder / "data"
        password_file = self.folder / "password"
        password_file.write_text(self.password + "\n", encoding="utf-8")
        password_file.chmod(0o600)
        subprocess.run(
            [
                *prefix,
                str(binaries / "initdb"),
                f"--pgdata={data}",
                f"--username={USER}",
                "--auth=scram-sha-256",
                f"--pwfile={password_file}",
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        password_file.unlink()
        for _ in range(3):  # a port found free may be taken before the server binds it: another one then
            self.port = free_port()
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(
                    [
                        *prefix,
                        str(binaries / "postgres"),
                        "-D",
                        str(data),
                        "-p",
                        str(self.port),
                        "-c",
                        "listen_addresses=127.0.0.1",
                        "-c",
                        "unix_socket_directories=",
                        "-c",
                        "fsync=off",
                        "-c",
                        "full_page_writes=off",
                        "-c",
                        "max_connections=60",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            if self._wait_ready():
                self.started_in_s = time.monotonic() - began
                return self
        raise RuntimeError(f"PostgreSQL did not start; its log:\n{self.log.read_text(errors='replace')[-3000:]}")

    def _wait_ready(self) -> bool:
        import psycopg

        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                psycopg.connect(self.url(), password=self.password, connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.1)
        self.stop()
        return False

    def create_database(self, name: str) -> str:
        """A new, empty database; its URL."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url(), password=self.password, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def stop(self) -> None:
        """A fast shutdown (SIGINT: open sessions are ended), then a kill if it hangs."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
