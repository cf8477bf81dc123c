"""A real local Ray cluster for tests: a head node and worker nodes on loopback, each its own ``ray start``.

One cluster per test process, started by the first test that asks for it (``ray_cluster``, a session
fixture; import it into a test module) and stopped at the end of the session. Every node is a
``ray start --block`` in its own process group, so a node is stopped, or killed mid-run, by its group
id alone: nothing else on the machine is touched (never ``ray stop``, which stops every Ray of the user).
Small on purpose: one CPU per node, an 80 MB object store, no dashboard.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_RAY_BIN = Path(sys.executable).with_name("ray")
_OBJECT_STORE_BYTES = 80 * 1024 * 1024
_START_TIMEOUT_S = 120.0
# A loopback address that Ray keeps (it replaces 127.0.0.1 and localhost by the machine's public address).
NODE_IP = "127.0.0.2"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _free_port_block(size: int) -> int:
    """The first port of ``size`` consecutive ports that are free now (worker ports of one node)."""
    for _ in range(200):
        first = random.randrange(20000, 60000 - size)
        try:
            socks = []
            for port in range(first, first + size):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError(f"no block of {size} free ports found")


@dataclass
class RayNode:
    """One ``ray start --block`` process (its process group holds the node's raylet and workers)."""

    name: str
    process: subprocess.Popen
    resources: dict[str, float]
    log: Path

    def pause(self) -> None:
        """SIGSTOP the node's whole process group: its work in flight hangs (until :meth:`kill`), none ends."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def kill(self) -> None:
        """SIGKILL the node's whole process group: the node dies as a crashed machine would."""
        if self.process.poll() is None or _group_alive(self.process.pid):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=30)


