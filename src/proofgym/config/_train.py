"""The ``training:`` section of a run config (``kind: run``): model, LoRA, GRPO, data and outputs for
``proofgym train``. Each part is a ``<Name>Section`` model, as in every config kind."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The model name that selects proofgym's tiny offline model (built locally, nothing downloaded).
TINY_MODEL = "proofgym:tiny"
# prompt_format "compact": the demo's one-line prompt, which exists for this domain only; its held-out
# set defaults to the demo's (proofgym.training._demo.HELDOUT_SEED, 1,000 rows), so the two runs compare.
COMPACT_DOMAIN = "grant_eligibility"
DEMO_HELDOUT = {"n": 1000, "seed": 1_000_000}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoraSection(_Strict):
    """LoRA adapters through peft: rank, scaling, dropout and the modules they wrap."""

    r: int = Field(16, ge=1, le=4096, description="adapter rank")
    alpha: float = Field(32.0, gt=0, description="scaling numerator (scale = alpha / r)")
    dropout: float = Field(0.05, ge=0.0, lt=1.0, description="dropout on the adapter input")
    target_modules: list[str] | Literal["all-linear"] = Field(
        "all-linear", description="module names to wrap, or 'all-linear' for every linear layer but the output head")

    @field_validator("target_modules")
    @classmethod
    def _names(cls, value: list[str] | str) -> list[str] | str:
        if isinstance(value, list):
            if not value:
                raise ValueError("must name at least one module, or be 'all-linear'")
            if any(not name.strip() for name in value):
                raise ValueError("module names must not be blank")
        return value


class GRPOSection(_Strict):
    """GRPO hyper-parameters. ``batch_size`` counts prompts per step; each gets ``group_size`` completions."""

    group_size: int = Field(8, ge=2, le=1024, description="completions sampled per prompt")
    batch_size: int = Field(16, ge=1, description="prompts per optimisation step")
    learning_rate: float = Field(1e-5, gt=0, le=1.0)
    kl_beta: float = Field(0.0, ge=0, description="weight of the KL penalty to the reference model (0: none)")
    max_completion_length: int = Field(256, ge=1, le=131_072, description="tokens per completion at most")
    temperature: float = Field(1.0, gt=0, le=10.0, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1.0)
    top_k: int = Field(0, ge=0, description="sample each token from the top_k likeliest (0: the whole vocabulary, "
                       "TRL's default); with explore_temperature on a small vocabulary, 50 keeps the hotter samples "
                       "in format")
    steps: int = Field(100, ge=1, description="optimisation steps")
    clip_epsilon: float = Field(0.2, gt=0, lt=1.0, description="PPO-style ratio clip")
    warmup_steps: int = Field(0, ge=0, description="linear learning-rate warm-up steps")
    max_grad_norm: float = Field(1.0, gt=0)
    loss_type: Literal["dapo", "grpo", "dr_grpo", "bnpo"] = Field(
        "dapo", description="token-averaged (dapo) or per-sequence (grpo) loss, as TRL names them")
    min_lr_ratio: float = Field(0.0, ge=0.0, le=1.0, description="after the warm-up the learning rate falls "
                                "linearly to this share of its peak at the last step (1: constant)")
    updates_per_generation: int = Field(1, ge=1, le=64, description="optimisation steps on each generation "
                                        "(TRL's num_iterations); each counts as a step")
    dynamic_sampling: bool = Field(False, description="drop groups whose rewards have no spread and draw more "
                                   "prompts, up to max_sampling_rounds generations per step")
    max_sampling_rounds: int = Field(3, ge=1, le=64)
    scale_partial_batches: bool = Field(False, description="with dynamic_sampling: a step that found fewer "
                                        "groups with a spread than batch_size scales its loss by the share found")

    explore_temperature: float = Field(1.0, ge=1.0, le=10.0, description="with a curriculum: prompts whose last "
                                       "group every sample answered wrong are sampled at temperature times this "
                                       "(through TRL their loss is the base temperature's: on the demo's task 2 "
                                       "made the KL jump to 0.3-2 and learning worse)")
    engine: Literal["proofgym", "trl"] = Field(
        "proofgym", description="through TRL, who samples the completions and computes their log-probabilities: "
        "proofgym's loops (each prompt computed once for its group, as the compact loop does; used where the batch "
        "allows: plain temperature / top-k sampling of text in one process, and a batch's logits within 256 MiB), "
        "else TRL's own; trl: TRL's own always")

    @model_validator(mode="after")
    def _scaling_needs_dynamic_sampling(self) -> GRPOSection:
        if self.scale_partial_batches and not self.dynamic_sampling:
            raise ValueError("scale_partial_batches: true needs dynamic_sampling: true (without it every step "
                             "trains on all its groups)")
        return self


class WarmupSection(_Strict):
    """A supervised warm-up before GRPO that teaches the answer format, not the answers: each target
    is one decision block restating the row's ``source_facts`` with a decision drawn at random from
    the parser's ``decisions``. For models that do not yet write the format (``proofgym:tiny``)."""

    steps: int = Field(150, ge=1)
    batch_size: int = Field(64, ge=1)
    learning_rate: float = Field(1e-3, gt=0, le=1.0)


