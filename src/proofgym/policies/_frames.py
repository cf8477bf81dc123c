"""An observation's rendered frame, as a vision model is shown it: read from the observation's data, checked, and
put into the chat messages as an OpenAI ``image_url`` content part.

An environment that renders frames puts the current one in its observation's data under :data:`FRAME_KEY`, a PNG
as base64 (crafter does with ``use_vision = true``). The rollout loop checks it with :func:`read_frame` and hands
it to the policy as :attr:`PolicyRequest.frame <proofgym.policies.PolicyRequest.frame>`; a policy that shows its
model images adds it to the last message with :func:`with_frame`.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from proofgym.policies._text_calls import message_text

#: The observation data key a frame is read from.
FRAME_KEY = "image_png_base64"
#: The largest frame shown to a model: its PNG bytes, and its width and height in pixels (crafter's is 64 x 64).
MAX_FRAME_BYTES = 1 << 20
MAX_FRAME_SIDE = 1024
#: What stands for the observation's text when a model is shown its frame alone (``image_only_mode``).
FRAME_INSTRUCTION = "The image is the current observation; reply with your next action."
EARLIER_FRAME = "(an earlier observation, shown as an image at the time)"
_FRAME_CAPTION = "The current observation:"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class FrameError(ValueError):
    """An observation's frame is not one a model can be shown (not a PNG, too large); the message says why."""


@dataclass(frozen=True)
class Frame:
    """A checked frame: ``encoded``, the PNG as base64 (as the observation carried it), ``width`` x ``height``."""

    encoded: str
    width: int
    height: int

    @property
    def data_uri(self) -> str:
        """The frame as a ``data:image/png;base64,...`` URI."""
        return f"data:image/png;base64,{self.encoded}"

    def image_part(self) -> dict[str, Any]:
        """The frame as an OpenAI chat content part."""
        return {"type": "image_url", "image_url": {"url": self.data_uri}}


def read_frame(value: Any) -> Frame:
    """``value`` (an observation's ``data[FRAME_KEY]``) as a :class:`Frame`; :class:`FrameError` when it is not a
    PNG in base64, or is larger than :data:`MAX_FRAME_BYTES` or :data:`MAX_FRAME_SIDE` pixels a side."""
    if not isinstance(value, str):
        raise FrameError(f"expected a PNG as base64 text, got {type(value).__name__}")
    if len(value) > 4 * -(-MAX_FRAME_BYTES // 3):
        raise FrameError(f"it has {len(value)} characters of base64, more than a frame of the limit of "
                         f"{MAX_FRAME_BYTES} bytes")
    try:
        png = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise FrameError("it is not valid base64") from None
    # The PNG signature, then the IHDR chunk: its length (13), its type, the width and height (big-endian).
    if not png.startswith(_PNG_SIGNATURE):
        raise FrameError("it is not a PNG (no PNG signature)")
    if len(png) < 24 or png[12:16] != b"IHDR":
        raise FrameError("it is not a PNG (no IHDR header)")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    if width < 1 or height < 1:
        raise FrameError("it is not a PNG (its header gives no pixels)")
    if width > MAX_FRAME_SIDE or height > MAX_FRAME_SIDE:
        raise FrameError(f"it is {width} x {height} pixels, more than the limit of {MAX_FRAME_SIDE} x "
                         f"{MAX_FRAME_SIDE}")
    return Frame(value, width, height)


def without_views(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` for a model shown frames alone (``image_only_mode``): every observation's text (the user and
    tool messages) replaced, the last by :data:`FRAME_INSTRUCTION`, earlier ones by :data:`EARLIER_FRAME`. An error
    observation keeps its first line, which says what was wrong with the model's last reply, not what it sees."""
    out = [dict(message) for message in messages]
    shown = [i for i, message in enumerate(out) if message.get("role") in ("user", "tool")]
    for i in shown:
        first = message_text(out[i].get("content")).split("\n", 1)[0]
        line = FRAME_INSTRUCTION if i == shown[-1] else EARLIER_FRAME
        out[i]["content"] = f"{first}\n{line}" if first.startswith("Error:") else line
    return out


def with_frame(messages: Sequence[Mapping[str, Any]], frame: Frame) -> list[dict[str, Any]]:
    """``messages`` with ``frame`` shown beside the last observation: a last user message becomes content parts
    (its text, then the image); after a tool result (which cannot hold an image) a user message with the image
    follows."""
    out = [dict(message) for message in messages]
    if out and out[-1].get("role") == "user":
        text = message_text(out[-1].get("content"))
        out[-1]["content"] = [{"type": "text", "text": text}, frame.image_part()]
    else:
        out.append({"role": "user", "content": [{"type": "text", "text": _FRAME_CAPTION}, frame.image_part()]})
    return out
