"""read_frame: an observation's frame is a PNG in base64 within the size limits, or a FrameError saying why."""

import base64

import pytest

from proofgym.policies import FrameError, read_frame
from proofgym.policies._frames import MAX_FRAME_BYTES, MAX_FRAME_SIDE

from ._support import png_base64


def header_only(width, height):
    """A PNG's signature and IHDR chunk alone: all read_frame reads of the size."""
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + (13).to_bytes(4, "big") + b"IHDR" + ihdr + b"\0" * 4).decode()


def test_a_png_is_read_with_its_size():
    frame = read_frame(png_base64(64, 48))
    assert (frame.width, frame.height) == (64, 48) and frame.encoded == png_base64(64, 48)
    assert frame.data_uri == "data:image/png;base64," + png_base64(64, 48)
    assert frame.image_part() == {"type": "image_url", "image_url": {"url": frame.data_uri}}


def test_a_frame_of_the_largest_side_is_read():
    assert read_frame(header_only(MAX_FRAME_SIDE, MAX_FRAME_SIDE)).width == MAX_FRAME_SIDE


@pytest.mark.parametrize("value, message", [
    (None, "expected a PNG as base64 text, got NoneType"),
    ({"png": "..."}, "expected a PNG as base64 text, got dict"),
    ("not base64!", "not valid base64"),
    ("aGVsbG8=\n", "not valid base64"),
    ("é", "not valid base64"),
    (base64.b64encode(b"GIF89a" + b"\0" * 30).decode(), r"not a PNG \(no PNG signature\)"),
    (base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode(), r"not a PNG \(no IHDR header\)"),
    (header_only(0, 64), "its header gives no pixels"),
    (header_only(MAX_FRAME_SIDE + 1, 64), f"{MAX_FRAME_SIDE + 1} x 64 pixels, more than the limit of"),
    (header_only(64, 2**31), "more than the limit"),
    ("A" * (4 * MAX_FRAME_BYTES // 3 + 8), f"more than a frame of the limit of {MAX_FRAME_BYTES} bytes"),
])
def test_a_malformed_frame_is_a_frame_error_saying_why(value, message):
    with pytest.raises(FrameError, match=message):
        read_frame(value)
