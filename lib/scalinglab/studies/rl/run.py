"""One RL post-training run: supervised warm-up to a target R0, then GRPO with evals.

:func:`run_rl` is the unit of work of the RL-scaling sweep (one model size, one
design variant, one seed):

1. Draw disjoint problem sets from the task (fixed ``data_seed``, so every size and
   seed sees the same held-out prompts): ``sft`` (warm-up examples), ``train``
   (RL prompts) and ``heldout`` (evaluation).
2. Warm-up: supervised next-token training on ``sft`` (same recipe for every size:
   AdamW, learning rate, batch), stopped at the first check where the pass rate on
   a fixed slice of the RL prompts reaches ``target_lo`` (a band well below the
   ceiling, e.g. 0.05-0.3: the laws are about gains from R0). The check never uses
   held-out prompts.
3. GRPO (:mod:`scalinglab.studies.rl.grpo`) for ``steps`` iterations, evaluating
   the pass rate (mean over ``eval_k`` samples per held-out prompt, temperature 1)
   every ``eval_every`` steps, and at step 0 (R0). Every evaluation draws from a
   generator re-seeded with the same seed (common random numbers), so the curve's
   step-to-step changes are not sampling noise in which completions were drawn.
   With a ``plateau`` rule (:mod:`scalinglab.studies.rl.stopping`) the run stops
   early once its held-out pass rate has plateaued.

Design knobs of the ``v3`` sweep: ``eval_seed`` gives every evaluation of every run
the same sampling randomness (common random numbers across runs, not only within
one), and ``cap_share`` puts a length cap on a fixed share of prompts
(:func:`~scalinglab.studies.rl.tasks.cap_binds`): those whose answer needs the
longest length can never be answered (reward 0 in rollouts and evaluations), a
positive control whose effect on the asymptote is the share it binds.

Design knobs of the redesigned sweep: ``train_pool`` draws the RL prompts from the
first ``train_pool`` problems of the RL set only (a fixed pool reused for several
epochs, Tan et al.'s data-reuse question, against fresh prompts), and
``max_new_tokens`` caps the generation length of rollouts *and* evaluations below
what the longest answers need (a positive control that must lower the asymptote).

Compute is counted with :mod:`scalinglab.cost_model` (never here): rollouts as
generation (``2 N`` per token plus attention over the cache; each prompt is
prefilled once), the no-grad forwards for old/reference log-probabilities likewise,
and the updates as training (``6 N`` per token plus the attention term), over the
real (unpadded) token counts. ``N`` is the non-embedding parameter count.
Evaluation compute is not part of the RL compute. Wall-clock seconds (evaluation
excluded) are recorded next to it, with a per-phase breakdown.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from scalinglab.models.tokenizer import PAD, arithmetic_tokenizer
from scalinglab.models.transformer import Transformer, TransformerConfig
from scalinglab.studies.rl.grpo import GRPOConfig, completion_mask, grpo_update, sample_completions
from scalinglab.studies.rl.measure import pass_rate, rl_step_flops, sync, torch_threads, train_flops
from scalinglab.studies.rl.stopping import PlateauRule, should_stop
from scalinglab.studies.rl.tasks import (
    Problems,
    TaskSpec,
    cap_binds,
    sample_problems,
    score_completions,
)


@dataclass(frozen=True)
class WarmupConfig:
    """Supervised warm-up: same recipe for every model size."""

    lr: float = 1e-3
    batch_size: int = 64
    max_steps: int = 3000
    check_every: int = 20
    check_prompts: int = 128
    check_k: int = 2
    target_lo: float = 0.1
    target_hi: float = 0.3

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RLRunConfig:
    """Everything that determines one run (with the seed)."""

    model: TransformerConfig
    task: TaskSpec = TaskSpec()
    warmup: WarmupConfig = WarmupConfig()
    grpo: GRPOConfig = GRPOConfig()
    n_sft: int = 4000
    n_train: int = 4000
    n_heldout: int = 256
    eval_every: int = 10
    eval_k: int = 4
    data_seed: int = 0
    train_pool: int = 0  # RL prompts from the first train_pool RL problems only (0: all)
    max_new_tokens: int = 0  # generation cap, rollouts and evals (0: the task's longest + EOS)
    plateau: PlateauRule | None = None  # stop early once the pass rate plateaus
    eval_seed: int | None = None  # one evaluation seed for every run (None: from the run seed)
    cap_share: float = 0.0  # share of prompts under a length cap (:func:`.tasks.cap_binds`)
    warmup_fine_from: float = 0.0  # warm-up checks every warmup_fine_every steps from this rate
    warmup_fine_every: int = 0  # (0: every warmup.check_every steps throughout)

    def __post_init__(self) -> None:
        if not 0 <= self.train_pool <= self.n_train:
            raise ValueError(
                f"RLRunConfig: train_pool must be in [0, n_train={self.n_train}], "
                f"got {self.train_pool}"
            )
        if self.max_new_tokens < 0:
            raise ValueError(f"RLRunConfig: max_new_tokens must be >= 0, got {self.max_new_tokens}")
        if not 0.0 <= self.cap_share <= 1.0:
            raise ValueError(f"RLRunConfig: cap_share must be in [0, 1], got {self.cap_share}")

    @property
    def gen_len(self) -> int:
        """Generation length limit (EOS included) of rollouts and evaluations."""
        return self.max_new_tokens or self.task.max_answer_len + 1

    @property
    def pool(self) -> int:
        """Number of distinct RL prompts the run draws from."""
        return self.train_pool or self.n_train

    def to_dict(self) -> dict:
        d = {
            "model": self.model.to_dict(),
            "task": self.task.to_dict(),
            "warmup": self.warmup.to_dict(),
            "grpo": self.grpo.to_dict(),
            **{
                k: getattr(self, k)
                for k in ("n_sft", "n_train", "n_heldout", "eval_every", "eval_k", "data_seed")
            },
        }
        # the redesign's knobs appear only when used (older configs keep their dicts)
        d.update(
            {
                k: getattr(self, k)
                for k in ("train_pool", "max_new_tokens", "cap_share")
                if getattr(self, k)
            }
        )
        if self.eval_seed is not None:
            d["eval_seed"] = self.eval_seed
        if self.plateau is not None:
            d["plateau"] = self.plateau.to_dict()
        return d


@dataclass
class RunResult:
    """What one run measured. Arrays: ``E`` evaluations, ``S`` RL steps."""

    eval_step: np.ndarray  # (E,) RL step of each evaluation (0 = after warm-up)
    eval_flops: np.ndarray  # (E,) cumulative RL FLOPs
    eval_wall_s: np.ndarray  # (E,) cumulative RL wall-clock seconds (evaluation excluded)
    eval_samples: np.ndarray  # (E,) completions sampled so far
    pass_rate: np.ndarray  # (E,) held-out pass rate, mean over eval_k samples
    train_reward: np.ndarray  # (S,) mean reward of each step's batch
    mean_length: np.ndarray  # (S,) mean completion length (EOS included)
    clip_frac: np.ndarray  # (S,)
    zero_adv_frac: np.ndarray  # (S,) share of groups whose rewards were all equal
    step_flops: np.ndarray  # (S,) RL FLOPs of each step
    n_params: int
    n_params_total: int
    warmup_steps: int
    warmup_flops: float
    warmup_wall_s: float
    warmup_check: float  # pass rate at the last warm-up check
    timing_s: dict[str, float] = field(default_factory=dict)
    stopped_early: bool = False  # the plateau rule ended the run before its step budget

    @property
    def r0(self) -> float:
        return float(self.pass_rate[0])


def warm_up(
    model: Transformer,
    sft: Problems,
    check: Problems,
    cfg: WarmupConfig,
    *,
    seed: int,
    fine_from: float = 0.0,
    fine_every: int = 0,
) -> dict:
    """Supervised warm-up until the pass rate on ``check`` reaches ``cfg.target_lo``.

    ``fine_every`` > 0: once a check reaches ``fine_from``, check every ``fine_every``
    steps instead of ``cfg.check_every`` (near take-off the pass rate can jump from 0.1
    to 0.3 within 10 steps, past a band of 0.15-0.25).

    Returns
    -------
    dict
        ``steps``, ``tokens`` (training tokens), ``flops``, ``wall_s``, ``check``
        (last check's pass rate) and ``checks`` (list of (step, rate)).
    """
    dev = model.device
    gen = torch.Generator().manual_seed(int(seed))
    tokens, target = (t.to(dev) for t in sft.sft_tensor())
    inputs, labels = tokens[:, :-1], tokens[:, 1:].masked_fill(~target[:, 1:], -100)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    seq_lens = ((tokens != PAD).sum(dim=1) - 1).cpu().numpy().astype(float)  # real inputs
    order, pos, steps, flops, checks = torch.randperm(len(sft), generator=gen), 0, 0, 0.0, []
    t0 = time.perf_counter()
    rate = float(pass_rate(model, check, k=cfg.check_k, seed=seed + 1).mean())
    checks.append((0, rate))
    while rate < cfg.target_lo and steps < cfg.max_steps:
        model.train()
        every = fine_every if fine_every and rate >= fine_from else cfg.check_every
        for _ in range(every):
            if pos + cfg.batch_size > len(order):
                order, pos = torch.randperm(len(sft), generator=gen), 0
            idx = order[pos : pos + cfg.batch_size].to(dev)
            pos += cfg.batch_size
            logits = model(inputs[idx])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[idx].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            steps += 1
            flops += train_flops(model.cfg, seq_lens[idx.cpu().numpy()])
        rate = float(pass_rate(model, check, k=cfg.check_k, seed=seed + 1).mean())
        checks.append((steps, rate))
    sync(dev)
    return {
        "steps": steps,
        "flops": flops,
        "wall_s": time.perf_counter() - t0,
        "check": rate,
        "checks": checks,
    }


@dataclass
class WarmStart:
    """A warmed-up policy (weights on CPU) and how it got there."""

    state: dict[str, torch.Tensor]
    steps: int
    flops: float
    wall_s: float
    check: float
    checks: list[tuple[int, float]]


def _seeds(seed: int) -> tuple[int, int, int, int]:
    """Independent sub-seeds (init, warm-up, rollouts, evaluation) of a run seed."""
    return tuple(int(x) for x in np.random.SeedSequence(seed).generate_state(4))


def problem_sets(cfg: RLRunConfig) -> dict[str, Problems]:
    """The run's supervised, RL and held-out prompt sets (``sft``, ``train``, ``heldout``),
    drawn from ``cfg.data_seed``: the same sets for every size, seed and variant."""
    return sample_problems(
        cfg.task,
        {"sft": cfg.n_sft, "train": cfg.n_train, "heldout": cfg.n_heldout},
        seed=cfg.data_seed,
    )


def warm_start(
    cfg: RLRunConfig, *, seed: int, device: str = "cpu", num_threads: int | None = None
) -> WarmStart:
    """Initialise the model from ``seed`` and warm it up (:func:`warm_up`).

    Depends only on ``cfg.model``, ``cfg.task``, ``cfg.warmup``, the set sizes,
    ``cfg.data_seed`` and ``seed``, so every GRPO variant of a (size, seed) can
    start from the same warmed-up policy (paired ablations, one warm-up).
    """
    with torch_threads(num_threads):
        s_init, s_warm, _, _ = _seeds(seed)
        sets = problem_sets(cfg)
        check = sets["train"].subset(slice(0, cfg.warmup.check_prompts))
        model = Transformer(cfg.model, seed=s_init, device=torch.device(device))
        w = warm_up(
            model,
            sets["sft"],
            check,
            cfg.warmup,
            seed=s_warm,
            fine_from=cfg.warmup_fine_from,
            fine_every=cfg.warmup_fine_every,
        )
        state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        return WarmStart(state, w["steps"], w["flops"], w["wall_s"], w["check"], w["checks"])


def run_rl(
    cfg: RLRunConfig,
    *,
    seed: int,
    device: str = "cpu",
    num_threads: int | None = None,
    warm: WarmStart | None = None,
    progress: bool = False,
) -> RunResult:
    """Warm up (unless ``warm`` is given) and post-train one policy with GRPO.

    Parameters
    ----------
    cfg
        The run's configuration.
    seed
        Seeds the model's initialisation, the warm-up order, the rollouts and the
        minibatch splits (through ``np.random.SeedSequence``); the problem sets come
        from ``cfg.data_seed``. Same seed, same device, same threads: identical
        results on CPU.
    device
        ``"cpu"`` or ``"cuda"``.
    num_threads
        torch intra-op threads for this run (None: leave as is).
    warm
        A :func:`warm_start` result for the same config and seed (skips the warm-up).
    progress
        Show a tqdm bar over RL steps.
    """
    from tqdm import tqdm

    with torch_threads(num_threads):
        dev = torch.device(device)
        _, _, s_roll, s_eval = _seeds(seed)
        if cfg.eval_seed is not None:
            s_eval = int(cfg.eval_seed)
        if warm is None:
            warm = warm_start(cfg, seed=seed, device=device)
        sets = problem_sets(cfg)
        model = Transformer(cfg.model, seed=0, device=dev)
        model.load_state_dict(warm.state)
        g = cfg.grpo
        ref = copy.deepcopy(model).eval() if g.kl_coef else None
        if ref is not None:
            ref.requires_grad_(False)
        opt = torch.optim.AdamW(model.parameters(), lr=g.lr, weight_decay=g.weight_decay)
        gen = torch.Generator().manual_seed(s_roll)  # prompt order, minibatches (CPU)
        sampler = torch.Generator(device=dev).manual_seed(s_roll + 1)  # rollouts (on device)
        train_prompts = sets["train"].prompt_tensor(arithmetic_tokenizer()).to(dev)
        t_len, max_new, n_pool = cfg.task.prompt_len, cfg.gen_len, cfg.pool
        train_blocked = cap_binds(sets["train"], share=cfg.cap_share)
        held_blocked = cap_binds(sets["heldout"], share=cfg.cap_share)
        timing = dict.fromkeys(("rollout", "reward", "update", "eval"), 0.0)
        evals, per_step = [], []
        order, pos, flops, wall = torch.randperm(n_pool, generator=gen), 0, 0.0, 0.0
        stopped = False

        def evaluate(step: int) -> None:
            t = time.perf_counter()
            rate = float(
                pass_rate(
                    model,
                    sets["heldout"],
                    k=cfg.eval_k,
                    seed=s_eval,
                    max_new_tokens=cfg.max_new_tokens,
                    blocked=held_blocked if cfg.cap_share else None,
                ).mean()
            )
            timing["eval"] += time.perf_counter() - t
            evals.append((step, flops, wall, step * g.prompts_per_step * g.group_size, rate))

        evaluate(0)
        for step in tqdm(range(1, g.steps + 1), disable=not progress, desc="GRPO", unit="step"):
            if pos + g.prompts_per_step > n_pool:
                order, pos = torch.randperm(n_pool, generator=gen), 0
            pidx = order[pos : pos + g.prompts_per_step]
            pos += g.prompts_per_step
            t0 = time.perf_counter()
            comp = sample_completions(
                model,
                train_prompts[pidx.to(dev)],
                repeats=g.group_size,
                max_new_tokens=max_new,
                temperature=g.temperature,
                generator=sampler,
            )
            t1 = time.perf_counter()
            rewards = score_completions(
                comp, sets["train"].subset(pidx.numpy()), repeats=g.group_size
            )
            if cfg.cap_share:  # the capped long answers cannot finish: reward 0
                rewards[np.repeat(train_blocked[pidx.numpy()], g.group_size)] = 0.0
            t2 = time.perf_counter()
            prompts = train_prompts[pidx.to(dev)].repeat_interleave(g.group_size, dim=0)
            stats = grpo_update(model, opt, prompts, comp, rewards, g, generator=gen, ref_model=ref)
            sync(dev)
            t3 = time.perf_counter()
            lengths = completion_mask(comp)[1].cpu().numpy().astype(float)
            step_flops = rl_step_flops(
                cfg.model,
                prompt_len=t_len,
                gen_lengths=lengths,
                n_prompts=g.prompts_per_step,
                extra_forwards=stats["extra_forwards"],
                n_epochs=g.n_epochs,
            )
            flops += step_flops
            timing["rollout"] += t1 - t0
            timing["reward"] += t2 - t1
            timing["update"] += t3 - t2
            wall += t3 - t0
            per_step.append(
                (
                    float(np.mean(rewards)),
                    float(lengths.mean()),
                    stats["clip_frac"],
                    stats["zero_adv_frac"],
                    step_flops,
                )
            )
            if step % cfg.eval_every == 0 or step == g.steps:
                evaluate(step)
                if cfg.plateau is not None and step < g.steps:
                    ev_ = np.array(evals, dtype=float)
                    if should_stop(ev_[:, 0], ev_[:, 1], ev_[:, 4], cfg.plateau):
                        stopped = True
                        break
        ev = np.array(evals, dtype=float).reshape(-1, 5)
        ps = np.array(per_step, dtype=float).reshape(-1, 5)
        return RunResult(
            eval_step=ev[:, 0].astype(int),
            eval_flops=ev[:, 1],
            eval_wall_s=ev[:, 2],
            eval_samples=ev[:, 3].astype(int),
            pass_rate=ev[:, 4],
            train_reward=ps[:, 0],
            mean_length=ps[:, 1],
            clip_frac=ps[:, 2],
            zero_adv_frac=ps[:, 3],
            step_flops=ps[:, 4],
            n_params=model.n_params(),
            n_params_total=model.n_params(non_embedding=False),
            warmup_steps=warm.steps,
            warmup_flops=warm.flops,
            warmup_wall_s=warm.wall_s,
            warmup_check=warm.check,
            timing_s=timing,
            stopped_early=stopped,
        )
