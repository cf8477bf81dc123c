"""The server side of proofgym.http loads no server framework on import: the policies and judges import the package
for its outbound clients, and every server imports it; Starlette comes with the names that need it, FastAPI and
uvicorn with the functions that build or run a server."""

import json
import subprocess
import sys

SERVER_FRAMEWORKS = ["starlette", "fastapi", "uvicorn", "httpx"]


def _loaded(code: str) -> list[str]:
    script = f"{code}; import json, sys; print(json.dumps([m for m in {SERVER_FRAMEWORKS!r} if m in sys.modules]))"
    return json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout)


def test_importing_proofgym_http_and_its_light_server_names_loads_no_framework():
    assert _loaded("from proofgym.http import API_KEY_ENV_VARS, BackgroundServer, ServeError, api_key_from_env, "
                   "error_responses, is_loopback, key_matches, publish, redacted_logs, require_key, uvicorn_limits") \
        == []


def test_the_guard_and_safe_json_load_starlette_on_first_use():
    assert _loaded("from proofgym.http import RequestGuard, SafeJSONResponse") == ["starlette"]


def test_importing_the_reward_server_loads_no_framework():
    assert _loaded("import proofgym.reward_server") == []
