"""Finding the toolchain, and saying exactly what to install when it is missing."""

import pytest

from proofgym.verilog import VERILOG_INSTALL_HINT, ToolchainError, detect_toolchain

from ._support import requires_judge


@requires_judge
def test_the_installed_tools_and_their_versions_are_found():
    toolchain = detect_toolchain()
    assert toolchain.can_simulate and toolchain.missing == []
    assert toolchain.iverilog_version and toolchain.vvp_version and toolchain.bwrap_version
    assert set(toolchain.versions()) == {"iverilog", "vvp", "bwrap"}
    assert "iverilog: " + toolchain.iverilog_version in toolchain.describe()
    assert detect_toolchain() is toolchain  # cached


def test_missing_tools_are_listed_with_the_install_command():
    toolchain = detect_toolchain("/nonexistent/iverilog", "/nonexistent/vvp", "/nonexistent/bwrap")
    assert toolchain.missing == ["iverilog", "vvp", "bwrap"] and not toolchain.can_simulate
    assert VERILOG_INSTALL_HINT == "apt-get install -y iverilog bubblewrap"
    assert VERILOG_INSTALL_HINT in toolchain.describe()
    with pytest.raises(ToolchainError, match="apt-get install -y iverilog bubblewrap") as raised:
        toolchain.require_simulator()
    assert str(raised.value).startswith("iverilog not installed; ")  # the headline an eval shows per rollout


def test_no_sandbox_wanted_means_bwrap_is_not_missing():
    assert "bwrap" not in detect_toolchain("/nonexistent/iverilog", "vvp", None).missing
