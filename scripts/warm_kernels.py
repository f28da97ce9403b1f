"""Start nbval's notebook kernels as forks of one warm process, so that both editions run faster.

nbval gives every notebook a fresh kernel, and a fresh kernel spends about 3.5 s of CPU on this
project's machines before the notebook's first real line: it starts ipykernel (0.8 s), imports
torch, matplotlib and attnbook (2.2 s on average in the chapters' first cells), and imports
torch._dynamo the first time an optimiser is built (1.2 s; PyTorch does that in
``Optimizer.add_param_group``, and 14 of the 23 chapters train). Over both editions' 46 kernels,
on CI's two cores, that is about 75 s of wall time. Here one server process does that work once;
each kernel is a fork of it (copy-on-write: its first cell takes milliseconds, its startup
0.5 s), which then runs ipykernel exactly as ``python -m ipykernel_launcher -f FILE`` would, with
the environment and the working directory that jupyter_client gives it.

    python scripts/warm_kernels.py run -- pytest --nbval book --nbval-kernel-name attnbook-warm

``run`` starts the server, puts the ``attnbook-warm`` kernelspec on ``JUPYTER_PATH``, runs the
command and stops the server. The kernelspec's command is this script's ``client``: jupyter_client
launches it like any kernel; it asks the server for a fork, passes it its standard streams,
forwards SIGINT and SIGTERM to it, and exits when the kernel does. If the client itself is killed,
the kernel notices (its end of the socket closes) and exits too.

What a forked kernel shares with the server, and why it computes what a fresh kernel computes:

* Modules already imported, with their import-time state. The server imports them with the same
  environment as the kernels (it inherits ``run``'s, which pytest and jupyter_client pass on); a
  kernel whose environment differs in anything but the variables jupyter_client adds starts cold
  instead (``python -m ipykernel_launcher``), so ``ATEN_CPU_CAPABILITY``, ``OMP_NUM_THREADS`` and
  the like always hold. Only modules every notebook imports anyway are preloaded, and none of them
  changes state on import (``attnbook.viz`` sets its style only when a chapter calls it).
* Random state: every fork reseeds Python's, NumPy's and PyTorch's global generators from the
  operating system, as a fresh process does. (Chapters seed what they need.)
* No threads: the server checks that it runs none when it forks, so no lock is inherited held.

Tests: tests/test_warm_kernels.py. Without the server (``make nbval NBVAL_WARM=0``), kernels start
cold as usual; the stored outputs are the same either way.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL_NAME = "attnbook-warm"
SERVER_VARIABLE = "ATTNBOOK_KERNEL_SERVER"  # path of the server's socket
# What jupyter_client (JPY_PARENT_PID, ...), pytest (PYTEST_CURRENT_TEST, ...) and pytest-xdist's
# workers (PYTEST_XDIST_WORKER, COLUMNS, LINES) add to a kernel's environment, and nothing that
# the preloaded modules read on import; any other difference starts a cold kernel.
MAY_DIFFER_PREFIXES = ("JPY_", "PYTEST_", "PYDEVD_")
MAY_DIFFER_NAMES = {"COLUMNS", "LINES"}
# Imported by every chapter's first cell, or by the kernel itself; nothing here acts on import.
PRELOAD = (
    "numpy",
    "torch",
    "torch._dynamo",  # imported by PyTorch when the first optimiser is built: ~1.2 s
    "matplotlib.pyplot",
    "IPython",
    "ipykernel.kernelapp",
    "attnbook",
    "attnbook.viz",
    "attnbook.train",
)


def cold_kernel(connection_file: str) -> None:
    """Become an ordinary kernel: what the default kernelspec runs."""
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file])


# --- the client: what jupyter_client launches -----------------------------------------------


def client(connection_file: str) -> int:
    """Ask the server for a kernel; stand in for it until it exits."""
    address = os.environ.get(SERVER_VARIABLE)
    if not address:
        cold_kernel(connection_file)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
    except OSError as error:
        print(
            f"warm_kernels: no server at {address} ({error}); starting a cold kernel",
            file=sys.stderr,
        )
        cold_kernel(connection_file)
    request = {"connection_file": connection_file, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
    reply = json.loads(sock.makefile().readline() or "{}")
    if "pid" not in reply:
        print(
            f"warm_kernels: {reply.get('cold', 'no kernel')}; starting a cold kernel",
            file=sys.stderr,
        )
        sock.close()
        cold_kernel(connection_file)
    pid = reply["pid"]

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGINT, forward)  # jupyter_client's interrupt
    signal.signal(signal.SIGTERM, forward)  # its polite shutdown; then wait for the kernel
    while True:  # the kernel holds the other end: end of file when it exits
        try:
            if not sock.recv(1):
                return 0
        except InterruptedError:
            continue


# --- the server ------------------------------------------------------------------------------


def serve(address: str) -> None:
    """Import what every kernel needs, then fork a kernel for each client that connects."""
    # The environment a kernel of this command gets; then what the imports add to it (PyTorch
    # sets TORCHINDUCTOR_CACHE_DIR), which a fresh kernel would have after the same imports.
    start_env = dict(os.environ)
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    import gc

    gc.collect()
    gc.freeze()  # keep the imported objects out of later collections: fewer pages copied
    added = {k: v for k, v in os.environ.items() if k not in start_env}
    # The script's folder is sys.path[0] here; ipykernel_launcher removes the working directory
    # in the same place, and the kernel adds '' back itself.
    del sys.path[0]
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # finished kernels need no reaping
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(16)
    print("ready", flush=True)
    refused: set[str] = set()
    while True:
        conn, _ = listener.accept()
        with conn:
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            while message and not message.endswith(b"\n"):
                chunk = conn.recv(1 << 20)
                message = message + chunk if chunk else b""
            if not message:  # the client went away before its request was whole
                for fd in fds:
                    os.close(fd)
                continue
            request = json.loads(message)
            differ = sorted(
                k
                for k in set(start_env) | set(request["env"])
                if start_env.get(k) != request["env"].get(k)
                and not (k.startswith(MAY_DIFFER_PREFIXES) or k in MAY_DIFFER_NAMES)
            )
            threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
            if differ or threads != 1:
                why = f"environment differs in {differ}" if differ else f"{threads} threads"
                if why not in refused:  # said once here: pytest may hide the client's stderr
                    refused.add(why)
                    print(f"warm_kernels: a cold kernel: {why}", file=sys.stderr, flush=True)
                reply(conn, {"cold": why}, fds)
                continue
            pid = os.fork()
            if pid == 0:  # the kernel: it never returns to this loop
                try:
                    listener.close()
                    kernel(
                        conn,
                        fds,
                        request["connection_file"],
                        request["cwd"],
                        {**request["env"], **added},
                    )
                finally:
                    os._exit(1)  # only reached if the kernel could not start
            reply(conn, {"pid": pid}, fds)


def reply(conn: socket.socket, answer: dict, fds: list[int]) -> None:
    """Answer a client (one that has gone away is not an error) and let go of its streams."""
    try:
        conn.sendall(json.dumps(answer).encode() + b"\n")
    except OSError:
        pass
    for fd in fds:
        os.close(fd)


def kernel(conn: socket.socket, fds: list[int], connection_file: str, cwd: str, env: dict) -> None:
    """In the fork: take the client's streams, environment and folder; run ipykernel."""
    import random
    import threading

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)

    def exit_with_client() -> None:
        try:
            while conn.recv(1):
                pass
        except OSError:
            pass
        os._exit(1)

    threading.Thread(target=exit_with_client, daemon=True).start()

    # Fresh random state, as in a new process.
    random.seed()
    import numpy
    import torch

    numpy.random.seed()
    torch.seed()

    import ipykernel_launcher
    from ipykernel import kernelapp

    sys.argv = [ipykernel_launcher.__file__, "-f", connection_file]
    # ipykernel read JPY_PARENT_PID when the server imported it; give this kernel's.
    parent = {"parent_handle": int(env["JPY_PARENT_PID"])} if env.get("JPY_PARENT_PID") else {}
    try:
        kernelapp.launch_new_instance(argv=sys.argv[1:], **parent)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


