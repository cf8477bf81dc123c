"""Trace correlation: the id a trainer puts in the policy's inference URL (``?cid=...``) to find the trace."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from proofgym.taskapp._errors import RequestError
from proofgym.taskapp._models import RolloutRequest

#: Query parameters of the inference URL read as the correlation id, in order.
URL_PARAMETERS: tuple[str, ...] = ("cid", "trace_correlation_id")


def correlation_id(request: RolloutRequest) -> str | None:
    """The request's trace correlation id, or ``None`` when it carries none.

    It may come from ``trace_correlation_id`` (top level or in ``policy.config``) or from the
    ``cid`` query parameter of ``policy.config.inference_url``; when several are given they must
    agree. Raises :class:`RequestError` naming the fields that disagree, and in ``rl`` mode when
    there is no id (the trainer could not find the trace again).
    """
    found: list[tuple[tuple[str, ...], str]] = []
    if request.trace_correlation_id is not None:
        found.append((("trace_correlation_id",), request.trace_correlation_id))
    config = request.policy.config
    if config.trace_correlation_id is not None:
        found.append((("policy", "config", "trace_correlation_id"), config.trace_correlation_id))
    if config.inference_url is not None:
        query = parse_qs(urlsplit(config.inference_url).query)
        for name in URL_PARAMETERS:
            values = {value.strip() for value in query.get(name, ()) if value.strip()}
            if len(values) > 1:
                raise RequestError(("policy", "config", "inference_url"),
                                   f"the URL has {len(values)} different {name!r} values; expected one",
                                   config.inference_url)
            if values:
                found.append((("policy", "config", "inference_url"), values.pop()))
    ids = {value for _, value in found}
    if len(ids) > 1:
        where = ", ".join(".".join(loc) for loc, _ in found)
        raise RequestError(found[-1][0], f"conflicting trace correlation ids in {where}: {sorted(ids)}")
    if not ids:
        if request.mode == "rl":
            raise RequestError(("policy", "config", "inference_url"),
                               "mode 'rl' needs a trace correlation id: add ?cid=<id> to the inference URL "
                               "or set trace_correlation_id", config.inference_url)
        return None
    cid = ids.pop()
    if len(cid) > 256:
        raise RequestError(found[0][0], "the trace correlation id is longer than 256 characters", cid)
    return cid
