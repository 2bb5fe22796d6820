"""A real broker process for the club tests and benchmark, a TCP proxy to cut a board's link,
and a simulated board: a data folder whose games are written through the real journal and
published by the real publisher.

The broker is /usr/sbin/mosquitto (from the distribution; scripts/system-deps installs it),
started on a free loopback port with a config, password file (mosquitto_passwd) and ACL written
here, like docs/club.md's; without it, the pure-Python amqtt broker (the ``test`` extra), which
runs without passwords or ACL (the tests that need them skip).
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or (
    "/usr/bin/mosquitto_passwd" if Path("/usr/bin/mosquitto_passwd").exists() else None)

ACL = """\
# Each board (user name = board name) may publish only under its own name and read only its
# re-send requests and the recorder's acknowledgements; the recorder reads everything and may
# ask any board to re-send and tell it what it holds.
pattern write fairyboard/%u/#
pattern read fairyboard/%u/resend
pattern read fairyboard/%u/ack
# a remote game: a board reads what another board addresses to it, and who is online
pattern read fairyboard/+/remote/%u/#
pattern read fairyboard/+/presence

user recorder
topic read fairyboard/#
topic write fairyboard/+/resend
topic write fairyboard/+/ack
"""

# Game moves (orthodox chess, the Opera game) for the simulated boards.
OPERA = ("e2e4 e7e5 g1f3 d7d6 d2d4 c8g4 d4e5 g4f3 d1f3 d6e5 f1c4 g8f6 f3b3 d8e7 b1c3 c7c6 c1g5 "
         "b7b5 c3b5 c6b5 c4b5 b8d7 e1c1 a8d8 d1d7 d8d7 h1d1 e7e6 b5d7 f6d7 b3b8 d7b8 d1d8").split()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class Broker:
    """A broker process on 127.0.0.1:``port``; ``users`` maps user names to passwords."""

    def __init__(self, folder: Path, users: dict[str, str], *, prefer: str | None = None, tls: bool = False,
                 acl: bool = True) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.users = dict(users)
        self.port = free_port()
        prefer = prefer or os.environ.get("FAIRYBOARD_TEST_BROKER")
        if prefer != "amqtt" and MOSQUITTO and MOSQUITTO_PASSWD:
            self.kind = "mosquitto"
        else:
            self.kind = "amqtt"
        self.secured = self.kind == "mosquitto"
        self.tls = tls
        self.acl = acl                  # False: passwords only, every user reads and writes everything
        self.ca: Path | None = None
        self.proc: subprocess.Popen | None = None
        self._write_config()

    def _write_config(self) -> None:
        log = self.folder / "broker.log"
        if self.kind == "mosquitto":
            pw = self.folder / "passwd"
            pw.write_text("".join(f"{u}:{p}\n" for u, p in self.users.items()))
            os.chmod(pw, 0o600)
            subprocess.run([MOSQUITTO_PASSWD, "-U", str(pw)], check=True, capture_output=True)
            (self.folder / "acl").write_text(ACL)
            tls = self._certificates() if self.tls else ""
            (self.folder / "mosquitto.conf").write_text(
                f"listener {self.port} 127.0.0.1\n{tls}"
                f"allow_anonymous false\n"
                f"password_file {pw}\n"
                + (f"acl_file {self.folder / 'acl'}\n" if self.acl else "") +
                f"persistence false\n"
                f"max_queued_messages 100000\n"
                f"max_inflight_messages 100\n"
                f"max_packet_size 131072\n"
                f"user {getpass.getuser()}\n"
                f"log_dest file {log}\n"
                f"log_type error\nlog_type warning\nlog_type notice\n")
            self.cmd = [MOSQUITTO, "-c", str(self.folder / "mosquitto.conf")]
        else:
            (self.folder / "amqtt.yaml").write_text(
                "listeners:\n  default:\n    type: tcp\n"
                f"    bind: 127.0.0.1:{self.port}\n"
                "auth:\n  allow-anonymous: true\n  plugins: ['auth_anonymous']\n"
                "topic-check:\n  enabled: false\n")
            exe = Path(sys.executable).with_name("amqtt")
            self.cmd = [str(exe) if exe.exists() else "amqtt", "-c", str(self.folder / "amqtt.yaml")]

    def _certificates(self) -> str:
        """A test CA and a server certificate for 127.0.0.1 (openssl); the listener's TLS lines."""
        d = self.folder

        def run(*args):
            subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=fairyboard test CA")
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=127.0.0.1")
        (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
        run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
        self.ca = d / "ca.pem"
        return f"cafile {d / 'ca.pem'}\ncertfile {d / 'server.pem'}\nkeyfile {d / 'server.key'}\n"

    def available(self) -> bool:
        return self.kind == "mosquitto" or shutil.which(self.cmd[0]) is not None or Path(self.cmd[0]).exists()

    def start(self) -> "Broker":
        self._log = open(self.folder / "broker.out", "ab")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_port(self.port, 20)
        except RuntimeError:
            self.stop()
            raise RuntimeError(f"{self.kind} did not start: "
                               + (self.folder / "broker.out").read_text(errors="replace")[-2000:])
        return self

    def kill(self) -> None:
        """SIGKILL: the broker vanishes without a word, forgetting everything (no persistence)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None


class TcpProxy:
    """A loopback TCP relay to ``port`` that can cut every connection and refuse new ones."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.up = True
        self.connections = 0                # accepted so far (a reconnection adds one)
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            if not self.up:
                c.close()
                continue
            try:
                u = socket.create_connection(("127.0.0.1", self.target), timeout=2)
            except OSError:
                c.close()
                continue
            with self._lock:
                self._conns += [c, u]
                self.connections += 1
            self._relay(c, u)

    def _relay(self, c: socket.socket, u: socket.socket) -> None:
        """Carry the bytes both ways between the client ``c`` and the target ``u``."""
        for a, b in ((c, u), (u, c)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        self.up = False
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self._closed = True
        self.cut()
        self.sock.close()


class SimBoard:
    """A board's data folder: games written through the real journal, published by the real
    publisher (when started)."""

    def __init__(self, folder: Path, name: str, port: int, password: str | None, *, window: int = 100,
                 tls=None) -> None:
        from board_driver.club.broker import BrokerConfig
        from board_driver.journal import GameStore
        self.name = name
        self.folder = Path(folder)
        self.store = GameStore(self.folder)
        self.cfg = BrokerConfig(host="127.0.0.1", name=name, port=port, username=name, password=password,
                                keepalive=5, tls=tls)
        self.window = window
        self.pub = None
        self.journal = None
        self.gid = None

    def start(self):
        from board_driver.club.publisher import Publisher
        self.pub = Publisher(self.cfg, self.folder, health=lambda: {"link": "sim", "sensors": "sim"},
                             window=self.window).start()
        return self

    def stop(self) -> None:
        if self.pub is not None:
            self.pub.close(timeout=0.5)
            self.pub = None

    def new_game(self, white="Ann", black="Bob", variant="orthodox", game_id=None) -> str:
        from board_driver.config import load_variant
        v = load_variant(variant)
        self.gid, self.journal = self.store.create(variant, v.start_fen, players={"white": white, "black": black},
                                                   game_id=game_id)
        self.store.set_current(self.gid)
        self.t = 0
        return self.gid

    def move(self, uci: str, ply: int) -> None:
        """A move as the session writes it: two board events, then the action with fsync."""
        j = self.journal
        self.t += 1500
        j.write({"type": "event", "t": self.t, "sq": uci[:2], "placed": False, "occ": "0"}, sync=False)
        j.write({"type": "event", "t": self.t + 700, "sq": uci[2:4], "placed": True, "occ": "0"}, sync=False)
        j.write({"type": "push", "ply": ply, "action": uci, "w": 0}, sync=True)

    def finish(self, result: str, reason: str) -> None:
        self.journal.write({"type": "result", "result": result, "reason": reason}, sync=True)

    def lines(self, gid: str | None = None) -> list[str]:
        return self.store.path(gid or self.gid).read_text().splitlines()
