"""Ray as users run it: ``runtime_env`` and resources per actor read strictly (errors name the key), a package name
in ``py_modules`` shipping its code and entry points, an unreachable address named in seconds, and one warning line
when a connection to another cluster is reused."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from proofgym.config import ConfigError
from proofgym.evaluation import load_eval_config
from proofgym.runtime import (
    RayConfig,
    RayExecutor,
    RayPlacement,
    RayRuntimeEnv,
    RuntimeConfig,
    connect_ray,
    ray_runtime_env,
)

from _ray_cluster import ray_cluster  # noqa: F401  (the session fixture)

PROOFGYM = [sys.executable, "-c", "from proofgym.cli import main; main()"]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens on it once closed


def eval_file(path: Path, compute: str = "") -> Path:
    path.write_text('kind = "eval"\n[evaluation]\nenv_name = "grant_eligibility"\npolicy_name = "oracle"\n'
                    f'seeds = "0-1"\ntraces = "{path.parent / "t.db"}"\n{compute}', encoding="utf-8")
    return path


def test_runtime_env_and_resources_are_read_strictly_and_errors_name_the_key(tmp_path):
    for compute, key in [('[compute.runtime_env]\nworkin_dir = "."\n', "compute.runtime_env.workin_dir"),
                         ('[compute.runtime_env]\npip = ["x"]\nuv = ["x"]\n', "compute.runtime_env"),
                         ('[compute.runtime_env]\nenv_vars = {A = 1}\n', "compute.runtime_env.env_vars"),
                         ("[compute]\nresources = {CPU = 1}\n", "compute.resources"),
                         ("[compute]\nresources = {accelerator = 0}\n", "compute.resources"),
                         ("[compute]\nnum_gpus = -1\n", "compute.num_gpus"),
                         ("[compute]\nmemory = 0\n", "compute.memory")]:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            load_eval_config(eval_file(tmp_path / "e.toml", compute))
    config = load_eval_config(eval_file(tmp_path / "e.toml", (
        '[compute]\nray_address = "auto"\nnum_cpus = 0.5\nnum_gpus = 1\nmemory = 2147483648\n'
        'resources = {bare_node = 0.5}\n[compute.runtime_env]\nworking_dir = "."\npy_modules = ["proofgym"]\n'
        'env_vars = {PROOFGYM_X = "1"}\npip = ["rich"]\n')))
    compute = config.compute
    assert compute.actor_options() == {"num_cpus": 0.5, "num_gpus": 1.0, "memory": 2147483648,
                                       "resources": {"bare_node": 0.5}}
    assert compute.runtime_env.excludes is None  # Ray's own defaults (.git, .venv, venv, __pycache__)
    # The executor's settings (runtime.ray) take the same keys.
    ray = RuntimeConfig(executor="ray", ray={"num_gpus": 0.25, "runtime_env": {"env_vars": {"A": "b"}}}).ray
    assert ray.actor_options() == {"num_cpus": 1.0, "num_gpus": 0.25} and ray.runtime_env.env_vars == {"A": "b"}
    # Frozen settings stay hashable (a RuntimeConfig is), their mappings and lists included.
    again = RuntimeConfig(executor="ray", ray={"num_gpus": 0.25, "runtime_env": {"env_vars": {"A": "b"}}}).ray
    assert hash(again) == hash(ray) and hash(again.runtime_env) == hash(ray.runtime_env)
    with pytest.raises(ValidationError, match=r"runtime_env\.conda"):
        RayConfig(runtime_env={"conda": "env.yaml"})


def test_capacity_counts_every_resource_an_actor_reserves():
    cluster = {"CPU": 8.0, "GPU": 2.0, "memory": 8e9, "bare_node": 3.0}
    assert RayPlacement().capacity(cluster) == 8
    assert RayPlacement(num_cpus=0.5, num_gpus=0.5).capacity(cluster) == 4
    assert RayPlacement(memory=3_000_000_000, resources={"bare_node": 1}).capacity(cluster) == 2
    assert RayPlacement(resources={"absent": 1}).capacity(cluster) == 1  # never 0: Ray waits for such a node


def test_a_package_name_in_py_modules_ships_its_folder_and_its_entry_points(tmp_path):
    (tmp_path / "mine").mkdir()
    env = ray_runtime_env(RayRuntimeEnv(working_dir=str(tmp_path), py_modules=["proofgym", str(tmp_path / "mine"),
                                                                             "s3://bucket/pkg.zip"]))
    package, metadata_dir, mine, remote = env["py_modules"]
    assert Path(package) == Path(importlib.util.find_spec("proofgym").origin).parent
    assert Path(metadata_dir).name.startswith("proofgym-") and Path(metadata_dir).suffix == ".dist-info"
    assert "[proofgym.envs]" in (Path(metadata_dir) / "entry_points.txt").read_text()
    assert (mine, remote) == (str(tmp_path / "mine"), "s3://bucket/pkg.zip")
    assert env["working_dir"] == str(tmp_path) and "excludes" not in env
    assert ray_runtime_env(RayRuntimeEnv(env_vars={"A": "1"}, excludes=["*.db"])) == {"env_vars": {"A": "1"},
                                                                                     "excludes": ["*.db"]}
    with pytest.raises(ConfigError, match="runtime_env.py_modules: 'no_such_package_x' is neither"):
        ray_runtime_env(RayRuntimeEnv(py_modules=["no_such_package_x"]))
    with pytest.raises(ConfigError, match="runtime_env.py_modules: 'socket' is neither"):  # a module, no package
        ray_runtime_env(RayRuntimeEnv(py_modules=["socket"]))
    with pytest.raises(ConfigError, match="runtime_env.working_dir: .*is not a folder"):
        ray_runtime_env(RayRuntimeEnv(working_dir=str(tmp_path / "absent")))


@pytest.mark.parametrize("command", ["eval", "train"])
def test_an_unreachable_ray_address_is_one_line_naming_it_within_seconds(tmp_path, command):
    address = f"127.0.0.1:{closed_port()}"
    if command == "eval":
        args = ["eval", "--config", str(eval_file(tmp_path / "e.toml")), "--ray", address]
    else:
        (tmp_path / "rl.toml").write_text('kind = "rl"\n[services]\ntask_url = "local:fact_finding"\n[model]\n'
                                          'base = "proofgym:tiny"\n[rollout]\nenv_name = "fact_finding"\n')
        args = ["train", "--config", str(tmp_path / "rl.toml"), "--output-dir", str(tmp_path / "run"),
                "--ray", address]
    # Ray itself retries an address nothing answers on for more than a minute: the timeout is the test's bound.
    result = subprocess.run([*PROOFGYM, *args], capture_output=True, text=True, timeout=90)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode != 0
    assert any(f"cannot reach the Ray cluster at {address}: " in line for line in lines), lines
    assert not any("Traceback" in line for line in lines), lines


def test_a_runtime_env_that_cannot_be_shipped_is_named_before_the_address_is_dialled(tmp_path):
    config = eval_file(tmp_path / "e.toml", f'[compute]\nray_address = "127.0.0.1:{closed_port()}"\n'
                                            '[compute.runtime_env]\nworking_dir = "no_such_folder"\n')
    result = subprocess.run([*PROOFGYM, "eval", "--config", str(config)], capture_output=True, text=True, timeout=90)
    assert result.returncode != 0
    assert "compute.runtime_env.working_dir: 'no_such_folder' is not a folder" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    with pytest.raises(ConfigError, match=r"^runtime.ray.runtime_env.py_modules: 'no_such_pkg' is neither"):
        RayExecutor.from_config(RayConfig(address=f"127.0.0.1:{closed_port()}",
                                          runtime_env={"py_modules": ["no_such_pkg"]}))


@pytest.mark.skipif(importlib.util.find_spec("grpc") is not None, reason="Ray Client is installed here")
def test_a_ray_client_address_without_ray_client_says_which_extra_it_needs(tmp_path):
    result = subprocess.run([*PROOFGYM, "eval", "--config", str(eval_file(tmp_path / "e.toml")),
                             "--ray", f"ray://127.0.0.1:{closed_port()}"], capture_output=True, text=True, timeout=90)
    assert result.returncode != 0 and "pip install 'proofgym[ray-client]'" in result.stdout + result.stderr


def test_reusing_a_connection_to_another_cluster_is_one_warning_line(ray_cluster, caplog):  # noqa: F811
    import ray

    with caplog.at_level(logging.WARNING, logger="proofgym.runtime"):
        for same in (ray_cluster.address, "auto", None):
            assert connect_ray(same) is ray
        assert caplog.records == []
        other = f"127.0.0.2:{closed_port()}"
        assert connect_ray(other) is ray and ray.is_initialized()  # reused, not probed, not joined
    [record] = caplog.records
    message = record.getMessage()
    assert "\n" not in message and ray_cluster.address in message and f"not {other}" in message
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="proofgym.runtime"):
        connect_ray(ray_cluster.address, RayRuntimeEnv(env_vars={"A": "1"}))
    [record] = caplog.records
    assert "runtime_env" in record.getMessage() and "not applied" in record.getMessage()


SHIPPED = """
import json, sys
import ray
from proofgym.runtime import RayRuntimeEnv, connect_ray
connect_ray(sys.argv[1], RayRuntimeEnv(py_modules=["proofgym"], env_vars={"PROOFGYM_RAY_TEST": "shipped"}))

