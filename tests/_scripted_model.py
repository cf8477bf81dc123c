"""A scripted OpenAI-compatible model server: a real HTTP server on loopback whose ``/v1/chat/completions`` answers
with the next scripted text (the last one again once the script runs out) and records every request body; and the
scripted answers of a rulebook draft over the loan domain's facts (``INVALID`` names a fact the data lacks, ``VALID``
validates and has a rule that never fires on the loan records)."""

from __future__ import annotations

import threading
from typing import Any, Self

from _threaded_server import ThreadedServer
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse


class ScriptedChatServer:
    """A real OpenAI-compatible chat server on loopback: ``POST /v1/chat/completions`` records each request body
    (``requests``) and answers with :meth:`reply` of it and its number (1, 2, ...). ``url``: the base URL
    (``.../v1``) while it runs (``with Server(...) as model:``). Subclasses script the answers."""

    what = "a scripted model server"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def complete(request: Request) -> Any:
            body = await request.json()
            with self._lock:
                self.requests.append(body)
                number = len(self.requests)
            return self.reply(body, number)

        self._server = ThreadedServer(app, what=self.what, lifespan="off", timeout_graceful_shutdown=1)
        self.url = f"{self._server.url}/v1"

    def reply(self, body: dict[str, Any], number: int) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


class ScriptedModel(ScriptedChatServer):
    """``answers``: the message texts to send, in order (the last one again once the script runs out)."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        super().__init__()

    def reply(self, body: dict[str, Any], number: int) -> JSONResponse:
        text = self.answers[min(number, len(self.answers)) - 1]
        return JSONResponse({
            "id": f"scripted-{number}", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })


POLICY = """Deny anyone whose credit score is below 580. Refer applicants with fewer than 24 months of credit
history to an underwriter. Approve prime applicants (credit score 670 or more). Deny everyone else."""


def rulebook_answer(decision_rules: str, *, facts_section: str = "", fence: bool = True) -> str:
    text = f"""name: drafted_loans
version: "1"
description: drafted from the policy
decisions: [approve, refer, deny]
posture: deny
default_decision: deny
{facts_section}decision_rules:
{decision_rules}"""
    return f"Here is the rulebook.\n\n```yaml\n{text}```\nLet me know if you need changes." if fence else text


INVALID = rulebook_answer("""  - name: deny_subprime
    decide: deny
    priority: 100
    when: {fact: credit_score, op: "<", value: 580}
  - name: approve_high_income
    decide: approve
    priority: 10
    when: {fact: income, op: ">", value: 100000}
""", facts_section="facts:\n  income: {type: number}\n")

VALID = rulebook_answer("""  - name: deny_subprime
    decide: deny
    priority: 100
    when: {fact: credit_score, op: "<", value: 580}
    explain: "credit score {credit_score} is below 580"
  - name: refer_thin_file
    decide: refer
    priority: 50
    when: {fact: credit_history_months, op: "<", value: 24}
    explain: "{credit_history_months} months of history"
  - name: approve_prime
    decide: approve
    priority: 10
    when: {fact: credit_score, op: ">=", value: 670}
    explain: "credit score {credit_score} is prime"
  - name: refer_ancient_applicant
    decide: refer
    priority: 5
    when: {fact: applicant_age, op: ">", value: 119}
    explain: "never in this data"
""")
