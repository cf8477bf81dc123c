"""LoRA adapters on ``proofgym serve-model``, loaded and unloaded at run time with vLLM's endpoints and shapes.

``serve-model --enable-lora`` (vLLM: ``vllm serve --enable-lora`` with ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``;
here one flag does both) adds:

- ``POST /v1/load_lora_adapter`` ``{"lora_name": ..., "lora_path": ...}`` (optional ``load_inplace``): loads the
  PEFT adapter directory ``lora_path`` (as peft's ``save_pretrained`` writes it: ``adapter_config.json`` and
  ``adapter_model.safetensors``) under ``lora_name``. 200 with vLLM's plain-text body
  ``Success: LoRA adapter '<name>' added successfully.``
- ``POST /v1/unload_lora_adapter`` ``{"lora_name": ...}``: 200 ``Success: LoRA adapter '<name>' removed
  successfully.``

A chat request whose ``model`` is an adapter's name is decoded with it (the response's ``model`` is that name, as
vLLM answers); ``GET /v1/models`` lists each adapter after the base model with ``root`` (its path) and ``parent``
(the base model), as vLLM does. Errors are vLLM's body ``{"error": {"message", "type", "param", "code"}}`` with
``code`` the HTTP status: 400 ``InvalidUserInput`` for a missing name or path, or a name already loaded without
``load_inplace``; 404 ``NotFoundError`` for a directory that holds no adapter (vLLM's ``Loading lora <name> failed:
No adapter found for <path>``) and for unloading a name that is not loaded (``The lora adapter '<name>' cannot be
found.``); 400 ``BadRequestError`` naming the path for an adapter that does not fit the base model (a module it
adapts is not there, or a shape differs). Without ``--enable-lora`` the two paths do not exist (404), as on vLLM.

Requests of different adapters (and of the base model) share a batch: peft's mixed-adapter forward
(``adapter_names``). An adapter is attached and detached under the backend's model lock, between two batches; an
adapter unloaded while requests that named it are still decoding stays attached until they are done (new
requests naming it get 404 at once). Only the torch backend serves adapters.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from proofgym.http import SafeJSONResponse

if TYPE_CHECKING:
    from proofgym.model_server._backend import GenerationBackend

#: Adapters loaded at once at most (each holds its own weights in memory).
MAX_ADAPTERS = 16
_CONFIG = "adapter_config.json"
_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")


class LoadLoRAAdapterRequest(BaseModel):
    """vLLM's ``LoadLoRAAdapterRequest`` (fields serve-model does not use are accepted and ignored)."""

    model_config = ConfigDict(extra="ignore")
    lora_name: str = ""
    lora_path: str = ""
    load_inplace: bool = False


class UnloadLoRAAdapterRequest(BaseModel):
    """vLLM's ``UnloadLoRAAdapterRequest``."""

    model_config = ConfigDict(extra="ignore")
    lora_name: str = ""
    lora_int_id: int | None = None


class AdapterGone(LookupError):
    """A request named an adapter that was unloaded before its rows were queued (answered 404)."""


