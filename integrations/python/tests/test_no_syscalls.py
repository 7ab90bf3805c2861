"""strace: a loop of spans makes no system call on the caller's thread (only the background
thread talks to geoattrd). Skipped where strace is not installed or may not trace."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from conftest import PACKAGE_ROOT

STRACE = shutil.which("strace")


def marker_write_end(lines: list[str], marker: str, caller: int) -> int:
    """Index of the line where the caller's marker write returns. When another thread makes a
    call meanwhile, strace splits the write into "<unfinished ...>" and "<... write resumed>"."""
    start = next(i for i, line in enumerate(lines) if marker in line)
    if "<unfinished ...>" not in lines[start]:
        return start
    return next(
        i for i in range(start + 1, len(lines))
        if lines[i].startswith(f"{caller} <... write resumed>")
    )


@pytest.mark.skipif(STRACE is None, reason="strace is not installed (apt-get install -y strace)")
def test_a_loop_of_spans_makes_no_syscall_on_the_callers_thread(daemon, workdir):
    out = workdir / "strace.out"
    command = [
        STRACE, "-f", "-o", str(out), "-e", "trace=network,read,write",
        sys.executable, str(PACKAGE_ROOT / "bench_span_processor.py"), "--loop", "20000", "--socket", daemon.socket,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=50)
    if result.returncode != 0 and "ptrace" in result.stderr:
        pytest.skip(f"strace may not trace here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    caller = int(re.search(r"caller thread (\d+)", result.stdout).group(1))
    assert "geo.* on the last one: 2" in result.stdout, result.stdout

    lines = out.read_text().splitlines()
    start = marker_write_end(lines, "loop start", caller)
    end = next(i for i, line in enumerate(lines) if "loop end" in line)
    inside = lines[start + 1 : end]
    by_caller = [line for line in inside if line.split(" ", 1)[0] == str(caller)]
    assert by_caller == [], by_caller[:10]
    # The background thread did talk to geoattrd over the run.
    others = [line for line in lines if line.split(" ", 1)[0] != str(caller)]
    assert any("connect(" in line and daemon.socket in line for line in others)
    print(f"{end - start - 1} traced calls during the loop, {len(by_caller)} on the caller's thread")
