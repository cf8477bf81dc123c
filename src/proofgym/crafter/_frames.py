"""Frames stored with a Crafter trace (``frames.store``), read back and written as a GIF or a PNG strip."""

from __future__ import annotations

import base64
import binascii
import io
from pathlib import Path
from typing import Any

from proofgym.traces import SessionTrace

_MAX_FRAME_BYTES = 1 << 20


def session_frames(session: SessionTrace) -> list[Any]:
    """The frames a session's observations carry (``data.image_png_base64``), in order, as PIL images: the first
    observation's, then each step's result. Anything that is not a PNG is skipped."""
    from PIL import Image

    encoded: list[Any] = []
    for index, step in enumerate(session.steps):
        if index == 0:
            encoded.append(_data(step.observation).get("image_png_base64"))
        result = step.env_event.result if step.env_event is not None else None
        encoded.append(_data(result).get("image_png_base64"))
    frames = []
    for text in encoded:
        if not isinstance(text, str) or len(text) > 2 * _MAX_FRAME_BYTES:
            continue
        try:
            raw = base64.b64decode(text, validate=True)
            if not raw.startswith(b"\x89PNG"):
                continue
            frames.append(Image.open(io.BytesIO(raw)).convert("RGB"))
        except (binascii.Error, OSError, ValueError):
            continue
    return frames


def write_frames(frames: list[Any], path: str | Path, *, scale: int = 4, duration_ms: int = 150) -> Path:
    """Write ``frames`` to ``path``: an animated GIF when it ends in ``.gif``, else a horizontal PNG strip; each
    frame enlarged ``scale`` times (nearest neighbour). ``ValueError`` when there is no frame."""
    from PIL import Image

    if not frames:
        raise ValueError("no frames: the session was recorded without frames (env_config frames.store = true)")
    if not 1 <= scale <= 16:
        raise ValueError(f"scale must be from 1 to 16, got {scale}")
    big = [frame.resize((frame.width * scale, frame.height * scale), Image.NEAREST)  # type: ignore[attr-defined]
           for frame in frames]
    target = Path(path)
    if target.suffix.lower() == ".gif":
        big[0].save(target, save_all=True, append_images=big[1:], duration=duration_ms, loop=0)
    else:
        strip = Image.new("RGB", (sum(frame.width for frame in big), max(frame.height for frame in big)))
        x = 0
        for frame in big:
            strip.paste(frame, (x, 0))
            x += frame.width
        strip.save(target, format="PNG")
    return target


def _data(observation: Any) -> dict[str, Any]:
    data = observation.get("data") if isinstance(observation, dict) else None
    return data if isinstance(data, dict) else {}
