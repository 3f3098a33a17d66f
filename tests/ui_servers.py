"""optuna-dashboard for a test: the shared-store test reads its API, the browser test its pages."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def get_json(url: str, timeout: float = 10) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


@contextmanager
def optuna_dashboard(storage: str, timeout: float = 60) -> Iterator[str]:
    """The venv's ``optuna-dashboard`` on ``storage``, on 127.0.0.1 and a free port, for the
    duration: yields its address (``http://127.0.0.1:PORT``) once its API answers; stopped with
    SIGINT (its Ctrl-C) afterwards."""
    from pipeline.hosts import free_port

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    dash = subprocess.Popen([str(Path(sys.executable).parent / "optuna-dashboard"), storage, "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                get_json(f"{base}/api/studies", timeout=2)
                break
            except OSError:
                assert dash.poll() is None and time.monotonic() < deadline, "optuna-dashboard did not start"
                time.sleep(0.3)
        yield base
    finally:
        dash.send_signal(signal.SIGINT)
        dash.wait(20)
