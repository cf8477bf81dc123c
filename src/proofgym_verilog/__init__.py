"""``vf-eval proofgym-verilog``: proofgym's verilog environment as a verifiers taskset."""

from proofgym.integrations.vf import taskset_for

VerilogTaskset = taskset_for("verilog", module=__name__)

__all__ = ["VerilogTaskset"]
