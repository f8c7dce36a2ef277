"""A tiled GEMM in Triton, for machines with a CUDA GPU (optional).

Import this module only where :func:`scalinglab.kernels.triton_available` is
True: it imports ``torch`` and ``triton`` at the top and CPU-only installs have
no Triton. The kernel is the classic blocked matmul: each program computes one
``BLOCK_M x BLOCK_N`` tile of ``C``, walking ``K`` in steps of ``BLOCK_K`` with
``tl.dot`` on tiles loaded from global memory; programs are grouped along ``M``
(``GROUP_M``) so neighbouring programs reuse the same ``B`` columns from L2.
Block sizes are parameters, as in the CPU kernel, so the same tile sweep runs on
a GPU.

Shapes: ``a`` is ``(m, k)``, ``b`` is ``(k, n)``, both CUDA tensors; the result
is ``(m, n)`` float32 (accumulated in float32; TF32 or bf16 inputs use tensor cores).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    ALLOW_TF32: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k0 * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, allow_tf32=ALLOW_TF32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def gemm_triton(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    block_m: int = 64,
    block_n: int = 64,
    block_k: int = 32,
    group_m: int = 8,
    allow_tf32: bool = False,
) -> torch.Tensor:
    """``a @ b`` on the GPU by the Triton kernel, with block sizes as parameters.

    Parameters
    ----------
    a, b
        CUDA tensors ``(m, k)`` and ``(k, n)``.
    block_m, block_n, block_k
        Tile of ``C`` per program and the ``K`` step (powers of two, ``>= 16``).
    group_m
        Programs grouped along ``M`` for L2 reuse.
    allow_tf32
        Let float32 inputs use TF32 tensor cores (faster, ~1e-3 relative error).

    Returns
    -------
    torch.Tensor
        ``(m, n)`` float32 on the same device.
    """
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"need (m, k) @ (k, n), got {tuple(a.shape)} and {tuple(b.shape)}")
    if not (a.is_cuda and b.is_cuda):
        raise ValueError("gemm_triton needs CUDA tensors")
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    _matmul_kernel[grid](
        a,
        b,
        c,
        m,
        n,
        k,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_K=block_k,
        GROUP_M=group_m,
        ALLOW_TF32=allow_tf32,
    )
    return c
