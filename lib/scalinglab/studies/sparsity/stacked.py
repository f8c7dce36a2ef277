"""Several seeds of one run trained as one stacked model (``torch.func.vmap``), for a GPU.

The study's models are tiny (25-200k parameters): on a GPU one run is bound by kernel
launches, not arithmetic, so training K seeds costs about what one does when their
parameters are stacked along a leading axis and the forward pass is vmapped over it
(:func:`torch.func.stack_module_state`, :func:`torch.func.functional_call`). Each
seed keeps everything :func:`scalinglab.studies.sparsity.sweep.train_run` gives it:

- its initialisation (``Transformer(..., seed=seed)``) and its batch order
  (:func:`~scalinglab.studies.sparsity.sweep.data_seed`, the uniform sampler of
  :func:`scalinglab.training.pretrain.run_pretrain`, one generator per seed);
- the recipe of :func:`~scalinglab.studies.sparsity.sweep.pretrain_config`: AdamW with
  weight decay on matrices only (elementwise, so one optimizer over the stack is K
  independent ones), the same warm-up then constant learning rate, and its gradients
  clipped to ``grad_clip`` by its *own* norm;
- the same measurements at the same checkpoints
  (:func:`~scalinglab.studies.sparsity.sweep.measure_checkpoint`, on the seed's model
  unstacked into an ordinary :class:`~scalinglab.models.transformer.Transformer`).

The loss summed over seeds has, for each seed's parameters, that seed's gradient, so the
runs are mathematically those of :func:`train_run`; numerically they differ by float
rounding (other kernels, other summation order), as any run on another device does. Each
seed's ``train_s`` is the stacked run's training time (shared by its K seeds).

A run longer than one call on a lent machine stops at ``stop_at`` between two steps and
saves its whole state (stacked parameters, AdamW moments, each seed's data generator, the
rows measured so far, the step) to ``state_path``; the next call resumes from it. On the
CPU a resumed run is the uninterrupted one bit for bit (tested); on a GPU the steps just
after a resume run eagerly before the graph is captured again, so they differ by float
rounding, as the graph and eager steps do.
"""

from __future__ import annotations

import copy
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from scalinglab import atomic
from scalinglab.models.corpus import build_corpus, eval_windows, sample_batch
from scalinglab.models.transformer import Transformer
from scalinglab.studies.sparsity.config import ModelSpec, SparsitySweepConfig
from scalinglab.studies.sparsity.sweep import (
    RunResult,
    data_seed,
    measure_checkpoint,
    pretrain_config,
    run_result,
)
from scalinglab.training.optimizers import resolve_hparams
from scalinglab.training.pretrain import lr_factor

#: Every attention kernel torch may choose (the default outside CUDA).
_ALL_SDPA = [
    SDPBackend.MATH,
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.CUDNN_ATTENTION,
]


class Stopped(Exception):
    """A stacked run stopped at its ``stop_at`` time; its state is in ``path``."""

    def __init__(self, step: int, steps: int, path: Path) -> None:
        super().__init__(f"stopped at step {step} of {steps}; state saved to {path}")
        self.step, self.steps, self.path = step, steps, path


