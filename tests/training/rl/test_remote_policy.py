"""The RL trainer against a policy server in another process, updated through vLLM's LoRA endpoints: here
``proofgym serve-model --enable-lora`` (the trainer launches it on the base model it exports), on a GPU with vLLM
``vllm serve --enable-lora``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from ._run import tiny_config  # noqa: E402
from proofgym.config import ConfigError  # noqa: E402
from proofgym.training.rl import RLTrainer, parse_rl_config  # noqa: E402
from proofgym.training.rl._remote_policy import vllm_available  # noqa: E402

PROBE = [{"role": "user", "content": "Decide the grant application 7."}]


def _post(url: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def _probe(url: str, model: str) -> dict:
    status, text = _post(f"{url}/chat/completions", {"model": model, "messages": PROBE, "temperature": 0,
                                                    "max_tokens": 6, "logprobs": True, "top_logprobs": 5})
    assert status == 200, text
    answer = json.loads(text)
    choice = answer["choices"][0]
    return {"model": answer["model"], "token_ids": choice["token_ids"],
            "top": [{alt["token_id"]: alt["logprob"] for alt in entry["top_logprobs"]}
                    for entry in choice["logprobs"]["content"]]}


def _moved(before: dict, after: dict) -> bool:
    """Whether the greedy answer or the log-probabilities of its first token's top alternatives changed."""
    if before["token_ids"] != after["token_ids"]:
        return True
    first, second = before["top"][0], after["top"][0]
    return set(first) != set(second) or max(abs(first[token] - second[token]) for token in first) > 1e-3


def test_two_iterations_against_serve_model_through_the_lora_endpoints(tmp_path):
    config = tiny_config(tmp_path / "run", model={"trainer_mode": "lora", "label": "tiny-rl"},
                         lora={"r": 8, "alpha": 16, "dropout": 0.0}, policy_server={"launch": "serve-model"},
                         training={"learning_rate": 2e-2, "group_size": 4})
    probes: list[dict] = []
    provoke = {"armed": False, "done": False}
    trainer: RLTrainer

    def on_row(row: dict) -> None:
        server = trainer.server
        probes.append({"iteration": row["step"], "asks": server.model_name, **_probe(server.url, server.model_name)})
        if row["step"] == 1:
            # Another adapter on the server, and one rollout of the next batch asking for it: a turn sampled by
            # weights that are not the batch's.
            intruder = tmp_path / "intruder"
            shutil.copytree(server.adapter_dir / "step-1", intruder)
            assert _post(f"{server.url}/load_lora_adapter", {"lora_name": "intruder",
                                                             "lora_path": str(intruder)})[0] == 200
            provoke["armed"] = True

    def on_note(line: str) -> None:
        if line.startswith("format warm-up"):  # after its sync: the warm-up's weights are served as step 0
            server = trainer.server
            probes.append({"iteration": "base", "asks": server.name_for(-1), **_probe(server.url, server.name_for(-1))})
            probes.append({"iteration": 0, "asks": server.model_name, **_probe(server.url, server.model_name)})

    trainer = RLTrainer(config, on_row=on_row, on_note=on_note)
    request = trainer._request

    def provoking(seed, cid, *, greedy):
        body = request(seed, cid, greedy=greedy)
        if provoke["armed"] and not provoke["done"] and not greedy:
            body["policy"]["config"]["model"] = "intruder"
            provoke["done"] = True
        return body

    trainer._request = provoking
    result = trainer.run()

    # The served policy answers under each update's adapter name, and its greedy output moves with the updates:
    # the warm-up's (supervised), and each iteration's that had a gradient (a batch of equal rewards has none).
    assert [p["asks"] for p in probes] == [trainer.models.name, "tiny-rl-step-0", "tiny-rl-step-1", "tiny-rl-step-2"]
    assert [p["model"] for p in probes] == [p["asks"] for p in probes]
    assert _moved(probes[0], probes[1])
    rows = trainer.metrics.rows
    # An iteration whose groups all had equal rewards has no gradient (the untrained tiny policy often scores 0 in
    # every rollout: which iterations have one depends on the sampled turns, so it is not asserted); the warm-up's
    # move above shows a served update, and each iteration that had a gradient must move the served policy too.
    updated = [i for i, row in enumerate(rows) if row["turns"] and row["loss"]]
    for index in updated:
        assert _moved(probes[index + 1], probes[index + 2]), (rows[index], probes)
    assert trainer.server.syncs == 3  # the format warm-up's (step 0) and one per iteration
    assert any("tiny-rl-step-<k>" in line for line in result.notes)
    log = (tmp_path / "run" / "policy_server.log").read_text()
    assert "Traceback" not in log

    # The provoked rollout was refused and counted, never trained on.
    assert [row["stale"] for row in rows] == [0, 1]
    assert rows[1]["invalid"] >= 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stale_rollouts"] == 1 and summary["status"] == "ok"
    # Only the last adapter is left on disk (the server holds what it loaded).
    assert sorted(p.name for p in (tmp_path / "run" / "adapters").iterdir()) == ["step-2"]


