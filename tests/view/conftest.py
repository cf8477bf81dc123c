"""Trace stores filled through the real paths, once per test session.

``real_store`` (the page tests): evals of grant_eligibility (oracle, and scripted answers: invented facts, an
unreadable answer, a hostile one), two GRPO steps as the demo stores them, and rollouts stored under odd ids.
``filled_store`` (the browser tests): ``proofgym demo --quick``, ``proofgym eval`` of the grant and Verilog configs
(Verilog only where its judge can run), ``proofgym judge`` of the Verilog run, and scripted evals (a wrong Verilog
design, a hostile grant completion). Then a real ``proofgym view`` server."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from _judge import judge_problem

from ._real import (
    BIDI,
    DEMO_RIGHT,
    DEMO_UNREADABLE,
    DEMO_WRONG,
    EVIL,
    answer,
    eval_run,
    grant_completion,
    grpo_step,
    rollout_as,
)

ROOT = Path(__file__).resolve().parents[2]
PROOFGYM = [str(Path(sys.executable).with_name("proofgym"))]  # the installed console script
HOSTILE = ("<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
           "<a href=\"javascript:document.title='pwned'\">click me</a>" + " HUGE" * 30000)
WRONG_AND_GATE = "module TopModule (input a, input b, output out);\n  assign out = a | b;\nendmodule\n"


@dataclass
class FilledStore:
    """Where the store is and which run each path wrote (``None``: that part could not run here)."""

    path: Path
    demo_dir: Path
    runs: dict[str, str | None] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def _cli(*args: str, timeout: float = 600) -> str:
    result = subprocess.run([*PROOFGYM, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode in (0, 1), f"proofgym {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _toml(value: object) -> str:
    return json.dumps(value)  # a JSON string or number is a TOML one


def _eval_config(tmp: Path, name: str, body: str) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(body, encoding="utf-8")
    return path


def _latest_run(store_path: Path, kind: str, env: str) -> str:
    from proofgym.traces import TraceStore

    with TraceStore(store_path, create=False) as store:
        return [r.run_id for r in store.list_runs() if r.kind == kind and r.env_name == env][-1]


@pytest.fixture(scope="session")
def filled_store(tmp_path_factory) -> FilledStore:
    pytest.importorskip("torch", reason="the demo run needs the train extra: pip install -e '.[train]'")
    tmp = tmp_path_factory.mktemp("view_store")
    demo_dir = tmp / "runs" / "demo"
    _cli("demo", "--quick", "--out", str(demo_dir))
    store = demo_dir / "traces.db"  # the eval and judge runs are added to the demo's store
    filled = FilledStore(store, demo_dir)
    filled.runs["demo"] = json.loads((demo_dir / "summary.json").read_text())["run_id"]
    traces = f"traces = {_toml(str(store))}\n"
    grant = (ROOT / "configs" / "eval" / "grant.toml").read_text().replace('traces = "traces/eval.db"', traces.strip())
    _cli("eval", "--config", str(_eval_config(tmp, "grant", grant)))
    filled.runs["grant"] = _latest_run(store, "eval", "grant_eligibility")
    hostile = (f'kind = "eval"\n[evaluation]\napp_id = "grant-hostile"\nenv_name = "grant_eligibility"\n'
               f'policy_name = "scripted"\nseeds = "3"\nconcurrency = 1\n{traces}[evaluation.env_config]\nchat = true\n'
               f'[evaluation.policy_config]\n'
               f'actions = [{{tool = "answer", args = {{completion = {_toml(HOSTILE)}}}}}]\n')
    _cli("eval", "--config", str(_eval_config(tmp, "hostile", hostile)))
    filled.runs["hostile"] = _latest_run(store, "eval", "grant_eligibility")
    problem = judge_problem()
    if problem is not None:
        filled.skipped["verilog"] = problem
        for name in ("verilog", "verilog_wrong", "judge"):
            filled.runs[name] = None
        return filled
    verilog = (ROOT / "configs" / "eval" / "verilog.toml").read_text().replace('traces = "traces/eval.db"',
                                                                          traces.strip())
    _cli("eval", "--config", str(_eval_config(tmp, "verilog", verilog.replace('seeds = "0-7"', 'seeds = "0-3"'))))
    filled.runs["verilog"] = _latest_run(store, "eval", "verilog")
    _cli("judge", "--rubric", "verilog", "--traces", str(store), "--run", filled.runs["verilog"],
         "--skip-llm-criteria")
    filled.runs["judge"] = _latest_run(store, "judge", "verilog")
    wrong = (f'[evaluation]\napp_id = "verilog-wrong"\nenv_name = "verilog"\npolicy_name = "scripted"\nseeds = "0"\n'
             f'max_turns = 4\nconcurrency = 1\nmax_time_s = 120\n{traces}[evaluation.env_config]\nmax_turns = 4\n'
             f'[evaluation.policy_config]\nactions = [{{tool = "write_file", args = {{path = "top.v", content = '
             f'{_toml(WRONG_AND_GATE)}}}}}, {{tool = "submit", args = {{}}}}]\n')
    _cli("eval", "--config", str(_eval_config(tmp, "wrong", wrong)))
    filled.runs["verilog_wrong"] = _latest_run(store, "eval", "verilog")
    return filled


#: Facts no grant record has (and an age that is not the record's): the kernel's gate rejects them; the model's
#: own text reaches the rejected facts' values.
INVENTED_FACTS = {"age": 17, "annual_income": 30000, "resident": True, "has_active_grant": False, "pets": 3,
                  "motto": EVIL + BIDI}
INVENTED_ANSWER = grant_completion(INVENTED_FACTS, reasoning="the facts say so " + BIDI)
#: Session ids (of one run, "odd-ids") a browser or a router could misread, and the correlation id they share.
ODD_IDS = ("..", ".", "a/b", "a/../b", "%2E%2E", "evil-" + EVIL, "bidi-" + BIDI, "x" * 3000)
ODD_CID = "cid-odd"
#: The hostile grant run answers with this: markup, every bidirectional control, and a tail too long to parse.
HOSTILE_ANSWER = EVIL + BIDI + " HUGE" * 30000


@dataclass
class RealStore:
    """A store filled by ``real_store``: ``runs`` maps a name to the run id the path wrote."""

    path: Path
    runs: dict[str, str]


@pytest.fixture(scope="session")
def real_store(tmp_path_factory) -> RealStore:
    path = tmp_path_factory.mktemp("real_store") / "traces.db"
    grant = "grant_eligibility"
    runs = {"oracle": eval_run(path, grant, seeds=range(60), policy="oracle"),
            "invented": eval_run(path, grant, seeds=[0], actions=answer(INVENTED_ANSWER)),
            "unreadable": eval_run(path, grant, seeds=[0], actions=answer("permit, I think (no decision block)")),
            "no_answer": eval_run(path, grant, seeds=[0], actions=[{"tool": "shout", "args": {}}]),
            "hostile": eval_run(path, grant, seeds=[3], actions=answer(HOSTILE_ANSWER)),
            "demo": "demo-run", "flat": "demo-flat", "odd": "odd-ids", "dot": "..", "evil": "run-" + EVIL}
    grpo_step(path, runs["demo"], 1, [[DEMO_RIGHT, DEMO_WRONG, DEMO_UNREADABLE, DEMO_RIGHT]] * 2)
    grpo_step(path, runs["flat"], 1, [[DEMO_UNREADABLE + BIDI] * 4])
    for session_id in ODD_IDS:
        rollout_as(path, runs["odd"], session_id, answer(INVENTED_ANSWER), seed=7, correlation_id=ODD_CID)
    rollout_as(path, runs["dot"], "in-the-dot-run", answer("no block"), seed=7)
    rollout_as(path, runs["evil"], "in-the-evil-run", answer(EVIL), seed=7)
    return RealStore(path, runs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Viewer:
    url: str
    process: subprocess.Popen


def start_viewer(args: list[str], env: dict[str, str] | None = None, headers: dict[str, str] | None = None,
                 cwd: Path = ROOT) -> Viewer:
    """``proofgym view ARGS --port P`` as a process of its own, once it answers /health."""
    port = free_port()
    process = subprocess.Popen([*PROOFGYM, "view", *args, "--port", str(port)], cwd=cwd,
                               env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"proofgym view exited: {process.stdout.read() if process.stdout else ''}")
        try:
            if httpx.get(url + "/health", headers=headers, timeout=2).status_code == 200:
                return Viewer(url, process)
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise AssertionError("proofgym view did not answer /health within 60 s")


def stop_viewer(viewer: Viewer) -> None:
    viewer.process.terminate()
    try:
        viewer.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        viewer.process.kill()
        viewer.process.wait()


@pytest.fixture(scope="session")
def viewer(filled_store) -> Viewer:
    running = start_viewer(["--traces", str(filled_store.path), "--runs", str(filled_store.demo_dir.parent)])
    yield running
    stop_viewer(running)


CHROMIUM = os.environ.get("PROOFGYM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """Chromium, for one test module: playwright's sync API keeps an event loop running in this thread while it is
    open, and any later test that calls asyncio.run() in this process (on the same xdist worker) would fail."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright: "
                                   "pip install -e '.[view]' (playwright==1.65.2)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"the browser tests need Debian's chromium at {CHROMIUM}: "
                    "apt-get install -y chromium (or scripts/system_packages.sh chromium)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                              args=["--no-sandbox"] if os.geteuid() == 0 else [])
        yield launched
        launched.close()
