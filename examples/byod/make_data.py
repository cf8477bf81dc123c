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

COLUMNS = ["applicant_id", "age", "household_size", "monthly_income", "employment_status", "has_disability",
           "months_in_county"]
STATUSES = ["employed", "unemployed", "retired", "student"]


def row(rng: random.Random, i: int) -> list[object]:
    profile = i % 7  # one profile per rule, in turn, with noise
    age = rng.randint(19, 64)
    size = rng.randint(1, 6)
    status = rng.choice(STATUSES[:2] + STATUSES[3:])
    disability = False
    months = rng.randint(6, 240)
    per_person = rng.uniform(1201, 2500)
    if profile == 0:
        age = rng.randint(16, 17)
        status = "student"
    elif profile == 1:
        months = rng.randint(0, 5)
    elif profile == 2:
        per_person = rng.uniform(2501, 6000)
    elif profile == 3:
        disability = True
    elif profile == 4:
        age, status, per_person = rng.randint(65, 90), "retired", rng.uniform(900, 1800)
    elif profile == 5:
        per_person = rng.uniform(200, 1200)
    income = round(per_person * size, 2)
    return [f"A{i:04d}", age, size, income, status, "yes" if disability else "no", months]


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