def test_a_run_resumes_against_a_separately_started_serve_model(tmp_path):
    """One iteration against a serve-model the trainer launches, then the run resumed against a serve-model started
    here (``proofgym serve-model <the exported base> --enable-lora``, given as ``policy_server.url``): the resumed run
    loads its checkpoint's adapter there and goes on with the next name."""
    from _bounds import CUT_OFF_S

    run = tmp_path / "run"
    first = tiny_config(run, model={"trainer_mode": "lora", "label": "tiny-rl"}, lora={"r": 4, "alpha": 8},
                        policy_server={"launch": "serve-model"}, training={"iterations_per_epoch": 1})
    RLTrainer(first).run()
    assert (run / "policy_base" / "config.json").is_file()
    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server = subprocess.Popen([sys.executable, "-c", "from proofgym.cli import main; main()", "serve-model",
                               str(run / "policy_base"), "--enable-lora", "--served-model-name", "proofgym:tiny",
                               "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # loading the model on a busy machine; the alternative is a hang
        while not _healthy(url) and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.2)
        assert _healthy(url), "serve-model did not start"
        second = tiny_config(run, model={"trainer_mode": "lora", "label": "tiny-rl"}, lora={"r": 4, "alpha": 8},
                             policy_server={"url": url}, training={"iterations_per_epoch": 2})
        trainer = RLTrainer(second)
        result = trainer.run()
        assert any(line.startswith("resumed from") for line in result.notes)
        assert trainer.server.model_name == "tiny-rl-step-2" and trainer.iteration == 2
        with urllib.request.urlopen(f"{url}/models", timeout=CUT_OFF_S) as response:
            cards = json.loads(response.read())["data"]
        # The run's last adapter is still loaded (the server outlives the run); the resumed step's was unloaded.
        assert [(c["id"], c.get("parent")) for c in cards] == [("proofgym:tiny", None),
                                                                 ("tiny-rl-step-2", "proofgym:tiny")]
    finally:
        server.terminate()
        server.wait(timeout=CUT_OFF_S)


@pytest.mark.parametrize("section,problem", [
    ({"url": "http://127.0.0.1:1/v1", "launch": "serve-model"}, "exactly one of url"),
    ({}, "exactly one of url"),
    ({"url": "ftp://x"}, "http(s) URL"),
    ({"launch": "sglang"}, "policy_server.launch"),
    ({"url": "http://127.0.0.1:1/v1", "port": 8000}, "port is the launched server's"),
    ({"launch": "serve-model", "adapter_dirr": "x"}, "policy_server.adapter_dirr"),
])
def test_policy_server_errors_name_the_key(tmp_path, section, problem):
    data = tiny_config(tmp_path).model_dump(exclude_unset=True)
    data["policy_server"] = section
    with pytest.raises(ConfigError) as error:
        parse_rl_config({"kind": "rl", **data}, source="rl.toml")
    assert problem in str(error.value) and "policy_server" in str(error.value)


def test_full_weights_cannot_travel_as_adapters(tmp_path):
    config = tiny_config(tmp_path / "run", policy_server={"launch": "serve-model"})
    with pytest.raises(Exception, match='model.trainer_mode must be "lora"'):
        RLTrainer(config).run(iterations=1)


def test_an_unreachable_policy_server_is_named(tmp_path):
    config = tiny_config(tmp_path / "run", model={"trainer_mode": "lora"},
                         policy_server={"url": "http://127.0.0.1:9/v1"})
    with pytest.raises(Exception, match=r"policy_server.url http://127.0.0.1:9/v1: not reachable"):
        RLTrainer(config).run(iterations=1)


def test_vllm_section_without_a_gpu_says_so_in_one_line(tmp_path):
    if vllm_available() is None:
        pytest.skip("this machine has a GPU and vLLM: [vllm] starts vllm serve here")
    config = tiny_config(tmp_path / "run", vllm={"max_model_len": 1024})
    notes: list[str] = []
    RLTrainer(config, on_note=notes.append).run(dry_run=True)
    lines = [line for line in notes if line.startswith("[vllm]")]
    assert len(lines) == 1 and "vllm serve not started" in lines[0] and "served in this process" in lines[0]


def test_vllm_serves_the_policy_on_a_gpu(tmp_path):
    why = vllm_available()
    if why is not None:
        pytest.skip(f"needs vLLM on a GPU: {why}")
    pytest.importorskip("transformers")
    config = tiny_config(tmp_path / "run", model={"base": "HuggingFaceTB/SmolLM2-135M-Instruct",
                                                  "trainer_mode": "lora", "label": "smol"},
                         vllm={"max_model_len": 2048, "gpu_memory_utilization": 0.3, "enforce_eager": True},
                         training={"warmup_steps": 0})
    trainer = RLTrainer(config)
    result = trainer.run()
    assert trainer.server.model_name == "smol-step-2"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["stale_rollouts"] == 0
    assert any("vllm serve" in line or "policy server" in line for line in result.notes)