class TinyModelSection(_Strict):
    """The shape of ``proofgym:tiny`` (default: 1.84 M parameters; ``proofgym demo`` uses hidden 128, 3 layers,
    MLP 384: 0.69 M). ``hidden_size`` must be a multiple of ``num_heads``."""

    hidden_size: int = Field(192, ge=8, le=4096)
    num_layers: int = Field(4, ge=1, le=64)
    num_heads: int = Field(4, ge=1, le=64)
    intermediate_size: int = Field(512, ge=8, le=16384)

    @model_validator(mode="after")
    def _heads_divide_the_width(self) -> TinyModelSection:
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be a multiple of num_heads ({self.num_heads})")
        return self


class DatasetSection(_Strict):
    """Training prompts: ``n`` rows of a shipped domain for ``seed``, or a JSONL file of rows.

    A file row needs ``prompt`` (a string or chat messages) and may carry ``gold``, ``source_facts``
    and ``branch``, which the reward function reads. ``prompt_format`` is how domain rows show a
    record: ``chat`` (system prompt + record as messages), ``plain`` (the same as one text),
    ``record`` (the record alone, no instructions: for small models taught the format by a warm-up),
    ``compact`` (``proofgym demo``'s one-line prompt, "Grant application: age 17, annual income
    28000, resident, no active grant.", and its rows, with a ``cell`` column naming the decision
    rules that fire; grant_eligibility only) or ``auto`` (chat when the tokenizer has a chat
    template, else plain). ``contrast`` (compact only) adds the rows' income contrast pairs, as the
    demo does (see :func:`proofgym.training.contrast_rows`).
    """

    domain: str | None = Field(None, min_length=1)
    n: int = Field(1024, ge=1, le=10_000_000)
    seed: int = 0
    file: str | None = Field(None, min_length=1)
    prompt_format: Literal["auto", "plain", "chat", "record", "compact"] = "auto"
    contrast: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> DatasetSection:
        if self.contrast and self.prompt_format != "compact":
            raise ValueError("contrast: true adds the demo's income contrast pairs; it needs prompt_format: compact")
        if (self.domain is None) == (self.file is None):
            raise ValueError("give exactly one of 'domain' (a shipped domain) or 'file' (a JSONL file of rows)")
        if self.prompt_format == "compact" and self.domain != COMPACT_DOMAIN:
            raise ValueError(f"prompt_format: compact is the demo's prompt, for domain {COMPACT_DOMAIN!r} only "
                             f"(got {'a file' if self.domain is None else repr(self.domain)})")
        return self


class HeldoutSection(_Strict):
    """The held-out set scored with greedy decoding before and after training (``n: 0`` skips it), and with
    ``every`` during training too (``stop_at``: an early stop once every branch is there twice in a row).

    Rows come from ``file`` when given, else ``n`` rows of ``domain`` (default: the training
    dataset's domain) for ``seed``, which must differ from the training seed of the same domain.
    ``n`` and ``seed`` default to 128 and 1, or to the demo's held-out set (1,000 rows of seed
    1,000,000) when the dataset's ``prompt_format`` is ``compact``.
    """

    n: int | None = Field(None, ge=0, le=1_000_000)
    seed: int | None = None
    domain: str | None = Field(None, min_length=1)
    file: str | None = Field(None, min_length=1)
    batch_size: int = Field(64, ge=1)
    every: int = Field(0, ge=0, description="also score the held-out rows every N steps during training, the "
                       "weights that would be kept (the moving average with average_decay); 0: before and after only")
    stop_at: float | None = Field(None, gt=0.0, le=1.0, description="with every: stop training once every rule "
                                  "branch is at this accuracy or above at two evaluations in a row")

    @model_validator(mode="after")
    def _stopping_needs_evaluations(self) -> HeldoutSection:
        if self.stop_at is not None and self.every == 0:
            raise ValueError("stop_at needs every > 0 (the held-out evaluations during training it reads)")
        return self


