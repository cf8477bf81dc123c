"""Small, real verifiers and data that ship with proofgym so its demo works offline."""