@ray.remote(num_cpus=0)
def where():
    import os
    from importlib import metadata
    import proofgym
    return os.environ.get("PROOFGYM_RAY_TEST"), proofgym.__file__, str(metadata.distribution("proofgym")._path)

print(json.dumps(ray.get(where.remote(), timeout=120)))
"""


def test_the_runtime_env_reaches_the_workers_and_the_shipped_proofgym_comes_first(ray_cluster):  # noqa: F811
    # A fresh driver (a process joins one cluster with one runtime_env): its workers see the env_vars, and import
    # proofgym and read its entry points from the copy Ray unpacked, before the one installed on the node.
    result = subprocess.run([sys.executable, "-c", SHIPPED, ray_cluster.address], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    value, module, distribution = json.loads(result.stdout.strip().splitlines()[-1])
    installed = Path(importlib.util.find_spec("proofgym").origin).parent
    assert value == "shipped"
    assert "py_modules_files" in module and not Path(module).is_relative_to(installed)
    assert "py_modules_files" in distribution and distribution.endswith(".dist-info")


def test_no_address_starts_a_ray_of_its_own_not_the_last_one_ray_start_began(tmp_path):
    """Ray's ``ray.init()`` joins the cluster named in ``<ray temp dir>/ray_current_cluster`` (the last ``ray start``
    on the machine), stopped or not; a runtime with no address starts its own instead (a benchmark on a machine
    where a test had run ``ray start`` waited a minute and failed to join it)."""
    import shutil
    import tempfile

    temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths live under it
    try:
        (temp / "ray").mkdir()
        (temp / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{closed_port()}")
        code = ("import ray; from proofgym.runtime import connect_ray; connect_ray(); "
                "print('cpus', ray.cluster_resources().get('CPU')); ray.shutdown()")
        env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                              env={**env, "RAY_TMPDIR": str(temp)})
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cpus " in done.stdout