# --- run: the server around a command --------------------------------------------------------


def write_kernelspec(folder: str | Path) -> None:
    """Write the ``attnbook-warm`` kernelspec under ``folder/kernels`` (a JUPYTER_PATH entry)."""
    spec = Path(folder, "kernels", KERNEL_NAME)
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-I", str(Path(__file__).resolve()), "client", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Python 3 (forked)", "language": "python"})
    )


def start_server(address: str, env: dict[str, str]) -> subprocess.Popen:
    """Start the server with the environment its kernels will have; return once it listens."""
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "serve", address],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    if server.stdout.readline().strip() != "ready":
        server.kill()
        raise RuntimeError("warm_kernels: the server did not start")
    return server


def run(command: list[str]) -> int:
    """Run ``command`` with the server up and the ``attnbook-warm`` kernelspec installed."""
    with tempfile.TemporaryDirectory(prefix="warm-kernels-") as tmp:
        write_kernelspec(tmp)
        # The server, the command and so the kernels all get the same environment.
        env = dict(os.environ)
        env[SERVER_VARIABLE] = os.path.join(tmp, "server.sock")
        env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [tmp, env.get("JUPYTER_PATH")]))
        server = start_server(env[SERVER_VARIABLE], env)
        try:
            return subprocess.call(command, env=env)
        finally:
            server.terminate()
            server.wait()


def main(argv: list[str]) -> int:
    if argv[:1] == ["client"] and len(argv) == 2:
        return client(argv[1])
    if argv[:1] == ["serve"] and len(argv) == 2:
        serve(argv[1])
        return 0
    if argv[:2] == ["run", "--"] and len(argv) > 2:
        return run(argv[2:])
    print(__doc__.split("\n\n")[2], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