def _reload_auth_settings() -> None:
    """Make this process's Ray read the auth settings from the environment again (it reads them once and keeps them)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


@dataclass
class LocalRayCluster:
    """A head node and worker nodes on loopback, under one private temp dir, with a token of its own.

    The token (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``, set for the nodes and, while the cluster runs, for
    this process) keeps it apart from other Ray clusters of the same user: Ray otherwise reads the user-wide
    ``~/.ray/auth_token``, which another cluster on the machine may have written.
    """

    root: Path
    port: int = field(default_factory=_free_port)
    nodes: list[RayNode] = field(default_factory=list)
    token: str = field(default_factory=lambda: secrets.token_hex(32))

    @property
    def address(self) -> str:
        return f"{NODE_IP}:{self.port}"

    def start(self, *, head_cpus: int = 1, worker_cpus: int | None = 1) -> None:
        """Start the head and (unless ``worker_cpus`` is ``None``) a second node, and connect this process."""
        for attempt in range(2):  # a head that Ray gives up on (its RPC deadlines, on a loaded machine): once more
            head = self._start_node("head", head_cpus, {"head_node": 1}, head=True)
            self.nodes.append(head)
            try:
                self._wait_for_port()
                self.connect()
                break
            except (RuntimeError, ConnectionError):
                import ray

                ray.shutdown()
                head.kill()
                self.nodes.remove(head)
                if attempt:
                    raise
                self.port = _free_port()
        if worker_cpus is not None:
            self.add_node("second", worker_cpus, {"second_node": 1})
        self.wait_for_nodes(len(self.nodes))

    def add_node(self, name: str, cpus: int, resources: dict[str, float], python: Path | None = None) -> RayNode:
        """Start a worker node; a start that Ray gives up on (its RPC deadlines, on a loaded machine) is retried
        once. ``python``: the interpreter the node (and so its workers) runs with, without the tests' import path
        (for example :func:`python_without_proofgym`'s); default: this one's, with it."""
        for attempt in range(2):
            node = self._start_node(name, cpus, resources, head=False, python=python)
            self.nodes.append(node)
            try:
                self._wait_for_resource_or_exit(node, next(iter(resources)))
                return node
            except RuntimeError:
                node.kill()
                self.nodes.remove(node)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _wait_for_resource_or_exit(self, node: RayNode, resource: str) -> None:
        import ray

        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if node.process.poll() is not None:
                tail = node.log.read_text(errors="replace")[-1500:]
                raise RuntimeError(f"ray start ({node.name}) exited with {node.process.returncode}:\n{tail}")
            if resource in ray.cluster_resources():
                return
            time.sleep(0.3)
        raise RuntimeError(f"Ray node {node.name} did not register within {_START_TIMEOUT_S:g}s")

    def connect(self) -> None:
        import ray

        os.environ.update(self._auth_env())
        _reload_auth_settings()
        # The head's port opens before its raylet registers; on a loaded machine ray.init then finds no node on
        # NODE_IP ("No node info found ...", a ConnectionError) for a while: try again until the start deadline.
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not ray.is_initialized():
            try:
                ray.init(address=self.address, _node_ip_address=NODE_IP, logging_level="warning",
                         log_to_driver=False)
            except ConnectionError:
                ray.shutdown()
                self._check_nodes_running()
                if time.monotonic() > deadline:
                    raise
                time.sleep(1.0)

    def wait_for_nodes(self, count: int) -> None:
        import ray

        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if sum(node["Alive"] for node in ray.nodes()) >= count:
                return
            self._check_nodes_running()
            time.sleep(0.2)
        raise RuntimeError(f"only {sum(n['Alive'] for n in ray.nodes())} of {count} Ray nodes came up")

    def wait_for_resource(self, name: str, present: bool, timeout_s: float = 60.0) -> None:
        """Wait until the custom resource ``name`` is (or is no longer) among the cluster's live resources."""
        import ray

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if (name in ray.cluster_resources()) == present:
                return
            time.sleep(0.2)
        raise RuntimeError(f"resource {name!r} still {'absent' if present else 'present'} after {timeout_s:g}s")

    def stop(self) -> None:
        try:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        finally:
            for name in self._auth_env():
                os.environ.pop(name, None)
            for node in self.nodes:  # nothing to keep: kill outright (a graceful stop takes seconds per node)
                node.kill()
            self.nodes.clear()
            shutil.rmtree(self.root, ignore_errors=True)

    def _start_node(self, name: str, cpus: int, resources: dict[str, float], *, head: bool,
                    python: Path | None = None) -> RayNode:
        workers = _free_port_block(40)
        ray = [str(_RAY_BIN)] if python is None else [str(python), "-m", "ray.scripts.scripts"]
        command = [*ray, "start", "--block", "--disable-usage-stats", "--node-ip-address", NODE_IP,
                   "--num-cpus", str(cpus), "--num-gpus", "0", "--resources", json.dumps(resources),
                   "--object-store-memory", str(_OBJECT_STORE_BYTES),
                   "--node-manager-port", str(_free_port()), "--object-manager-port", str(_free_port()),
                   "--runtime-env-agent-port", str(_free_port()), "--metrics-export-port", str(_free_port()),
                   "--dashboard-agent-listen-port", str(_free_port()),
                   "--dashboard-agent-grpc-port", str(_free_port()),
                   "--min-worker-port", str(workers), "--max-worker-port", str(workers + 39)]
        if head:
            command += ["--head", "--port", str(self.port), "--include-dashboard", "false",
                        "--temp-dir", str(self.root / "ray")]
        else:
            command += ["--address", self.address]
        log = self.root / f"{name}.log"
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": _pythonpath(), **self._auth_env()}
        if python is not None:
            env.pop("PYTHONPATH")
            env.pop("VIRTUAL_ENV", None)
        env.pop("RAY_ADDRESS", None)
        env.pop("RAY_AUTH_TOKEN_PATH", None)
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                       start_new_session=True)
        return RayNode(name, process, resources, log)

    def _auth_env(self) -> dict[str, str]:
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token}

    def _wait_for_port(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._check_nodes_running()
            try:
                with socket.create_connection((NODE_IP, self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"the Ray head did not open port {self.port}")

    def _check_nodes_running(self) -> None:
        for node in self.nodes:
            if node.process.poll() is not None:
                tail = node.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"ray start ({node.name}) exited with {node.process.returncode}:\n{tail}")


def python_without_proofgym(root: Path) -> Path:
    """A virtual environment under ``root`` with every package of this interpreter's but proofgym (and the plugins
    installed beside it), and its interpreter: a machine where ``pip install ray`` and proofgym's dependencies were
    run, never proofgym's install. Its site-packages links each entry of this one's, leaving out proofgym's code
    path (its editable install's ``.pth``) and its distribution metadata, so neither ``import proofgym`` nor its
    entry points resolve there."""
    import site
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    [target] = (root / "lib").glob("python3*/site-packages")
    [source] = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()][:1]
    for entry in source.iterdir():
        if "proofgym" in entry.name.lower() or entry.name.startswith("_proofgym"):
            continue
        (target / entry.name).symlink_to(entry)
    return root / "bin" / "python"


def _pythonpath() -> str:
    """The test process's import path, so that Ray's workers can unpickle the tests' helper verifiers."""
    tests = str(Path(__file__).resolve().parent)
    paths = [tests, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return os.pathsep.join(p for p in paths if p)


_cluster: LocalRayCluster | None = None


@pytest.fixture(scope="session")
def ray_cluster():
    """A running two-node local Ray cluster this process is connected to (skip without Ray)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'proofgym[ray]')")
    if not _RAY_BIN.exists():
        pytest.skip(f"Ray's command line is not beside the interpreter ({_RAY_BIN})")
    global _cluster
    if _cluster is None:
        cluster = LocalRayCluster(Path(tempfile.mkdtemp(prefix="pg-ray-")))
        try:
            cluster.start()
        except BaseException:
            cluster.stop()
            raise
        _cluster = cluster
    yield _cluster
    if _cluster is not None:
        _cluster.stop()
        _cluster = None
