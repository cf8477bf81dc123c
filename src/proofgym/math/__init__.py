"""Math answers: a bounded final-answer parser, a math-verify verifier that cannot silently score 0, and a
single-turn math environment."""