def train_stacked(
    cfg: SparsitySweepConfig,
    spec: ModelSpec,
    activation: str,
    seeds: tuple[int, ...],
    *,
    progress: bool = False,
    cuda_graph: bool = True,
    state_path: Path | None = None,
    stop_at: float | None = None,
) -> dict[int, RunResult | str]:
    """Train ``spec`` with ``activation`` for every seed of ``seeds`` at once on ``cfg.device``.

    Parameters
    ----------
    cfg, spec, activation
        As for :func:`~scalinglab.studies.sparsity.sweep.train_run` (the sampler must be
        the default uniform one, as the sweep's is).
    seeds
        K distinct seeds, trained together.
    progress
        Print each checkpoint's loss and ratio per seed to stderr.
    cuda_graph
        On a CUDA device, capture the training step (forward, backward, per-seed
        clipping, AdamW with ``capturable=True``) as a CUDA graph after
        ``_EAGER_STEPS`` eager steps and replay it (the step's ~1,000 kernel launches
        become one); when the capture fails it says so and trains eagerly.
    state_path
        Where the run's state is saved when it stops at ``stop_at``, and resumed from
        when the file exists (it must be this run's: same config, model, activation and
        seeds, else ``ValueError`` names the file).
    stop_at
        A ``time.time()`` after which the run saves its state to ``state_path`` and
        raises :class:`Stopped` (checked between steps, after at least one step).

    Returns
    -------
    dict
        ``{seed: RunResult}``, or ``{seed: error message}`` for a seed whose training
        loss turned non-finite (the others go on; its parameters do not touch theirs).
    """
    if len(set(seeds)) != len(seeds) or not seeds:
        raise ValueError(f"seeds must be distinct and non-empty: {seeds}")
    if stop_at is not None and state_path is None:
        raise ValueError("stop_at needs a state_path to save the run's state to")
    t_start = time.time()
    pc = pretrain_config(cfg, spec, activation)
    if pc.sampler != "uniform":
        raise ValueError(f"train_stacked draws uniform batches; the recipe asks {pc.sampler!r}")
    device = cfg.device
    corpus = build_corpus(cfg.corpus)
    windows = eval_windows(corpus.heldout, cfg.eval_tokens, cfg.seq_len)
    ckpts = set(cfg.checkpoint_steps())
    last_ckpt = max(ckpts)
    hp = resolve_hparams("adamw", pc.hparams)
    models = [Transformer(pc.model, seed=s, device=device) for s in seeds]
    params, buffers = stack_module_state(models)  # leaves of shape (K, ...)
    tied = _tied_names(models[0])  # e.g. lm_head.weight -> tok_emb.weight
    base = copy.deepcopy(models[0]).to("meta")  # any parameter not substituted fails loudly
    del models

    # vmap over the fused CUDA attention kernels fails in their backward ("LSE is not
    # correctly aligned"): the math kernel is exact and, at these widths, no slower
    backends = [SDPBackend.MATH] if str(device).startswith("cuda") else _ALL_SDPA

    def forward(p: dict, b: dict, x: torch.Tensor) -> torch.Tensor:
        full = {**p, **{alias: p[name] for alias, name in tied.items()}}
        with warnings.catch_warnings(), sdpa_kernel(backends):
            # CPU attention has no batching rule: known, slower
            warnings.filterwarnings("ignore", message="There is a performance drop")
            return functional_call(base, (full, b), (x,), tie_weights=False)

    batched = vmap(forward)
    mats = [p for p in params.values() if p.ndim >= 3]  # matrices of each seed
    vecs = [p for p in params.values() if p.ndim < 3]
    groups = [{"params": mats, "weight_decay": float(hp["weight_decay"])}]
    if vecs:
        groups.append({"params": vecs, "weight_decay": 0.0})
    lr = float(hp["lr"])
    use_graph = cuda_graph and str(device).startswith("cuda")
    opt = torch.optim.AdamW(
        groups,
        lr=torch.tensor(lr, device=device) if use_graph else lr,  # a tensor: graph-safe
        betas=(hp["beta1"], hp["beta2"]),
        eps=hp["eps"],
        capturable=use_graph,
    )
    gens = [torch.Generator().manual_seed(data_seed(s)) for s in seeds]
    k, steps = len(seeds), cfg.steps
    warm = round(float(hp["warmup"]) * steps)
    clip = float(hp["grad_clip"])
    rows: dict[int, list[dict]] = {i: [] for i in range(k)}
    baselines: dict[int, dict[str, float]] = {i: {} for i in range(k)}
    failed: dict[int, str] = {}
    ck_acc, ck_n = np.zeros(k), 0
    train_s, measure_s = 0.0, np.zeros(k)
    x_in = torch.zeros((k, cfg.batch_size, cfg.seq_len), dtype=torch.long, device=device)
    y_in = torch.zeros_like(x_in)

    def train_step() -> torch.Tensor:
        logits = batched(params, buffers, x_in)  # (K, B, T, V)
        per_tok = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y_in.reshape(-1), reduction="none"
        )
        losses = per_tok.view(k, -1).mean(1)
        losses.sum().backward()
        if clip > 0:
            _clip_per_seed(list(params.values()), clip)
        opt.step()
        return losses.detach()

    identity = repr((cfg.to_dict(), spec, activation, tuple(seeds)))
    first = 0
    if state_path is not None and state_path.exists():
        try:
            saved = torch.load(state_path, map_location="cpu", weights_only=False)
        except Exception as err:  # a truncated or foreign file: say which, keep it
            raise ValueError(
                f"{state_path} is not a readable saved state ({type(err).__name__}: {err}); "
                f"remove it to train {spec.name}/{activation} {seeds} afresh"
            ) from err
        if saved["identity"] != identity:
            raise ValueError(
                f"{state_path} holds the state of another run (config, model, activation or "
                f"seeds differ); remove it to train {spec.name}/{activation} {seeds} afresh"
            )
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(saved["params"][name])
        own = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
        opt.load_state_dict(saved["opt"])
        for g, settings in zip(opt.param_groups, own, strict=True):
            g.update(settings)  # this call's lr tensor (graph-safe, on device) and capturable
        for g, st in zip(gens, saved["gens"], strict=True):
            g.set_state(st)
        first, rows, baselines, failed = (
            saved["step"],
            saved["rows"],
            saved["baselines"],
            saved["failed"],
        )
        ck_acc, ck_n, train_s, measure_s = (
            saved["ck_acc"],
            saved["ck_n"],
            saved["train_s"],
            saved["measure_s"],
        )
        if progress:
            print(
                f"{spec.name}/{activation}: resumed at step {first} from {state_path}",
                file=sys.stderr,
                flush=True,
            )

    def save_state(step: int) -> None:
        assert state_path is not None
        state = {
            "identity": identity,
            "step": step,
            "params": {n: p.detach().cpu() for n, p in params.items()},
            "opt": opt.state_dict(),
            "gens": [g.get_state() for g in gens],
            "rows": rows,
            "baselines": baselines,
            "failed": failed,
            "ck_acc": ck_acc,
            "ck_n": ck_n,
            "train_s": train_s,
            "measure_s": measure_s,
        }
        with atomic.replacing(state_path, suffix=".pt") as tmp:  # a failed write keeps the old
            torch.save(state, tmp)

    graph: torch.cuda.CUDAGraph | None = None
    graph_losses = torch.zeros(k)
    side = torch.cuda.Stream() if use_graph else None
    t_loop = time.time()
    if progress:
        print(
            f"{spec.name}/{activation}: set up in {t_loop - t_start:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    for step in range(first, steps):
        if stop_at is not None and step > first and time.time() >= stop_at:
            assert state_path is not None
            save_state(step)
            raise Stopped(step, steps, state_path)
        xs, ys = zip(
            *(sample_batch(corpus.train, cfg.batch_size, cfg.seq_len, generator=g) for g in gens),
            strict=True,
        )
        x_in.copy_(torch.stack(xs))
        y_in.copy_(torch.stack(ys))
        t0 = time.perf_counter()
        factor = lr_factor(
            step,
            steps,
            warmup_steps=warm,
            schedule=pc.schedule,
            min_lr_ratio=float(hp["min_lr_ratio"]),
            decay_fraction=pc.decay_fraction,
        )
        for g in opt.param_groups:
            if isinstance(g["lr"], torch.Tensor):
                g["lr"].fill_(lr * factor)
            else:
                g["lr"] = lr * factor
        if use_graph and graph is None and step - first >= _EAGER_STEPS:
            graph, graph_losses = _capture(train_step, opt)
            if graph is None:  # capture failed: go on eagerly (still correct)
                use_graph = False
        if graph is not None:
            graph.replay()
            losses = graph_losses
        elif side is not None and use_graph:  # warm-up before capture, on a side stream
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                opt.zero_grad(set_to_none=True)
                losses = train_step()
            torch.cuda.current_stream().wait_stream(side)
        else:
            opt.zero_grad()
            losses = train_step()
        lv = losses.cpu().numpy()  # synchronises, so the timing is honest
        train_s += time.perf_counter() - t0
        for bad in np.flatnonzero(~np.isfinite(lv)).tolist():
            failed.setdefault(bad, f"training loss not finite at step {step + 1}")
        ck_acc, ck_n = ck_acc + lv, ck_n + 1
        if step + 1 in ckpts:
            for i in range(k):
                if i in failed:
                    continue
                t1 = time.perf_counter()
                model = _unstack(pc.model, params, i, seed=seeds[i], device=device)
                row, base_i = measure_checkpoint(cfg, model, windows, last=step + 1 == last_ckpt)
                rows[i].append({"step": step + 1, "train_loss": ck_acc[i] / ck_n, **row})
                baselines[i] = base_i or baselines[i]
                measure_s[i] += time.perf_counter() - t1
                if progress:
                    wall = (time.time() - t_loop) / (step + 1 - first)  # per step, all in
                    print(
                        f"{spec.name}/{activation}/seed{seeds[i]} step {step + 1}/{steps}: "
                        f"loss {row['loss']:.3f} ratio {row['ratio']:.3f} "
                        f"(training {train_s / (step + 1) * 1e3:.1f} ms/step, "
                        f"wall {wall * 1e3:.1f} ms/step, "
                        f"ETA {(steps - step - 1) * wall:.0f} s, {time.strftime('%H:%M:%S')})",
                        file=sys.stderr,
                        flush=True,
                    )
            ck_acc, ck_n = np.zeros(k), 0
    out: dict[int, RunResult | str] = {}
    for i, s in enumerate(seeds):
        if i in failed:
            out[s] = f"{spec.name}/{activation}/seed{s}: {failed[i]}"
        else:
            out[s] = run_result(
                rows[i], baselines[i], train_s=train_s, measure_s=float(measure_s[i])
            )
    return out


#: Eager training steps (on a side stream) before the step is captured as a CUDA graph.
_EAGER_STEPS = 3


def _capture(train_step, opt) -> tuple[torch.cuda.CUDAGraph | None, torch.Tensor]:
    """Capture ``train_step`` as a CUDA graph (nothing runs); ``(None, _)`` if that fails.

    Gradients are set to None first, so the captured backward assigns them (each replay
    overwrites them instead of accumulating).
    """
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            losses = train_step()
    except Exception as err:  # noqa: BLE001 - any capture failure falls back to eager
        print(f"CUDA graph capture failed, training eagerly: {err}", file=sys.stderr, flush=True)
        opt.zero_grad(set_to_none=True)
        return None, torch.zeros(0)
    return graph, losses


def _tied_names(model: torch.nn.Module) -> dict[str, str]:
    """``{alias: name}`` for every parameter registered under a second name."""
    first: dict[int, str] = {}
    out = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in first:
            out[name] = first[id(p)]
        else:
            first[id(p)] = name
    return out


def _clip_per_seed(stacked: list[torch.Tensor], max_norm: float) -> None:
    """``clip_grad_norm_`` for each seed's slice of the stacked gradients (its own norm)."""
    grads = [p.grad for p in stacked if p.grad is not None]
    if not grads:
        return
    k = grads[0].shape[0]
    sq = torch.stack([g.reshape(k, -1).pow(2).sum(1) for g in grads]).sum(0)
    coef = torch.clamp(max_norm / (sq.sqrt() + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.view(k, *([1] * (g.ndim - 1))))


def _unstack(model_cfg, params: dict, i: int, *, seed: int, device: str) -> Transformer:
    """Seed ``i``'s model as an ordinary Transformer (tied weights follow ``tok_emb``)."""
    model = Transformer(model_cfg, seed=seed, device=device)
    state = {name: p[i].detach() for name, p in params.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    own = dict(model.named_parameters())  # tied parameters appear once
    if unexpected or any(m in own for m in missing):
        raise RuntimeError(f"unstacking: missing {missing}, unexpected {unexpected}")
    model.eval()
    return model


__all__ = ["Stopped", "train_stacked"]
