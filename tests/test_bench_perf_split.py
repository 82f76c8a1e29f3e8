"""`bench/gateway.py --perf`'s pieces (`bench/_perf_split.py`): `perf script` samples
split by shared object, thread and what entered the kernel; the /proc counters; and a
real `perf record` of a small program (skipped where perf is absent, except in CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from tests._bench_script import idle_thread, load_bench_script

_perf_split = load_bench_script("_perf_split")

# `perf script -F tid,period,ip,sym,dso` of four samples of process 100 (its loop
# thread) and one of its thread 101, periods in ns
SCRIPT = """\
100 50000
\tffffffff8150 copy_folio_from_iter_atomic ([kernel.kallsyms])
\tffffffff8151 generic_perform_write ([kernel.kallsyms])
\tffffffff8152 ext4_buffered_write_iter ([kernel.kallsyms])
\tffffffff8153 vfs_write ([kernel.kallsyms])
\tffffffff8154 __x64_sys_pwrite64 ([kernel.kallsyms])
\tffffffff8155 x64_sys_call ([kernel.kallsyms])
\tffffffff8156 do_syscall_64 ([kernel.kallsyms])
\tffffffff8157 entry_SYSCALL_64_after_hwframe ([kernel.kallsyms])
\t    7f00 __libc_pwrite64 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t    7f01 unixWrite (/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6)

100 50000
\tffffffff8160 clear_page_erms ([kernel.kallsyms])
\tffffffff8161 handle_mm_fault ([kernel.kallsyms])
\tffffffff8162 exc_page_fault ([kernel.kallsyms])
\tffffffff8163 asm_exc_page_fault ([kernel.kallsyms])
\tffffffff8164 _copy_to_user ([kernel.kallsyms])
\tffffffff8165 __x64_sys_recvfrom ([kernel.kallsyms])
\tffffffff8166 do_syscall_64 ([kernel.kallsyms])

100 100000
\t    7f10 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)

100 50000
\tffffffff8170 ext4_finish_bio ([kernel.kallsyms])
\tffffffff8171 handle_softirqs ([kernel.kallsyms])
\tffffffff8172 __irq_exit_rcu ([kernel.kallsyms])
\tffffffff8173 common_interrupt ([kernel.kallsyms])
\tffffffff8174 asm_common_interrupt ([kernel.kallsyms])

101 150000
\tffffffff8180 ext4_sync_file ([kernel.kallsyms])
\tffffffff8181 __x64_sys_fdatasync ([kernel.kallsyms])
\tffffffff8182 do_syscall_64 ([kernel.kallsyms])
\t    7f20 sqlite3OsSync (/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6)
"""


def test_each_sample_is_charged_to_its_innermost_frame_and_what_entered_the_kernel() -> None:
    split = _perf_split.split(_perf_split.parse(SCRIPT), pid=100, operations=10)
    assert split.samples == 5
    # µs per operation: a period of 50,000 ns over 10 operations is 5 µs
    assert split.by_dso == {"kernel": 30.0, "libpython": 10.0}
    assert split.by_thread == {"loop thread": 25.0, "other threads": 15.0}
    assert split.kernel_by_entry == {
        "pwrite64": 5.0,
        "page fault": 5.0,  # inside recvfrom's copy: the fault's
        "interrupt": 5.0,
        "fdatasync": 15.0,
    }
    assert split.kernel_by_symbol["copy_folio_from_iter_atomic"] == 5.0
    assert split.total == 40.0


def test_a_sample_in_a_library_is_the_library_s() -> None:
    script = "7 1000\n\tnot a frame\n\t    7f30 sqlite3VdbeExec (/x/libsqlite3.so.0)\n"
    (sample,) = _perf_split.parse(script)
    assert sample.dso == "libsqlite3"
    assert sample.frames == [("sqlite3VdbeExec", "/x/libsqlite3.so.0")]


def test_the_counters_read_every_thread_and_the_faults_of_fresh_memory() -> None:
    with idle_thread():
        before = _perf_split.counters(os.getpid())
        memory = bytearray(32 << 20)
        memory[::4096] = b"x" * len(memory[::4096])  # a write to every page
        after = _perf_split.counters(os.getpid())
    assert set(before) == set(after) == {"loop thread", "other threads"}
    counted = _perf_split.counted_since(before, after, operations=1)
    assert counted["loop thread"]["minor faults"] > 0
    assert all(count >= 0 for counts in counted.values() for count in counts.values())


def test_io_counts_this_process_s_writes() -> None:
    before = _perf_split.io(os.getpid())
    with tempfile.TemporaryFile() as file:
        for _ in range(3):
            os.write(file.fileno(), b"y" * 1000)
    after = _perf_split.io(os.getpid())
    assert after["write calls"] - before["write calls"] >= 3
    assert after["bytes written"] - before["bytes written"] >= 3000


SPINNER = "import os, time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: os.getpid()"


@pytest.mark.skipif(
    shutil.which("perf") is None and os.environ.get("CI") != "true",
    reason="no perf (apt-get install linux-perf)",
)
def test_perf_record_splits_a_program_s_system_calls(tmp_path: Path) -> None:
    program = subprocess.Popen([sys.executable, "-c", SPINNER])
    try:
        recorder = _perf_split.Recorder(program.pid, tmp_path / "spin.perf", frequency=2000)
        recorder.start()
        time.sleep(0.5)  # the program runs meanwhile
        recorder.stop()
    finally:
        program.wait(10)
    split = recorder.split(operations=1)
    assert split.samples > 0
    assert split.by_dso.get("kernel", 0) > 0
    assert split.kernel_by_entry.get("getpid", 0) > 0
