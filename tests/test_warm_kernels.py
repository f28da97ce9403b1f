"""scripts/warm_kernels.py: a forked kernel is a fresh kernel, only started sooner.

`make nbval` and `make nbval-zh` start every notebook's kernel as a fork of one process that has
imported torch, matplotlib and attnbook. These tests start kernels through that server with
jupyter_client, as nbval does, and check what a notebook could notice: the same modules,
environment, paths, plotting backend and thread settings as a kernel started the ordinary way; its
own random state; interrupts; no kernel left behind when jupyter_client kills it; and a cold start
whenever the environment differs from the server's in a variable that the imports read.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("warm_kernels", ROOT / "scripts" / "warm_kernels.py")
warm_kernels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(warm_kernels)

# What a notebook can see of its kernel (JSON, printed by the kernel).
FACTS = """
import json, os, random, sys, threading
import matplotlib, torch
print(json.dumps(dict(
    preloaded="torch" in sys.modules and "attnbook" in sys.modules,
    pid=os.getpid(), cwd=os.getcwd(), path=sys.path, argv0=os.path.basename(sys.argv[0]),
    env={k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "PYTEST_"))},
    backend=matplotlib.get_backend(), threads=torch.get_num_threads(),
    capability=torch.backends.cpu.get_cpu_capability(), grad=torch.is_grad_enabled(),
    dtype=str(torch.get_default_dtype()), random=random.random(), torch_random=torch.rand(1).item(),
    shell=type(get_ipython()).__name__,
)))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The server, and the kernelspec, for this module's kernels (started from this process)."""
    folder = tmp_path_factory.mktemp("warm")
    warm_kernels.write_kernelspec(folder)
    # One thread, as `make nbval` runs: with more, NumPy's OpenBLAS starts a thread pool on import,
    # and the server, rightly, forks no kernel from a process with threads (it starts them cold).
    env = {
        warm_kernels.SERVER_VARIABLE: str(folder / "server.sock"),
        "JUPYTER_PATH": str(folder),
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    process = warm_kernels.start_server(str(folder / "server.sock"), dict(os.environ))
    yield folder
    process.terminate()
    process.wait()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def start(kernel_name: str, cwd: Path, **kwargs):
    manager = jupyter_client.KernelManager(kernel_name=kernel_name)
    manager.start_kernel(cwd=str(cwd), **kwargs)
    client = manager.blocking_client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    return manager, client


def execute(client, code: str, timeout: float = 60) -> tuple[str, list[str]]:
    """Run code; return its standard output and the names of any errors."""
    out, errors = [], []

    def hook(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            errors.append(msg["content"]["ename"])

    client.execute_interactive(code, timeout=timeout, output_hook=hook)
    return "".join(out), errors


def facts(kernel_name: str, cwd: Path, **kwargs) -> dict:
    manager, client = start(kernel_name, cwd, **kwargs)
    try:
        return json.loads(execute(client, FACTS)[0])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_a_forked_kernel_sees_what_a_fresh_one_sees(server, tmp_path):
    cold = facts("python3", tmp_path)
    warm = facts(warm_kernels.KERNEL_NAME, tmp_path)
    assert warm["preloaded"] and not cold["preloaded"]  # the fork really was warm
    # Set by importing torch._dynamo, which the server did and the cold kernel (no optimiser) may
    # not have done (unless this test process did, and passed it on to both).
    for kernel in (warm, cold):
        kernel["env"].pop("TORCHINDUCTOR_CACHE_DIR", None)
    assert warm["env"] == cold["env"]
    for fact in (
        "cwd",
        "path",
        "argv0",
        "backend",
        "threads",
        "capability",
        "grad",
        "dtype",
        "shell",
    ):
        assert warm[fact] == cold[fact], fact
    # A fork has its own random state, as a new process does.
    again = facts(warm_kernels.KERNEL_NAME, tmp_path)
    assert again["pid"] != warm["pid"]
    assert again["random"] != warm["random"] and again["torch_random"] != warm["torch_random"]


def test_another_environment_gets_a_cold_kernel(server, tmp_path):
    # The server imported torch with this process's environment; a kernel asking for other CPU
    # kernels must import it itself.
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    assert not facts(warm_kernels.KERNEL_NAME, tmp_path, env=env)["preloaded"]


def test_interrupt_and_kill_reach_the_forked_kernel(server, tmp_path):
    manager, client = start(warm_kernels.KERNEL_NAME, tmp_path)
    try:
        pid = json.loads(execute(client, FACTS)[0])["pid"]
        assert pid != manager.provisioner.pid  # the kernel is the fork, not the process launched
        msg_id = client.execute("import time; time.sleep(60)")
        time.sleep(1)
        started = time.monotonic()
        manager.interrupt_kernel()  # SIGINT to the launched process, which passes it on
        reply = client.get_shell_msg(timeout=20)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = client.get_shell_msg(timeout=20)
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        assert time.monotonic() - started < 20
        # Still alive, and running code (asked for a value: no race with the output stream). A
        # request that arrives while the kernel still aborts its queue after the interrupted
        # cell's error is answered "aborted" (seen under load): ask again, up to three times.
        for _ in range(3):
            reply = client.execute_interactive("", user_expressions={"x": "6 * 7"}, timeout=60)
            if reply["content"]["status"] != "aborted":
                break
        assert reply["content"]["status"] == "ok", reply["content"]
        assert reply["content"]["user_expressions"]["x"]["data"]["text/plain"] == "42"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)  # SIGKILL to the launched process
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the forked kernel outlived its client"