class CurriculumSection(_Strict):
    """Draw the training prompts through proofgym's ``BranchCurriculum`` (TRL's sampler is replaced).

    Rows are grouped by gold decision, then by their ``key`` column (``branch``: the first deny
    reason; ``cell``: every decision rule that fires, with ``prompt_format: compact``). A decision
    keeps its share of the draws; within it a ``mix`` share is uniform over the groups and the rest
    goes to the groups the policy still gets wrong (a running accuracy, ``decay`` per step, with
    error floored at ``min_error``). A ``replay`` share of the draws repeats rows whose last samples
    were partly wrong, weighted by ``replay_weighting``: ``disagreement`` favours rows whose samples split
    (a row every sample got wrong is replayed least), ``error`` the rows answered wrong most (for use with
    ``grpo.explore_temperature``, which samples those hotter).
    """

    key: str = Field("branch", min_length=1, description="the row column the rows are grouped by")
    mix: float = Field(0.5, ge=0.0, le=1.0)
    replay: float = Field(0.0, ge=0.0, lt=1.0)
    decay: float = Field(0.9, ge=0.0, lt=1.0)
    min_error: float = Field(0.02, gt=0.0, le=1.0)
    replay_weighting: Literal["disagreement", "error"] = "disagreement"


class TrainingSection(_Strict):
    """What ``proofgym train`` trains, on what, and where it writes.

    ``model`` is a Hugging Face model id, a local directory, or ``proofgym:tiny`` (the tiny offline
    model, built into ``model_cache_dir``, shaped by ``tiny_model``). Relative paths are relative to the
    working directory.
    """

    model: str = Field(..., min_length=1)
    model_cache_dir: str = Field("~/.cache/proofgym/tiny-model", min_length=1,
                                 description="where proofgym:tiny is built and cached")
    tiny_model: TinyModelSection | None = None
    lora: LoraSection | None = None
    grpo: GRPOSection = GRPOSection()
    dataset: DatasetSection
    heldout: HeldoutSection = HeldoutSection()
    output_dir: str = Field("runs/train", min_length=1)
    use_vllm: Literal["auto"] | bool = Field("auto", description="auto: when CUDA and the vllm package are present")
    vllm_mode: Literal["colocate", "server"] = "colocate"
    vllm_gpu_memory_utilization: float = Field(0.3, gt=0, le=1.0)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = Field("auto", description="auto: bf16 on a GPU that "
                                                                                     "supports it, else fp32")
    gradient_checkpointing: bool = False
    warmup: WarmupSection | None = None
    curriculum: CurriculumSection | None = None
    average_decay: float | None = Field(None, ge=0.0, lt=1.0, description="keep an exponential moving average "
                                        "of the weights (this decay per step) and save and evaluate it, not the "
                                        "live policy (None: the live policy)")
    save_every: int = Field(0, ge=0, description="checkpoint every N steps (0: only the final model)")
    seed: int = 0
    cpu_threads: int | None = Field(None, ge=1, le=1024, description="torch CPU threads (default: torch's own "
                                                                      "choice); 1 is fastest on a busy machine")

    @field_validator("model")
    @classmethod
    def _model_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @model_validator(mode="after")
    def _tiny_shape_needs_the_tiny_model(self) -> TrainingSection:
        if self.tiny_model is not None and not self.is_tiny:
            raise ValueError(f"tiny_model shapes {TINY_MODEL}; model is {self.model!r}")
        return self

    @model_validator(mode="after")
    def _explore_needs_a_curriculum(self) -> TrainingSection:
        if self.grpo.explore_temperature != 1.0 and self.curriculum is None:
            raise ValueError("grpo.explore_temperature needs a curriculum (training.curriculum: it knows which prompts "
                             "every sample answered wrong)")
        return self

    @model_validator(mode="after")
    def _heldout_source(self) -> TrainingSection:
        defaults = DEMO_HELDOUT if self.dataset.prompt_format == "compact" else {"n": 128, "seed": 1}
        missing = {key: value for key, value in defaults.items() if getattr(self.heldout, key) is None}
        if missing:
            self.heldout = self.heldout.model_copy(update=missing)
        held = self.heldout
        if held.n == 0 and held.file is None and held.every:
            raise ValueError("heldout.every needs held-out rows; heldout.n is 0")
        if held.n == 0 or held.file is not None:
            return self
        domain = held.domain or self.dataset.domain
        if domain is None:
            raise ValueError("heldout: the training data is a file, so give heldout.domain or heldout.file "
                             "(or heldout.n: 0 to skip the held-out evaluation)")
        if domain == self.dataset.domain and held.seed == self.dataset.seed:
            raise ValueError(f"heldout.seed ({held.seed}) must differ from dataset.seed so that held-out rows are "
                             "not trained on")
        return self

    @property
    def is_tiny(self) -> bool:
        """Whether ``model`` selects proofgym's tiny offline model."""
        return self.model == TINY_MODEL
