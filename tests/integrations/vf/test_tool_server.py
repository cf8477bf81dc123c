"""The tool server of a tool environment, run by hand as docs/verifiers.md says (``python -m
proofgym.integrations.vf._toolset --env ENV --seed N``): an MCP client sees the environment's own tools and
schemas, and each call is the environment's step (the same observation a fresh instance gives the same call)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("verifiers.v1")
from mcp.client import Client  # noqa: E402

from proofgym.envs import make  # noqa: E402


def test_the_tool_server_serves_the_environments_tools_and_steps_it(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    server = subprocess.Popen([sys.executable, "-m", "proofgym.integrations.vf._toolset", "--env", "fact_finding",
                               "--seed", "2"], env={**os.environ, "MCP_PORT_FILE": str(port_file)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not (port_file.exists() and port_file.read_text().strip()):
            assert server.poll() is None and time.monotonic() < deadline, server.stdout.read() if server.stdout else ""
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port_file.read_text().strip()}/mcp"

        async def session() -> tuple[list[dict], list[str]]:
            for _ in range(300):  # the port is reported before the server's setup: wait until it answers
                try:
                    async with Client(url) as client:
                        listed = await client.list_tools()
                        calls = [{"name": "age"}, {"name": "no_such_fact"}]
                        results = [await client.call_tool("get_fact", args) for args in calls]
                        return ([{"name": tool.name, "description": tool.description,
                                  "parameters": tool.input_schema} for tool in listed.tools],
                                ["".join(part.text for part in result.content) for result in results])
                except Exception:
                    if server.poll() is not None:
                        raise
                    await asyncio.sleep(0.5)
            raise AssertionError("the tool server did not answer")

        tools, texts = asyncio.run(session())
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert "RuntimeWarning" not in output  # the module is not imported before python -m runs it
    with make("fact_finding") as env:
        env.reset(2)
        assert sorted(tools, key=lambda tool: tool["name"]) == sorted(
            ({"name": tool["function"]["name"], "description": tool["function"]["description"],
              "parameters": tool["function"]["parameters"]} for tool in env.tools), key=lambda tool: tool["name"])
        expected = [env.step({"tool": "get_fact", "args": args}).observation.text
                    for args in ({"name": "age"}, {"name": "no_such_fact"})]
    assert texts == expected, json.dumps(texts)
