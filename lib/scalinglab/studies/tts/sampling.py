"""The sample dataset: n answers per held-out prompt per model size, cached and resumable.

For every size of the RL class (:func:`~scalinglab.studies.tts.policies.rl_class`),
its trained policy (:func:`~scalinglab.studies.tts.policies.load_or_train`) answers
each held-out prompt of the RL study ``n_samples`` times through the shared KV-cache
sampler (:func:`~scalinglab.studies.rl.grpo.sample_completions`: each prompt is
prefilled once and its cache repeated; nucleus sampling with ``top_p < 1`` runs the
same loop with a top-p filter, :func:`sample_nucleus`). The unit of work is one
(size, block of prompts), cached on its own by :func:`scalinglab.sweeps.cached_sweep`,
so a killed run resumes block by block; the whole is one xarray Dataset with
provenance in ``data/test_time_scaling/samples-<class>-<hash>.nc``:

- ``answer`` (size, prompt, sample) int64: the completion's code, ``int("1" + text)``
  for a completion of digits ended by EOS (the leading 1 keeps leading zeros
  distinct), :data:`~scalinglab.stats.passk.INVALID` otherwise;
- ``correct`` (size, prompt, sample) int8: the exact checker's verdict;
- ``tokens`` (size, prompt, sample) int8: tokens generated, EOS included.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch
import xarray as xr

from scalinglab.models.tokenizer import EOS, PAD
from scalinglab.models.transformer import Transformer
from scalinglab.provenance import config_hash
from scalinglab.stats.passk import INVALID
from scalinglab.studies.rl.grpo import sample_completions
from scalinglab.studies.rl.measure import torch_threads
from scalinglab.studies.rl.tasks import Problems, sample_problems
from scalinglab.studies.tts.policies import (
    STUDY,
    load_or_train,
    load_policy_set,
    policy_config,
    rl_class,
)
from scalinglab.sweeps import cached_sweep, map_runs

#: Bump when the samples change for the same config.
ENGINE_VERSION = "1"
_DIGIT0 = 3  # id of "0" in the arithmetic tokenizer (after PAD, BOS, EOS)


@dataclass(frozen=True)
class TTSConfig:
    """The sampling experiment of a compute class.

    Attributes
    ----------
    compute_class
        ``tiny``, ``small`` or ``medium`` (see :func:`tts_config`).
    sizes
        Names of the RL class's sizes to sample (empty: all of them).
    n_prompts
        Held-out prompts (the first ones of the RL study's held-out set).
    n_samples
        Samples per prompt ``n`` (the study uses ``k_max = n / 4``).
    temperature, top_p
        Sampling temperature and nucleus mass (1: plain sampling).
    policy_seed
        The RL seed the policies are trained with.
    seed
        Seeds the sampling (one generator per (size, block)).
    prompts_per_run
        Prompts per unit of work (a block).
    batch_sequences
        Sequences decoded together (prompts x samples per forward).
    """

    compute_class: str = "small"
    sizes: tuple[str, ...] = ()
    n_prompts: int = 256
    n_samples: int = 1024
    temperature: float = 1.0
    top_p: float = 1.0
    policy_seed: int = 0
    seed: int = 0
    prompts_per_run: int = 32
    batch_sequences: int = 8192

    def __post_init__(self) -> None:
        if self.n_prompts < 1 or self.n_samples < 1:
            raise ValueError("n_prompts and n_samples must be >= 1")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        known = [s.name for s in rl_class(self.compute_class).sizes]
        if any(s not in known for s in self.sizes):
            raise ValueError(f"sizes {list(self.sizes)} not all in the RL class's {known}")

    @property
    def size_names(self) -> list[str]:
        """The sampled sizes, smallest first."""
        known = [s.name for s in rl_class(self.compute_class).sizes]
        return [s for s in known if not self.sizes or s in self.sizes]

    @property
    def k_max(self) -> int:
        return self.n_samples // 4

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("batch_sequences")  # throughput only
        sweep = rl_class(self.compute_class)
        d["sizes"] = self.size_names
        d["policies"] = {
            s: config_hash(policy_config(sweep, s, seed=self.policy_seed)) for s in self.size_names
        }
        d["engine_version"] = ENGINE_VERSION
        return d


def tts_config(compute_class: str = "small", **overrides) -> TTSConfig:
    """The experiment of a class.

    - ``tiny``: the RL tiny class's 3 sizes at their matched recipe, 32 prompts x 64
      samples, k_max 16 (a minute, mostly training the policies): tests and the smoke
      run.
    - ``small`` (default report): the RL small class's sizes s and m (25k and 148k
      non-embedding parameters), 128 held-out prompts x 1024 samples, k_max 256.
    - ``medium``: all three sizes s, m, l (32x), 256 prompts x 1024 samples.

    ``small`` and ``medium`` share the policies (:mod:`.policies`, on 3-digit x 1-digit
    multiplication; on the shared 2-core machine s, m and l trained in about 3, 4 and 8
    minutes of wall time in three niced processes); ``small``'s samples took about 3
    minutes.
    """
    if compute_class.startswith("tiny"):
        cfg = TTSConfig(compute_class=compute_class, n_prompts=32, n_samples=64, prompts_per_run=16)
    elif compute_class == "small":
        cfg = TTSConfig(compute_class="small", sizes=("s", "m"), n_prompts=128)
    elif compute_class == "medium":
        cfg = TTSConfig(compute_class="medium", n_prompts=256)
    else:
        raise ValueError(f"unknown compute_class {compute_class!r}: tiny, small, medium")
    return dataclasses.replace(cfg, **overrides) if overrides else cfg


def heldout(cfg: TTSConfig) -> Problems:
    """The first ``n_prompts`` held-out problems of the RL study (never trained on)."""
    sweep = rl_class(cfg.compute_class)
    if cfg.n_prompts > sweep.n_heldout:
        raise ValueError(
            f"n_prompts={cfg.n_prompts} > the RL study's {sweep.n_heldout} held-out prompts"
        )
    sets = sample_problems(
        sweep.task,
        {"sft": sweep.n_sft, "train": sweep.n_train, "heldout": sweep.n_heldout},
        seed=sweep.data_seed,
    )
    return sets["heldout"].subset(slice(0, cfg.n_prompts))


@torch.inference_mode()
def sample_nucleus(
    model: Transformer,
    prompts: torch.Tensor,
    *,
    max_new_tokens: int,
    repeats: int,
    temperature: float,
    top_p: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """Like :func:`~scalinglab.studies.rl.grpo.sample_completions`, with top-p filtering.

    Returns (P repeats, L) ids, PAD after each row's EOS.
    """
    if top_p >= 1.0 or temperature == 0:
        return sample_completions(
            model,
            prompts,
            max_new_tokens=max_new_tokens,
            repeats=repeats,
            temperature=temperature,
            generator=generator,
        )
    model.eval()
    p, t = prompts.shape
    cache = model.new_cache(p, max_len=t + max_new_tokens)
    logits = model(prompts, cache=cache)[:, -1]
    cache = cache.repeat_interleave(repeats)
    logits = logits.repeat_interleave(repeats, dim=0)
    done = torch.zeros(p * repeats, dtype=torch.bool)
    out = []
    for step in range(max_new_tokens):
        probs = torch.softmax(logits.float() / temperature, dim=-1)
        sp, si = probs.sort(dim=-1, descending=True)
        drop = sp.cumsum(dim=-1) - sp > top_p  # keep the smallest set with mass >= top_p
        sp = sp.masked_fill(drop, 0.0)
        pick = torch.multinomial(sp, 1, generator=generator)
        nxt = si.gather(1, pick).squeeze(1).masked_fill(done, PAD)
        out.append(nxt)
        done = done | (nxt == EOS)
        if step == max_new_tokens - 1 or bool(done.all()):
            break
        logits = model(nxt[:, None], cache=cache)[:, -1]
    return torch.stack(out, dim=1)


def answer_codes(tokens: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Codes and lengths of generated rows.

    Parameters
    ----------
    tokens
        (B, L) generated ids.

    Returns
    -------
    codes : (B,) int64, ``int("1" + digits)`` or :data:`INVALID`
    lengths : (B,) int64, tokens generated (EOS included; L when no EOS)
    """
    t = tokens.cpu().numpy().astype(np.int64)
    b, length = t.shape
    is_eos = t == EOS
    has = is_eos.any(axis=1)
    first = np.where(has, is_eos.argmax(axis=1), length)
    pos = np.arange(length)[None, :]
    body = pos < first[:, None]
    digit = (t >= _DIGIT0) & (t < _DIGIT0 + 10)
    valid = has & (first > 0) & np.all(digit | ~body, axis=1)
    code = np.ones(b, dtype=np.int64)
    for j in range(length):
        take = body[:, j]
        code = np.where(take, code * 10 + (t[:, j] - _DIGIT0), code)
    lengths = np.where(has, first + 1, length)
    return np.where(valid, code, INVALID), lengths


