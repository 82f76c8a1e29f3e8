"""Where a server process's CPU goes, kernel included: `perf record` samples split by
shared object and by what entered the kernel, and the process's page faults and context
switches from /proc (Linux only). Used by `bench/gateway.py --perf`.

`perf record -e cpu-clock` is the software clock, so it works without hardware counters
(in a VM, a container); each sample carries its period, the CPU time it stands for, so
the split is in microseconds, not only in shares.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

FREQUENCY = 20_000
"""Samples per second of a thread's CPU time (perf caps it at its `max_sample_rate`)."""

# (group, fragment of the shared object's file name), the first that matches wins
DSOS: list[tuple[str, str]] = [
    ("kernel", "[kernel"),
    ("libpython", "libpython"),
    ("libsqlite3", "libsqlite3"),
    ("_sqlite3", "_sqlite3."),
    ("_json", "_json."),
    ("pydantic_core", "pydantic_core"),
    ("libc", "libc."),
]

# What entered the kernel, read from the kernel frames of a sample's call chain (the
# innermost of these names wins over the outer ones: a page fault inside a system call
# is the fault's): a system call's handler is the frame called by `do_syscall_64`.
_SKIPPED_ENTRY = {"x64_sys_call", "do_syscall_64", "entry_SYSCALL_64_after_hwframe"}
_SYSCALL_PREFIXES = ("__x64_sys_", "__do_sys_", "__se_sys_", "ksys_", "__sys_", "do_sys_")
_FRAME = re.compile(r"^\s*[0-9a-f]+ (?P<symbol>.*) \((?P<dso>[^()]*)\)$")


class Sample:
    """One `perf script` sample: its thread, the CPU time it stands for, and its call
    chain (symbol, shared object), innermost first."""

    __slots__ = ("frames", "period_ns", "tid")

    def __init__(self, tid: int, period_ns: int) -> None:
        self.tid, self.period_ns = tid, period_ns
        self.frames: list[tuple[str, str]] = []

    @property
    def dso(self) -> str:
        """The group of the shared object the sample fell in (`DSOS`, else "rest")."""
        where = self.frames[0][1] if self.frames else ""
        for name, fragment in DSOS:
            if fragment in where:
                return name
        return "rest"

    @property
    def kernel_symbol(self) -> str:
        return self.frames[0][0] if self.frames else "[unknown]"

    @property
    def kernel_entry(self) -> str:
        """For a sample in the kernel: the system call it runs ("pwrite64"), "page
        fault", "interrupt" (a device's or a timer's, or a softirq on its way out), or
        "other" (the scheduler's own work on a switch, a return to user space)."""
        kernel = [symbol for symbol, dso in self.frames if dso.startswith("[kernel")]
        for symbol in kernel:  # innermost first
            if "page_fault" in symbol:
                return "page fault"
            if symbol.startswith(("asm_sysvec", "asm_common_interrupt", "__irq_exit")):
                return "interrupt"
        for inner, outer in itertools.pairwise(kernel):
            if outer in ("do_syscall_64", "x64_sys_call") and inner not in _SKIPPED_ENTRY:
                return _syscall_name(inner)
        return "other"


def _syscall_name(symbol: str) -> str:
    for prefix in _SYSCALL_PREFIXES:
        if symbol.startswith(prefix):
            return symbol.removeprefix(prefix)
    return symbol


def parse(script: str) -> Iterator[Sample]:
    """The samples of `perf script -F tid,period,ip,sym,dso` output: a header line
    `<tid> <period>`, then one line per frame, then a blank line."""
    sample: Sample | None = None
    for line in script.splitlines():
        if not line.strip():
            if sample is not None:
                yield sample
            sample = None
        elif sample is None:
            tid, period = line.split()[:2]
            sample = Sample(int(tid), int(period))
        elif match := _FRAME.match(line):
            sample.frames.append((match["symbol"], match["dso"]))
    if sample is not None:
        yield sample


class Split:
    """CPU time per operation (µs), by shared object, by thread, and the kernel's by
    entry and by symbol, of one process's samples over `operations` operations."""

    def __init__(self, operations: int) -> None:
        self.operations = operations
        self.samples = 0
        self.by_dso: dict[str, float] = {}
        self.by_thread: dict[str, float] = {}
        self.kernel_by_entry: dict[str, float] = {}
        self.kernel_by_symbol: dict[str, float] = {}

    @property
    def total(self) -> float:
        return sum(self.by_dso.values())


def split(samples: Iterator[Sample], pid: int, operations: int) -> Split:
    """Each sample's CPU time shared out per operation; the loop's thread is `pid`."""
    result = Split(operations)

    def add(table: dict[str, float], key: str, us: float) -> None:
        table[key] = table.get(key, 0.0) + us

    for sample in samples:
        us = sample.period_ns / 1000 / operations
        result.samples += 1
        add(result.by_dso, sample.dso, us)
        add(result.by_thread, "loop thread" if sample.tid == pid else "other threads", us)
        if sample.dso == "kernel":
            add(result.kernel_by_entry, sample.kernel_entry, us)
            add(result.kernel_by_symbol, sample.kernel_symbol, us)
    return result


