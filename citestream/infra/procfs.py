"""A process's CPU and memory as Linux's /proc reports them, for the benchmarks and the tests that bound a worker.

Read from /proc rather than from psutil: three numbers are all that is needed, and
the worker under test is another process, which ``resource`` cannot see.
"""

from __future__ import annotations

import os
from pathlib import Path

_TICK = float(os.sysconf("SC_CLK_TCK"))


def stat_cpu(stat: Path) -> float:
    """CPU seconds (user and system) in a /proc ``stat`` file: a process's, or one of its threads'."""
    fields = stat.read_text().rsplit(")", 1)[1].split()  # the name in parentheses may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def process_cpu(pid: int) -> float:
    """CPU seconds a process has spent so far, every thread's."""
    return stat_cpu(Path(f"/proc/{pid}/stat"))


def named_threads_cpu(pid: int, name: str) -> float:
    """CPU seconds the threads of a process named ``name`` (their /proc ``comm``) have spent so far."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().strip() == name:
                total += stat_cpu(task / "stat")
        except OSError:  # the thread ended meanwhile
            continue
    return total


def machine_cpu() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return (sum(values[:8]) - idle) / _TICK, idle / _TICK


def peak_memory_mb(pid: int) -> float:
    """A process's peak resident memory so far (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
