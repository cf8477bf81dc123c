"""Score completions with proofgym's reward function, then hand it to TRL's own GRPOTrainer (2 steps, tiny model).

    python examples/score_and_trl.py        (from the repository root; CPU, offline, under a minute)
"""
import tempfile

import proofgym as pg
from datasets import Dataset
from proofgym.domains import build_dataset, get_domain, gold_completion
from proofgym.policies import build_tiny_model
from proofgym.training import demo_rows, trl_reward_function
from trl import GRPOConfig, GRPOTrainer

run = pg.load_config("configs/run/grant_eligibility.yaml")            # parser + rule kernel + shaper, one file
domain = get_domain("grant_eligibility")
rows = build_dataset(domain, seed=0, n=16)                              # {id, prompt, gold, source_facts, branch}

# 1. Score: the gold answer is certified by the kernel; an answer hedging with two decisions is a format failure.
reward_fn = run.reward_function()
good = gold_completion(domain, domain.generate(seed=0, n=1)[0])
for item in reward_fn.score([rows[0]["prompt"]] * 2, [good, good + good], [rows[0]] * 2):
    print(item.outcome, item.reward, item.components)
reward_fn.close()

# 2. Train: the same path as a TRL reward function (prompts, completions, **columns) -> list[float | None].
with tempfile.TemporaryDirectory() as out:
    model, tokenizer = build_tiny_model(out, seed=0)                    # built locally, nothing downloaded
    args = GRPOConfig(output_dir=out, max_steps=2, per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=24, learning_rate=1e-3, report_to=[], use_cpu=True, logging_steps=1)
    reward = trl_reward_function(run)
    train = [{"prompt": r["prompt"], "gold": r["gold"]} for r in demo_rows(seed=0, n=16)]   # one-line prompts
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, processing_class=tokenizer,
                          train_dataset=Dataset.from_list(train))
    trainer.train()
    reward.close()
    print("trained", trainer.state.global_step, "GRPO steps; last reward", trainer.state.log_history[-2]["reward"])
