"""The RL policy served by another process: any OpenAI-compatible server that has vLLM's LoRA adapter endpoints
(``proofgym serve-model --enable-lora``, or ``vllm serve --enable-lora`` with ``VLLM_ALLOW_RUNTIME_LORA_UPDATING``),
at ``[policy_server] url``, or started by the trainer (``launch = "serve-model"`` or ``"vllm"``, or a ``[vllm]``
section on a machine with a GPU and vLLM).

After update ``k`` the trainer saves its LoRA adapter (peft's ``save_pretrained``) to ``<adapter_dir>/step-<k>``,
loads it under the name ``<label>-step-<k>`` (``POST /v1/load_lora_adapter``), unloads the previous one, and the
rollouts that follow ask for that name. Before the first update they ask for the base model. Every turn is
attributed by the response's ``model`` field: a rollout with a turn answered by another model than the one its batch
asked for is stale and is refused (see :meth:`~proofgym.training.rl._trainer.RLTrainer._refuse_stale`).

Full-weight updates (``trainer_mode = "full"``) go through vLLM's weight transfer over NCCL
(``policy_server.weight_sync = "nccl"``: ``/get_world_size``, ``/init_weight_transfer``, ``/update_weights``,
``/finalize_weight_update``, the server started with ``--weight-transfer-backend nccl``), which needs vLLM and a GPU.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from proofgym.training.rl._config import PolicyServerSection
from proofgym.training.rl._policy import PolicyModels
from proofgym.training.rl._task_app import RLError


def vllm_available() -> str | None:
    """Why ``vllm serve`` cannot be started here (None when it can): no GPU, or vLLM not installed."""
    import importlib.util

    import torch

    if not torch.cuda.is_available():
        return "this machine has no GPU (torch.cuda.is_available() is False)"
    if importlib.util.find_spec("vllm") is None or shutil.which("vllm") is None:
        return "vLLM is not installed (pip install vllm)"
    return None


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _http(method: str, url: str, body: dict[str, Any] | None = None, *, timeout: float = 120.0) -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data is not None else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the configured server
            return int(response.status), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode("utf-8", "replace")


class ServerProcess:
    """``proofgym serve-model DIR --enable-lora`` or ``vllm serve MODEL --enable-lora`` in a child process on a
    loopback port, its output in ``log``; :meth:`start` waits for ``/health``, :meth:`close` stops it."""

    def __init__(self, command: list[str], *, port: int, log: Path, env: dict[str, str] | None = None,
                 what: str) -> None:
        self.command, self.port, self.log, self.what = command, port, log, what
        self.env = {**os.environ, **(env or {})}
        self.url = f"http://127.0.0.1:{port}/v1"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float) -> ServerProcess:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as out:
            self._process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RLError(f"{self.what} exited with status {self._process.returncode} before it answered "
                              f"/health: {self._tail()}")
            try:
                if _http("GET", self.url.removesuffix("/v1") + "/health", timeout=5)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.5)
        self.close()
        raise RLError(f"{self.what} did not answer /health within {timeout_s:g} s (policy_server.startup_timeout_s): "
                      f"{self._tail()}")

    def _tail(self) -> str:
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            return f"see {self.log}"
        return f"{' | '.join(lines[-3:])} (log: {self.log})"

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def export_base(models: PolicyModels, folder: Path) -> Path:
    """The trained model's base weights (without LoRA) and tokenizer (chat template included) as a model directory
    another process can serve (``proofgym serve-model DIR``, ``vllm serve DIR``)."""
    import copy

    model = models.trainer
    if models.lora:
        model = copy.deepcopy(model).unload()  # peft's wrapper off, the LoRA layers removed: the base weights
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    models.tokenizer.save_pretrained(str(folder))
    return folder


class RemotePolicy:
    """The policy server the rollouts go to when ``[policy_server]`` (or ``[vllm]``) is set; the same face as
    :class:`~proofgym.training.rl._policy.PolicyServer` for the trainer (``url``, ``version``, ``sync``,
    ``model_name``, ``name_for``, ``close``)."""

    def __init__(self, models: PolicyModels, section: PolicyServerSection, *, output_dir: Path, label: str,
                 base: str, vllm_options: dict[str, Any], lora_rank: int, cpu_threads: int | None) -> None:
        from proofgym.model_server import GenerationBackend, LoadedModel

        self.models, self.section, self.label = models, section, label
        # The tokenizer's side of serve-model's engine (rendering, encoding, padding); it decodes nothing here.
        self.backend = GenerationBackend(LoadedModel(models.trainer, models.tokenizer, models.name,
                                                     models.context_length))
        self.adapter_dir = Path(section.adapter_dir) if section.adapter_dir else output_dir / "adapters"
        self.process: ServerProcess | None = None
        self.version = 0
        self.syncs = 0
        self.loopback = True
        self._output_dir, self._base, self._vllm_options = output_dir, base, vllm_options
        self._lora_rank, self._cpu_threads = lora_rank, cpu_threads
        self._names: dict[int, str] = {}
        self._loaded: list[str] = []
        self._nccl: Any = None
        if section.weight_sync == "lora" and not models.lora:
            raise RLError("policy_server: LoRA adapters carry the updates (policy_server.weight_sync = \"lora\"), "
                          "so model.trainer_mode must be \"lora\"; full weights reach only vLLM, through "
                          "policy_server.weight_sync = \"nccl\" (GPU)")
        if section.weight_sync == "nccl" and section.launch != "vllm" and section.url is None:
            raise RLError("policy_server.weight_sync = \"nccl\" needs a vLLM server (launch = \"vllm\" or its url)")
        self.url = (section.url or "").rstrip("/")

    # -- starting ------------------------------------------------------------------------------------------

    def start(self) -> RemotePolicy:
        section = self.section
        if section.launch == "serve-model":
            base = export_base(self.models, self._output_dir / "policy_base")
            port = section.port or _free_port("127.0.0.1")
            command = [sys.executable, "-c", "from proofgym.cli import main; main()", "serve-model", str(base),
                       "--enable-lora", "--served-model-name", self.models.name, "--host", "127.0.0.1", "--port",
                       str(port), "--log-level", "warning"]
            if self._cpu_threads is not None:
                command += ["--threads", str(self._cpu_threads)]
            self.process = ServerProcess(command, port=port, log=self._output_dir / "policy_server.log",
                                         what="proofgym serve-model (policy_server.launch)")
        elif section.launch == "vllm":
            why = vllm_available()
            if why is not None:
                raise RLError(f"policy_server.launch = \"vllm\": needs vLLM on a GPU, and {why}")
            self.process = self._vllm_process()
        if self.process is not None:
            self.url = self.process.start(section.startup_timeout_s).url
        self._base = self._served_base()
        self._names[0] = self._base
        if section.weight_sync == "nccl":
            self._nccl = _NCCLWeightTransfer(self.url.removesuffix("/v1"), self.models)
        return self

    def _vllm_process(self) -> ServerProcess:
        import torch

        port = self.section.port or _free_port("127.0.0.1")
        base = self._base
        if base == "proofgym:tiny":
            base = str(export_base(self.models, self._output_dir / "policy_base"))
        command = ["vllm", "serve", base, "--host", "127.0.0.1", "--port", str(port),
                   "--served-model-name", self.models.name]
        if self.section.weight_sync == "lora":
            command += ["--enable-lora", "--max-lora-rank", str(self._lora_rank)]
        else:
            command += ["--weight-transfer-backend", "nccl"]
        for key, value in sorted(self._vllm_options.items()):
            flag = "--" + key.replace("_", "-")
            if value is True:
                command.append(flag)
            elif value is not False and value is not None:
                command += [flag, str(value)]
        # The reference's 2-GPU layout: the last GPU serves, the trainer keeps the first.
        gpu = self.section.serving_gpu if self.section.serving_gpu is not None else torch.cuda.device_count() - 1
        env = {"CUDA_VISIBLE_DEVICES": str(gpu), "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True"}
        return ServerProcess(command, port=port, log=self._output_dir / "policy_server.log", env=env,
                             what=f"vllm serve (GPU {gpu})")

    def _served_base(self) -> str:
        try:
            status, text = _http("GET", f"{self.url}/models", timeout=30)
        except OSError as exc:
            raise RLError(f"policy_server.url {self.url}: not reachable ({exc})") from None
        try:
            cards = json.loads(text)["data"]
            base = next(card["id"] for card in cards if not card.get("parent"))
        except (ValueError, KeyError, TypeError, StopIteration):
            raise RLError(f"policy_server.url {self.url}: GET /models answered {status} without a base model "
                          f"(expected an OpenAI-compatible server): {text[:200]}") from None
        return str(base)

    # -- the trainer's face --------------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        """The model the next rollouts ask for: the adapter of the last update (the base model before any)."""
        return self._names.get(self.version, self._base)

    def name_for(self, version: int) -> str:
        """The model the rollouts of update ``version`` asked for."""
        return self._names.get(version, self._base)

    def sync(self, version: int) -> float:
        """The trained weights to the server (call with no rollout in flight); seconds taken."""
        started = time.perf_counter()
        if self._nccl is not None:
            self._nccl.push()
            self._names[version] = self._base
        else:
            self._names[version] = self._load_adapter(version)
        self.version = version
        self.syncs += 1
        return time.perf_counter() - started

    def _load_adapter(self, version: int) -> str:
        name = f"{self.label}-step-{version}"
        folder = (self.adapter_dir / f"step-{version}").resolve()
        if name in self._loaded:  # the same update synced again (a resume at it): its name is ours to reuse
            self._unload(name)
        if folder.exists():
            shutil.rmtree(folder)
        self.models.trainer.save_pretrained(str(folder))
        status, text = _http("POST", f"{self.url}/load_lora_adapter", {"lora_name": name, "lora_path": str(folder)})
        if status != 200:
            raise RLError(f"policy_server {self.url}: loading the adapter {name!r} from {folder} answered "
                          f"{status}: {text[:300]}")
        previous = [old for old in self._loaded if old != name]
        self._loaded = [name]
        for old in previous:
            self._unload(old)
        return name

    def _unload(self, name: str) -> None:
        status, text = _http("POST", f"{self.url}/unload_lora_adapter", {"lora_name": name})
        if status != 200:
            raise RLError(f"policy_server {self.url}: unloading the adapter {name!r} answered {status}: {text[:300]}")
        if name in self._loaded:
            self._loaded.remove(name)
        folder = self.adapter_dir / name.removeprefix(f"{self.label}-")
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        if self.process is not None:
            self.process.close()


class _NCCLWeightTransfer:
    """vLLM's weight transfer over NCCL, the trainer's side (as vLLM's ``examples/online_serving/rlhf_http.py``):
    the trainer is rank 0 of a group with the server's workers; each update broadcasts every parameter."""

    def __init__(self, server: str, models: PolicyModels) -> None:
        import torch

        import importlib

        try:
            pynccl = importlib.import_module("vllm.distributed.device_communicators.pynccl")
            utils = importlib.import_module("vllm.distributed.utils")
        except ImportError:
            raise RLError("policy_server.weight_sync = \"nccl\" needs vLLM on a GPU (pip install vllm)") from None
        if not torch.cuda.is_available():
            raise RLError("policy_server.weight_sync = \"nccl\" needs vLLM on a GPU: this machine has none")
        self.server, self.models = server, models
        status, text = _http("GET", f"{server}/get_world_size", timeout=30)
        if status != 200:
            raise RLError(f"policy_server {server}: GET /get_world_size answered {status} (is it vLLM started with "
                          f"--weight-transfer-backend nccl?): {text[:200]}")
        world_size = int(json.loads(text)["world_size"]) + 1
        port = _free_port("127.0.0.1")
        init = {"init_info": {"master_address": "127.0.0.1", "master_port": port, "rank_offset": 1,
                              "world_size": world_size}}
        answer: list[tuple[int, str]] = []
        thread = threading.Thread(target=lambda: answer.append(_http("POST", f"{server}/init_weight_transfer", init,
                                                                     timeout=300)))
        thread.start()
        group = utils.StatelessProcessGroup.create(host="127.0.0.1", port=port, rank=0, world_size=world_size)
        self.communicator = pynccl.PyNcclCommunicator(group, device=torch.device("cuda", torch.cuda.current_device()))
        thread.join()
        if not answer or answer[0][0] != 200:
            raise RLError(f"policy_server {server}: POST /init_weight_transfer failed: {answer[:1]}")

    def push(self) -> None:
        import torch

        parameters = list(self.models.trainer.named_parameters())
        info = {"update_info": {"names": [n for n, _ in parameters],
                                "dtype_names": [str(p.dtype).split(".")[-1] for _, p in parameters],
                                "shapes": [list(p.shape) for _, p in parameters], "packed": False}}
        answer: list[tuple[int, str]] = []
        thread = threading.Thread(target=lambda: answer.append(_http("POST", f"{self.server}/update_weights", info,
                                                                     timeout=600)))
        thread.start()
        with torch.no_grad():
            for _, parameter in parameters:
                self.communicator.broadcast(parameter.data, src=0, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        thread.join()
        if not answer or answer[0][0] != 200:
            raise RLError(f"policy_server {self.server}: POST /update_weights failed: {answer[:1]}")
        status, text = _http("POST", f"{self.server}/finalize_weight_update")
        if status != 200:
            raise RLError(f"policy_server {self.server}: POST /finalize_weight_update answered {status}: {text[:200]}")