class AdapterError(Exception):
    """A refused adapter request: vLLM's error type and the HTTP status."""

    def __init__(self, status: int, type: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.param = status, type, message, param

    def response(self) -> SafeJSONResponse:
        return SafeJSONResponse({"error": {"message": self.message, "type": self.type, "param": self.param,
                                           "code": self.status}}, status_code=self.status)


@dataclass
class _Adapter:
    name: str
    path: str
    id: str  # the backend's name for it (peft's adapter name): a fresh one per load
    created: int
    uses: int = 0
    unloaded: bool = False


class AdapterSet:
    """The adapters loaded on one :class:`~proofgym.model_server._backend.GenerationBackend`, by name."""

    def __init__(self, backend: GenerationBackend, parent: str) -> None:
        if backend.engine != "torch":
            raise ValueError(f"LoRA adapters need the torch backend (serve-model --backend torch); the {backend.engine}"
                             " backend serves none")
        import importlib.util

        if importlib.util.find_spec("peft") is None:
            raise ValueError("--enable-lora needs peft, which applies the adapters: pip install 'proofgym[train]'")
        self.backend = backend
        self.parent = parent
        self._adapters: dict[str, _Adapter] = {}
        self._lock = threading.Lock()
        self._loads = 0
        backend.adapter_set = self

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._adapters

    def names(self) -> list[str]:
        with self._lock:
            return list(self._adapters)

    def cards(self) -> list[dict[str, Any]]:
        """``/v1/models`` entries, as vLLM lists adapters (``root``: the path, ``parent``: the base model)."""
        with self._lock:
            return [{"id": a.name, "object": "model", "created": a.created, "owned_by": "proofgym", "root": a.path,
                     "parent": self.parent, "max_model_len": self.backend.context_length}
                    for a in self._adapters.values()]

    def adapter_id(self, name: str | None) -> str | None:
        """The backend id of adapter ``name`` (None when no adapter has that name)."""
        with self._lock:
            adapter = self._adapters.get(name or "")
            return adapter.id if adapter is not None else None

    @contextmanager
    def holding_ids(self, ids: set[str]) -> Iterator[None]:
        """Keep the adapters of backend ids ``ids`` attached until the block ends, even if they are unloaded
        meanwhile. Raises :class:`AdapterGone` for an id that is no longer loaded (unloaded since the request
        named it)."""
        with self._lock:
            held = [a for a in self._adapters.values() if a.id in ids]
            if len(held) != len(ids):
                raise AdapterGone("the LoRA adapter the request named was unloaded while the request was read; "
                                  "load it again or name another model")
            for adapter in held:
                adapter.uses += 1
        try:
            yield
        finally:
            detached = []
            with self._lock:
                for adapter in held:
                    adapter.uses -= 1
                    if adapter.unloaded and adapter.uses == 0:
                        detached.append(adapter.id)
            for adapter_id in detached:  # not on the event loop: detaching waits for the step being decoded
                threading.Thread(target=self._detach, args=(adapter_id,), daemon=True).start()

    # -- load and unload (blocking: run them in a thread) ----------------------------------------------------

    def load(self, request: LoadLoRAAdapterRequest) -> str:
        name, path = request.lora_name, request.lora_path
        if not name or not path:
            raise AdapterError(400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided.")
        if name == self.parent:
            raise AdapterError(400, "InvalidUserInput", f"lora_name {name!r} is the base model's name: give the "
                                                        "adapter another", "lora_name")
        with self._lock:
            if name in self._adapters and not request.load_inplace:
                raise AdapterError(400, "InvalidUserInput",
                                   f"The lora adapter '{name}' has already been loaded. If you want to load the "
                                   "adapter in place, set 'load_inplace' to True.")
            if name not in self._adapters and len(self._adapters) >= MAX_ADAPTERS:
                raise AdapterError(400, "InvalidUserInput", f"{MAX_ADAPTERS} adapters are loaded, the most this "
                                                            "server holds: unload one first")
            self._loads += 1
            adapter_id = f"lora-{self._loads}"
        folder = Path(path).expanduser()
        config_file = folder / _CONFIG
        if not config_file.is_file() or not any((folder / weights).is_file() for weights in _WEIGHTS):
            raise AdapterError(404, "NotFoundError", f"Loading lora {name} failed: No adapter found for {path}")
        self._check_fits(folder, path)
        try:
            self._attach(adapter_id, folder)
        except (ValueError, KeyError, RuntimeError, OSError) as exc:
            raise AdapterError(400, "BadRequestError", f"lora_path {path!r}: the adapter cannot be loaded onto "
                                                       f"{self.parent!r}: {' '.join(str(exc).split())[:300]}",
                               "lora_path") from None
        with self._lock:
            replaced = self._adapters.get(name)
            self._adapters[name] = _Adapter(name, path, adapter_id, int(time.time()))
        if replaced is not None:
            self._retire(replaced)
        return f"Success: LoRA adapter '{name}' added successfully."

    def unload(self, request: UnloadLoRAAdapterRequest) -> str:
        name = request.lora_name
        if not name:
            raise AdapterError(400, "InvalidUserInput", "'lora_name' needs to be provided to unload a LoRA adapter.")
        with self._lock:
            adapter = self._adapters.pop(name, None)
        if adapter is None:
            raise AdapterError(404, "NotFoundError", f"The lora adapter '{name}' cannot be found.")
        self._retire(adapter)
        return f"Success: LoRA adapter '{name}' removed successfully."

    def _retire(self, adapter: _Adapter) -> None:
        with self._lock:
            adapter.unloaded = True
            detach = adapter.uses == 0
        if detach:
            self._detach(adapter.id)

    def _check_fits(self, folder: Path, path: str) -> None:
        """Refuse (400 naming ``path``) an adapter that is not LoRA or whose tensors do not fit the base model,
        before the model is touched."""
        def bad(reason: str) -> AdapterError:
            return AdapterError(400, "BadRequestError", f"lora_path {path!r}: {reason}", "lora_path")

        try:
            config = json.loads((folder / _CONFIG).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise bad(f"{_CONFIG} is not readable JSON ({exc})") from None
        if not isinstance(config, dict) or config.get("peft_type", "LORA") != "LORA":
            raise bad(f"{_CONFIG} is not a LoRA adapter's (peft_type {config.get('peft_type')!r})"
                      if isinstance(config, dict) else f"{_CONFIG} is not a JSON object")
        shapes = _tensor_shapes(folder)
        if shapes is None:
            raise bad("adapter_model.safetensors is not readable")
        modules = dict(_base_model(self.backend.model).named_modules())
        for key, shape in shapes.items():
            parts = key.split(".")
            if "lora_A" not in parts and "lora_B" not in parts:
                raise bad(f"it holds {key!r}, which is not a LoRA A or B matrix (serve-model applies only those)")
            which = "lora_A" if "lora_A" in parts else "lora_B"
            module_path = ".".join(parts[:parts.index(which)])
            for prefix in ("base_model.model.", "base_model."):
                if module_path.startswith(prefix):
                    module_path = module_path[len(prefix):]
                    break
            module = modules.get(module_path)
            layer = getattr(module, "base_layer", module)
            if layer is None or not hasattr(layer, "in_features"):
                raise bad(f"it adapts {module_path!r}, which the base model {self.parent!r} has no linear layer at")
            size = layer.in_features if which == "lora_A" else layer.out_features
            if len(shape) != 2 or shape[1 if which == "lora_A" else 0] != size:
                raise bad(f"{key} has shape {list(shape)}; {module_path} of {self.parent!r} needs "
                          f"{'in' if which == 'lora_A' else 'out'}_features {size}")

    def _attach(self, adapter_id: str, folder: Path) -> None:
        from peft import PeftModel

        backend = self.backend
        with backend.model_lock:
            if not backend.adapters_attached:
                backend.model = PeftModel.from_pretrained(backend.model, str(folder), adapter_name=adapter_id,
                                                          is_trainable=False).eval()
                backend.adapters_attached = True
            else:
                backend.model.load_adapter(str(folder), adapter_name=adapter_id, is_trainable=False)
            backend.model.eval()

    def _detach(self, adapter_id: str) -> None:
        backend = self.backend
        with backend.model_lock:
            if not backend.adapters_attached or adapter_id not in backend.model.peft_config:
                return
            backend.forget_prefix()
            if len(backend.model.peft_config) == 1:  # peft's wrapper cannot run with no adapter: back to the base
                backend.model = backend.model.unload()
                backend.adapters_attached = False
            else:
                backend.model.delete_adapter(adapter_id)


def _base_model(model: Any) -> Any:
    """The transformers model under peft's wrappers (``model`` itself when none)."""
    inner = getattr(model, "base_model", None)
    return getattr(inner, "model", model) if inner is not None and inner is not model else model


def _tensor_shapes(folder: Path) -> dict[str, tuple[int, ...]] | None:
    weights = folder / "adapter_model.safetensors"
    try:
        if weights.is_file():
            from safetensors import safe_open

            with safe_open(str(weights), framework="pt") as handle:
                return {key: tuple(handle.get_slice(key).get_shape()) for key in handle.keys()}
        import torch

        state = torch.load(folder / "adapter_model.bin", map_location="cpu", weights_only=True)
        return {key: tuple(value.shape) for key, value in state.items()}
    except Exception:  # noqa: BLE001 - a corrupt file, whatever the reader raises
        return None


def add_adapter_routes(app: FastAPI, adapters: AdapterSet) -> None:
    """``POST /v1/load_lora_adapter`` and ``POST /v1/unload_lora_adapter`` on ``app`` (see the module docstring),
    and a 404 for a request whose adapter was unloaded between its arrival and its decoding."""

    @app.exception_handler(AdapterGone)
    async def _gone(request: Any, exc: AdapterGone) -> SafeJSONResponse:
        return AdapterError(404, "NotFoundError", str(exc), "model").response()

    async def answer(change: Callable[[Any], str], body: Any) -> Response:
        """vLLM's answers: the plain-text success line, or its error body."""
        try:
            message = await asyncio.to_thread(change, body)
        except AdapterError as exc:
            return exc.response()
        return Response(message, status_code=200, media_type="text/plain")

    @app.post("/v1/load_lora_adapter")
    async def load_lora_adapter(body: LoadLoRAAdapterRequest) -> Response:
        return await answer(adapters.load, body)

    @app.post("/v1/unload_lora_adapter")
    async def unload_lora_adapter(body: UnloadLoRAAdapterRequest) -> Response:
        return await answer(adapters.unload, body)