class Recorder:
    """`perf record -e cpu-clock -g` attached to a process and its threads, counting
    from `start` to `stop` exactly: perf starts with its events off and turns them on
    and off when told through its control fifo, saying when it has. `split` reads what
    it sampled."""

    def __init__(self, pid: int, out: Path, frequency: int = FREQUENCY) -> None:
        self.pid, self.out = pid, out
        self._control, self._ack = out.with_suffix(".control"), out.with_suffix(".ack")
        command = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(frequency), "-g"]
        command += ["-D", "-1", "--control", f"fifo:{self._control},{self._ack}"]
        self._command = [*command, "-p", str(pid), "-o", str(out)]
        self._perf: subprocess.Popen[bytes] | None = None

    def _tell(self, command: str) -> None:
        assert self._perf is not None
        deadline = time.monotonic() + 60
        while True:  # until perf has its control fifo open (or has failed)
            try:
                control = os.open(self._control, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:
                if error.errno != errno.ENXIO:
                    raise
                if self._perf.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(
                        f"perf record did not start (exit {self._perf.returncode}): "
                        f"try `{' '.join(self._command)}` by hand"
                    ) from None
                time.sleep(0.01)
            else:
                break
        try:
            os.write(control, f"{command}\n".encode())
        finally:
            os.close(control)
        with self._ack.open() as ack:
            if ack.readline().strip() != "ack":
                raise SystemExit(f"perf record did not take {command!r}")

    def start(self) -> None:
        for fifo in (self._control, self._ack):
            os.mkfifo(fifo)
        self._perf = subprocess.Popen(self._command, stderr=subprocess.DEVNULL)
        self._tell("enable")

    def stop(self) -> None:
        assert self._perf is not None
        self._tell("disable")
        self._perf.send_signal(signal.SIGINT)
        self._perf.wait(60)

    def split(self, operations: int) -> Split:
        command = ["perf", "script", "-i", str(self.out), "-F", "tid,period,ip,sym,dso"]
        script = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        return split(parse(script), self.pid, operations)


COUNTERS = ("minor faults", "major faults", "voluntary switches", "involuntary switches")


def threads_of(pid: int) -> Iterator[tuple[str, Path, list[str]]]:
    """Each thread of the process `pid`: "loop thread" (its main thread) or "other
    threads", its /proc folder, and the fields of its `stat` after the command's name. A
    thread that ended before its read is left out."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        name = "loop thread" if task.name == str(pid) else "other threads"
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended
        yield name, task, fields


def counters(pid: int) -> dict[str, dict[str, int]]:
    """`COUNTERS` of the process `pid`, "loop thread" (its main thread) apart from
    "other threads", summed over /proc/<pid>/task/*/stat and status. A thread that ended
    is in neither."""
    threads: dict[str, dict[str, int]] = {}
    for name, task, stat in threads_of(pid):
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # the thread ended
        switches = dict(
            line.split(":\t")
            for line in status.splitlines()
            if line.startswith(("voluntary_ctxt", "nonvoluntary_ctxt"))
        )
        counts = (
            int(stat[7]),
            int(stat[9]),
            int(switches["voluntary_ctxt_switches"]),
            int(switches["nonvoluntary_ctxt_switches"]),
        )
        mine = threads.setdefault(name, dict.fromkeys(COUNTERS, 0))
        for counter, count in zip(COUNTERS, counts, strict=True):
            mine[counter] += count
    return threads


IO = {"syscw": "write calls", "wchar": "bytes written", "write_bytes": "bytes to storage"}


def io(pid: int) -> dict[str, int]:
    """The process's writes (all its threads, ended ones too), from /proc/<pid>/io, as
    `IO` names them: "bytes to storage" are those of pages it dirtied (a page written
    again before the kernel wrote it back counts once)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return {name: int(fields[key]) for key, name in IO.items()}


def wal_size(pid: int) -> int:
    """The size of the SQLite WAL files the process `pid` has open (0 if none)."""
    size = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink()
            if target.name.endswith("-wal"):
                size += target.stat().st_size
        except OSError:
            continue  # closed meanwhile
    return size


def counted_since(
    before: dict[str, dict[str, int]], after: dict[str, dict[str, int]], operations: int
) -> dict[str, dict[str, float]]:
    """`COUNTERS` per operation between two `counters` readings, by thread."""
    return {
        name: {
            counter: (count - before.get(name, {}).get(counter, 0)) / operations
            for counter, count in counts.items()
        }
        for name, counts in after.items()
    }
