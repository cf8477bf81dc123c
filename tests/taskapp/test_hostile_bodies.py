"""Every task app against the hostile corpus of tests/_hostile.py, class by class: never a 5xx, always a strict
JSON body without a traceback, refusals naming the field (and, for deep nesting and huge integers, the limit),
and every rollout answered 200 stored exactly once (none stored for a refusal)."""

import asyncio

import httpx
import pytest
from _hostile import CLASSES, VALID, by_class, misbehaviour, rollout_corpus

from proofgym.envs import env_names, make
from proofgym.taskapp import create_app

from ._support import AND_GATE, write_file

API_KEY = "test-key"
#: The tool call the scripted policy plays (one turn, no judge needed), and its string arguments.
ACTIONS = {"verilog": (write_file(AND_GATE), ("path", "content"))}
DEFAULT_ACTION = ({"tool": "answer", "args": {"text": "permit"}}, ("text",))


async def _send_all(app, corpus):
    """Each class's cases sent to ``app`` (its lifespan running, in one event loop: a few thousand requests take
    seconds): ``{class: (cases sent, failures)}``."""
    results = {}
    recorder = app.state.recorder
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://task-app",
                                     headers={"X-API-Key": API_KEY, "Content-Type": "application/json"}) as client:
            for kind, cases in corpus.items():
                before = recorder.store.count_sessions()
                failures, answered = [], []
                for case in cases:
                    response = await client.post("/rollout", content=case.body)
                    problem = misbehaviour(case, response.status_code, response.headers.get("content-type", ""),
                                           response.content)
                    if problem is None and response.status_code == 200:
                        session_id = response.json()["pipeline_metadata"]["session_id"]
                        answered.append(session_id)
                        if recorder.store.get_session(session_id) is None:
                            problem = f"answered 200 but session {session_id} is not stored"
                    if problem is not None:
                        failures.append(f"{case.name}: {problem}")
                # Each 200 stored its own session, and nothing else was stored: not a refusal, not a duplicate.
                stored = recorder.store.count_sessions() - before
                if not stored == len(answered) == len(set(answered)):
                    failures.append(f"{len(answered)} answered 200 ({len(set(answered))} sessions), {stored} stored")
                results[kind] = (len(cases), failures)
    return results


# crafter's app (about 12 s for the corpus) under -m slow: the task app's refusals are the same code for every env.
@pytest.fixture(scope="module", params=[pytest.param(name, marks=pytest.mark.slow if name == "crafter" else ())
                                        for name in env_names()])
def results(request, tmp_path_factory):
    """The corpus's results on one environment's task app, every env.config key overridable."""
    env_name = request.param
    with make(env_name) as env:
        config_model = type(env.config)
    action, strings = ACTIONS.get(env_name, DEFAULT_ACTION)
    app = create_app(env_name, api_key=API_KEY, store=tmp_path_factory.mktemp(env_name) / "traces.db",
                     env_overrides=["*"])
    return asyncio.run(_send_all(app, by_class(rollout_corpus(config_model, action=action, action_strings=strings))))


@pytest.mark.parametrize("kind", [VALID, *CLASSES])
def test_every_hostile_body_is_refused_or_run_and_stored_once(results, kind):
    tried, failures = results[kind]
    assert tried, f"no {kind} cases"
    assert not failures, f"{len(failures)} of {tried} {kind} cases:\n" + "\n".join(failures[:40])