def truth_codes(problems: Problems) -> np.ndarray:
    """(P,) the code of each problem's exact answer."""
    return np.array([int("1" + a) for a in problems.answers], dtype=np.int64)


def _run_block(item: tuple[TTSConfig, str, int]) -> dict:
    """Sample one (size, block of prompts): answers, correctness, lengths, wall seconds."""
    cfg, size, block = item
    with torch_threads(1):
        sweep = rl_class(cfg.compute_class)
        model, _ = load_or_train(sweep, size, seed=cfg.policy_seed)
        probs = heldout(cfg)
        lo, hi = block * cfg.prompts_per_run, min((block + 1) * cfg.prompts_per_run, cfg.n_prompts)
        sub = probs.subset(slice(lo, hi))
        ids = sub.prompt_tensor()
        s_index = [s.name for s in sweep.sizes].index(size)  # a size's stream ignores the others
        seed = int(np.random.SeedSequence([cfg.seed, s_index, block]).generate_state(1)[0])
        gen = torch.Generator().manual_seed(seed)
        max_new = sweep.task.max_answer_len + 1
        n, batch = cfg.n_samples, cfg.batch_sequences
        chunks = (
            [(s, min(s + batch // n, len(sub)), n) for s in range(0, len(sub), batch // n)]
            if n <= batch
            # several prompts per pass, or one prompt in several
            else [
                (s, s + 1, min(batch, n - r)) for s in range(len(sub)) for r in range(0, n, batch)
            ]
        )
        codes, lens = [], []
        t0 = time.perf_counter()
        for a, b, reps in chunks:
            c, ln = answer_codes(
                sample_nucleus(
                    model,
                    ids[a:b],
                    max_new_tokens=max_new,
                    repeats=reps,
                    temperature=cfg.temperature,
                    top_p=cfg.top_p,
                    generator=gen,
                )
            )
            codes.append(c)
            lens.append(ln)
        wall = time.perf_counter() - t0
    n = cfg.n_samples
    codes_ = np.concatenate(codes).reshape(hi - lo, n)
    truth = truth_codes(sub)[:, None]
    return {
        "answer": codes_.astype(np.int32),
        "correct": (codes_ == truth).astype(np.int8),
        "tokens": np.concatenate(lens).reshape(hi - lo, n).astype(np.int8),
        "wall_s": wall,
    }


def execute(cfg: TTSConfig, *, scheduler: str = "", runs=None, progress: bool = True) -> xr.Dataset:
    """Train (or load) the policies, then sample every (size, block); one Dataset."""
    sweep = rl_class(cfg.compute_class)
    sizes = cfg.size_names
    # train missing policies first, one at a time, and check their order on training prompts
    metas, order = load_policy_set(sweep, sizes, seed=cfg.policy_seed, progress=progress)
    n_blocks = -(-cfg.n_prompts // cfg.prompts_per_run)
    items = [(cfg, s, b) for s in sizes for b in range(n_blocks)]
    res, fails = map_runs(
        _run_block,
        items,
        keys=[[s, b] for _, s, b in items],
        runs=runs,
        scheduler=scheduler,
        desc="sampling blocks",
        progress=progress,
    )
    if fails:
        raise RuntimeError(f"{len(fails)} sampling block(s) failed: {fails[0].error}")
    probs = heldout(cfg)

    def stack(var: str) -> np.ndarray:
        return np.stack(
            [
                np.concatenate([res[i][var] for i, it in enumerate(items) if it[1] == s])
                for s in sizes
            ]
        )

    shapes = {s.name: sweep.run_config(s, "baseline").model for s in sweep.sizes if s.name in sizes}
    ds = xr.Dataset(
        {
            "answer": (("size", "prompt", "sample"), stack("answer")),
            "correct": (("size", "prompt", "sample"), stack("correct")),
            "tokens": (("size", "prompt", "sample"), stack("tokens")),
            "wall_s": (
                "size",
                np.array(
                    [
                        sum(r["wall_s"] for r, it in zip(res, items, strict=True) if it[1] == s)
                        for s in sizes
                    ]
                ),
            ),
        },
        coords={
            "size": sizes,
            "prompt": np.arange(cfg.n_prompts),
            "prompt_text": ("prompt", np.array(probs.prompts, dtype=str)),
            "truth": ("prompt", truth_codes(probs)),
            "n_params": ("size", [shapes[s].n_params() for s in sizes]),
            "n_layer": ("size", [shapes[s].n_layer for s in sizes]),
            "n_head": ("size", [shapes[s].n_head for s in sizes]),
            "d_model": ("size", [shapes[s].d_model for s in sizes]),
            "policy_hash": ("size", [metas[s]["config_hash"] for s in sizes]),
            "policy_file": ("size", [metas[s]["file"] for s in sizes]),
        },
    )
    for var in ("answer", "correct", "tokens"):  # compressed: most rows repeat few answers
        ds[var].encoding.update(
            {"zlib": True, "complevel": 4, "chunksizes": (1, min(64, cfg.n_prompts), cfg.n_samples)}
        )
    ds.attrs.update(
        {
            "study": STUDY,
            "compute_class": cfg.compute_class,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "prompt_len": sweep.task.prompt_len,
            "k_max": cfg.k_max,
            "policy_order": order.message(),
            "policy_ordered": int(order.ordered),
        }
    )
    return ds


def run_samples(
    cfg: TTSConfig | str = "small",
    *,
    scheduler: str = "",
    rerun: bool = False,
    progress: bool = True,
) -> xr.Dataset:
    """The sample Dataset of ``cfg`` from ``data/``, or computed (resumably) and saved."""
    if isinstance(cfg, str):
        cfg = tts_config(cfg)
    return cached_sweep(
        STUDY,
        f"samples-{cfg.compute_class}",
        cfg.to_dict(),
        lambda runs: execute(cfg, scheduler=scheduler, runs=runs, progress=progress),
        rerun=rerun,
    )
