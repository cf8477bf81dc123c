"""The task app's published OpenAPI schema: what it checks beyond its pydantic models.

FastAPI publishes a request model as it is, but a task app refuses more than its models do: only the
policies it accepts, each with its own config; no change to the operator's environment config; a
trace correlation id in ``rl`` mode. Its guard answers 400, 401, 408, 413 before any route runs, and
it needs an API key. This module writes all of that into the schema, so that a request the schema
accepts is run and one it refuses is a 4xx: the schema is the contract a schema-driven client or
fuzzer (schemathesis) can test against.

One rule is beyond JSON Schema and is stated in the descriptions only: trace correlation ids given
in several places must agree (a 422). The parts every server publishes (the key's schemes, the error
statuses, :func:`~proofgym.http.publish`) are :mod:`proofgym.http`'s.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Mapping

from pydantic import BaseModel

from proofgym.http import SECURITY_SCHEMES
from proofgym.taskapp._models import (
    EVERY_POLICY_KEYS,
    UNSET_WHEN_NULL,
    PolicyConfig,
    PolicySpec,
)

Schema = dict[str, Any]

#: The task app's schemes: those, and ``X-API-Keys`` (its guard reads it; the reward server's does not).
TASK_APP_SECURITY_SCHEMES: dict[str, Schema] = {
    **SECURITY_SCHEMES,
    "ApiKeysHeader": {"type": "apiKey", "in": "header", "name": "X-API-Keys",
                      "description": "comma-separated keys (the reference client sends a key and its aliases "
                                     "there); one of them must be the server's"},
}

_NULL: Schema = {"type": "null"}
# The query parameters the correlation id is read from (``proofgym.taskapp._correlation.URL_PARAMETERS``).
_CID_IN_URL = r"^[^?#]*\?([^#]*&)?(cid|trace_correlation_id)=[A-Za-z0-9._~-]{1,256}(&|#|$)"


def rollout_contract(*, env_name: str, policies: Mapping[str, type[BaseModel] | None],
                     base_env_config: Mapping[str, Any], overridable: Collection[str],
                     server_only_keys: Collection[str] = (),
                     refused_selections: Collection[Mapping[str, Any]] = (),
                     difficulties: Collection[str] = ()) -> Callable[[Schema], None]:
    """A transform stating what ``POST /rollout`` of a task app for ``env_name`` accepts.

    ``policies`` maps each policy name the app accepts to its config model (``None``: the app does not
    know it, its config is published as any object); ``base_env_config`` and ``overridable`` are the
    app's environment config and the keys a request may change (``"*"``: all); ``server_only_keys``
    are policy config keys a request may not set; ``refused_selections`` the environment config values (each a
    mapping such as ``{"split": "val", "difficulty": "hard"}``) the environment refuses because they select no task;
    ``difficulties`` the values of ``difficulty`` it accepts.
    """

    def transform(schema: Schema) -> None:
        components = schema["components"]["schemas"]
        env = components["EnvSpec"]["properties"]
        env["env_name"] = {"anyOf": [{"const": env_name}, _NULL], "default": None,
                           "description": f"omitted or null: this app's environment, {env_name!r}"}
        env["config"] = _env_config(base_env_config, overridable, difficulties)
        if refused_selections:
            env["config"]["not"] = {"anyOf": [
                {"required": sorted(selection),
                 "properties": {key: {"const": value} for key, value in selection.items()}}
                for selection in refused_selections]}
            env["config"]["description"] += "; a selection with no task (see not) is refused"
        variants = {name: _policy_variant(name, model, env_name, server_only_keys)
                    for name, model in sorted(policies.items())}
        components["PolicySpec"] = {
            "title": "PolicySpec", "anyOf": list(variants.values()),
            "description": components["PolicySpec"].get("description", "") + "\n\nOne variant per policy "
            "this app accepts, each with that policy's config."}
        request = components["RolloutRequest"]
        request["properties"]["policy"] = {"$ref": "#/components/schemas/PolicySpec"}
        default = variants.get("openai")
        if default is None or "config" in default.get("required", ()):  # the default policy would be refused
            request.setdefault("required", []).append("policy")
        request["anyOf"] = _correlated()
        request["description"] = request.get("description", "") + (
            "\n\nThe trace correlation id may be given as trace_correlation_id, policy.config."
            "trace_correlation_id or the cid query parameter of policy.config.inference_url; where several "
            "are given they must agree (a 422 otherwise).")

    return transform


def _request_key_schemas(difficulties: Collection[str]) -> dict[str, Schema]:
    """The values of the environment config keys every environment reads (:data:`proofgym.envs.SPLIT_KEYS`) and of
    ``difficulty`` (``difficulties``: those the environment accepts), each nullable (``null``: not set)."""
    from proofgym.envs import SPLITS

    return {
        "split": {"anyOf": [{"enum": list(SPLITS)}, _NULL], "description": "the split whose tasks the seeds index"},
        "index": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 2**63 - 1}, _NULL],
                  "description": "the position in the split (needs split); when given with env.seed the two must "
                                 "be equal (a 422 otherwise)"},
        "difficulty": {"anyOf": [{"enum": list(difficulties)}, _NULL] if difficulties else [_NULL],
                       "description": "only the tasks of this difficulty"},
    }


def _env_config(base: Mapping[str, Any], overridable: Collection[str], difficulties: Collection[str]) -> Schema:
    known = _request_key_schemas(difficulties)
    # An index is a position within a split: it needs one.
    index_needs_split: Schema = {"if": {"required": ["index"], "properties": {"index": {"type": "integer"}}},
                                 "then": {"required": ["split"], "properties": {"split": {"type": "string"}}}}
    if "*" in overridable:
        return {"type": "object", "properties": known, **index_needs_split,
                "description": "merged over the app's environment config; the environment checks the values "
                               "(a 422 names the key)"}
    properties: Schema = {key: {"const": value, "description": "the app's value (a request may not change it)"}
                          for key, value in base.items() if key not in overridable}
    properties.update({key: known.get(key, {"description": "a key this app lets requests set; the environment "
                                                           "checks the value"})
                       for key in sorted(overridable)})
    return {"type": "object", "properties": properties, "additionalProperties": False, "default": {},
            **index_needs_split,
            "description": "merged over the app's environment config: only keys the app lets requests set may "
                           "differ from its own values"}


def _policy_variant(name: str, model: type[BaseModel] | None, env_name: str,
                    server_only_keys: Collection[str]) -> Schema:
    config = _policy_config(name, model, env_name, server_only_keys)
    variant: Schema = {
        "type": "object", "title": f"PolicySpec ({name})", "additionalProperties": False,
        "properties": {"policy_id": PolicySpec.model_json_schema()["properties"]["policy_id"],
                       "policy_name": {"const": name, **({"default": name} if name == "openai" else {})},
                       "config": config},
        "required": [] if name == "openai" else ["policy_name"]}
    if config.get("required"):
        variant["required"].append("config")
    return variant


def _policy_config(name: str, model: type[BaseModel] | None, env_name: str,
                   server_only_keys: Collection[str]) -> Schema:
    if model is None:
        return {"type": "object", "title": f"PolicyConfig ({name})"}
    own = model.model_json_schema(ref_template="#/components/schemas/{model}")
    properties: Schema = {key: value for key, value in own.get("properties", {}).items()
                          if key not in server_only_keys}
    required = [key for key in own.get("required", ()) if key in properties]
    if name == "oracle":  # the oracle plays this app's environment with the rollout's config
        properties.pop("env_config", None)
        properties["env_name"] = {"const": env_name, "default": env_name}
        required = [key for key in required if key != "env_name"]
    # The request's fields (PolicyConfig's) are checked first, then the policy's own model checks what is set.
    common = PolicyConfig.model_json_schema()["properties"]
    for key in UNSET_WHEN_NULL:
        if key in properties:
            policy_own = properties[key] if key in required else {"anyOf": [properties[key], _NULL]}
            properties[key] = {"allOf": [common[key], policy_own]}
        elif key in EVERY_POLICY_KEYS:
            # Checked for every policy (the URL's cid read; the model and provider recorded; the LM calls capped),
            # passed on only to those that take it.
            properties[key] = common[key]
        else:
            properties[key] = {**_NULL, "description": "not used by this policy: null only"}
    properties["trace_correlation_id"] = common["trace_correlation_id"]
    schema: Schema = {"type": "object", "title": f"PolicyConfig ({name})", "properties": properties,
                      "additionalProperties": False, "description": own.get("description", "")}
    if required:
        schema["required"] = required
    else:
        schema["default"] = {}
    return schema


def _correlated() -> list[Schema]:
    """``mode: rl`` needs a correlation id (one of these); ``eval`` (the default) does not."""
    string = {"type": "string"}
    in_config = {"required": ["config"], "properties": {"config": {
        "required": ["trace_correlation_id"], "properties": {"trace_correlation_id": string}}}}
    in_url = {"required": ["config"], "properties": {"config": {
        "required": ["inference_url"], "properties": {"inference_url": {"type": "string", "pattern": _CID_IN_URL}}}}}
    return [{"properties": {"mode": {"const": "eval"}}},
            {"required": ["trace_correlation_id"], "properties": {"trace_correlation_id": string}},
            {"required": ["policy"], "properties": {"policy": in_config}},
            {"required": ["policy"], "properties": {"policy": in_url}}]
