"""Crafter: the seed's second environment (text view, tools, achievement rewards, difficulty, rubrics)."""
