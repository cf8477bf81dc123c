"""Write records.csv: a few hundred housing-assistance applications (features only, no decision column).

    python examples/byod/make_data.py [--rows 300] [--out examples/byod/records.csv] [--seed 0]

The rows are drawn so that every rule of rules.yaml decides some of them. The decisions are never written: the
rule kernel gives them (`proofgym domain init housing --data records.csv --rules rules.yaml`).
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

COLUMNS = ["applicant_id", "age", "income_pct_ami", "employment_status", "has_disability", "months_in_county"]
STATUSES = ["employed", "unemployed", "retired", "student"]


def row(rng: random.Random, i: int) -> list[object]:
    profile = i % 7  # one profile per rule, in turn, with noise
    status = rng.choice(STATUSES)
    age = rng.randint(50, 59) if status == "retired" else rng.randint(18, 80)  # a retiree under 60, a worker over
    income = rng.randint(30, 99)  # household income as a percent of the area median: the waitlist's band
    disability = rng.random() < 0.15  # a deny reason comes first
    months = rng.randint(6, 240)
    if profile == 0:
        age, status = rng.randint(16, 17), rng.choice(["student", "employed"])
        income = rng.randint(5, 180)
    elif profile == 1:
        months = rng.randint(0, 5)
        income = rng.randint(5, 180)
    elif profile == 2:
        income = rng.randint(100, 180)
    elif profile == 3:
        disability, income = True, rng.randint(5, 99)
    elif profile == 4:
        age, status, disability = rng.randint(60, 90), "retired", False
    elif profile == 5:
        income, disability = rng.randint(5, 29), False
    else:
        disability = False
    return [f"A{i:04d}", age, income, status, "yes" if disability else "no", months]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("records.csv"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for i in range(args.rows):
            writer.writerow(row(rng, i))
    print(f"wrote {args.rows} rows to {args.out}")


if __name__ == "__main__":
    main()
