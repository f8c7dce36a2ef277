"""The GEMM micro-kernel: an ``MR x NR`` block of C kept in vector registers.

``micro_kernel(ap, ia, bp, jb, kc, cb, co, ldc)`` adds ``A_blk @ B_blk`` to an
``MR x NR`` block of a row-major buffer ``cb`` (row stride ``ldc``, block at
``co``), where

- ``A_blk`` is ``MR x kc``, packed *column by column* at ``ap[ia:]``: element
  ``(i, p)`` is ``ap[ia + p * MR + i]``;
- ``B_blk`` is ``kc x NR``, packed *row by row* at ``bp[jb:]``: element ``(p, j)``
  is ``bp[jb + p * NR + j]``.

Each step ``p`` is an outer product, as in BLIS and OpenBLAS: load ``NR / W``
vectors of B, broadcast each of the ``MR`` elements of A and issue ``MR * NR / W``
fused multiply-adds into accumulators that stay in registers for all ``kc`` steps.
No horizontal sums, and two FMAs per load or better. On AVX-512 (``W = 16``
floats) the block is ``12 x 32``: 24 accumulators, 2 loads of B and 1 broadcast
register, 27 of the 32 vector registers.

Hand-written because numba offers no way to say "keep these vectors in registers":
a loop over scalar accumulators gets vectorised along ``k`` instead (a dot
product per element of C, whose 16 horizontal sums per block capped the previous
kernel at about half of BLAS), and numba disables LLVM's SLP vectoriser by
default. So this is a numba ``@intrinsic`` that writes the loop as LLVM IR with
``<W x float>`` vectors and ``llvm.fma``; LLVM allocates the registers. The vector
width follows the host CPU (:data:`VECTOR_WIDTH`); on a CPU without the width the
IR is still correct (LLVM splits the vectors), only slower. The enclosing function
must ask for 512-bit registers (:func:`scalinglab.kernels.simd.prefer_wide_vectors`),
or LLVM splits ``<16 x float>`` into two 256-bit halves.

The caller guarantees a full block: the packed panels are zero-padded to ``MR``
rows and ``NR`` columns and ``cb`` is a padded per-tile buffer.
"""

from __future__ import annotations

import os

from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _host_vector_width() -> int:
    """Floats per vector register on this CPU: 16 (AVX-512), 8 (AVX/AVX2) or 4.

    ``SCALINGLAB_VECTOR_WIDTH`` (4, 8 or 16) overrides it, e.g. to test the narrower
    kernels on a wider CPU; give such a process its own ``NUMBA_CACHE_DIR``, since
    numba's disk cache keys compiled kernels by CPU, not by this setting.
    """
    forced = os.environ.get("SCALINGLAB_VECTOR_WIDTH", "")
    if forced:
        if forced not in ("4", "8", "16"):
            raise ValueError(f"SCALINGLAB_VECTOR_WIDTH must be 4, 8 or 16, got {forced!r}")
        return int(forced)
    try:
        features = llvm_binding.get_host_cpu_features()
    except Exception:  # pragma: no cover - exotic hosts
        return 4
    if features.get("avx512f", False):
        return 16
    if features.get("avx", False) or features.get("avx2", False):
        return 8
    return 4  # pragma: no cover - SSE or NEON


#: Floats per vector register the micro-kernel uses.
VECTOR_WIDTH: int = _host_vector_width()
#: Vectors of B per step (the block is ``NR = VECTORS_N * VECTOR_WIDTH`` columns wide).
VECTORS_N = 2
#: Rows of the register block: as many as leave room for B and the broadcast
#: (32 vector registers with AVX-512, 16 with AVX2; 4-wide vectors: SSE or NEON).
MR: int = {16: 12, 8: 6, 4: 4}[VECTOR_WIDTH]
#: Columns of the register block.
NR: int = VECTORS_N * VECTOR_WIDTH


def _const(value: int) -> ir.Constant:
    return ir.Constant(ir.IntType(64), value)


@intrinsic
def micro_kernel(typingctx, ap, ia, bp, jb, kc, cb, co, ldc):
    """``cb[co + i * ldc + j] += sum_p A_blk[i, p] * B_blk[p, j]`` for the full block.

    Parameters (all inside a jitted function)
    -----------------------------------------
    ap, bp
        1-D float32 packed panels (layouts in the module docstring).
    ia, jb
        Offsets of the block's panels in ``ap`` and ``bp``.
    kc
        Depth of the panels.
    cb
        1-D float32 buffer holding C's block, row stride ``ldc``, first element ``co``.
    """
    sig = types.none(ap, ia, bp, jb, kc, cb, co, ldc)
    width, rows, nvec = VECTOR_WIDTH, MR, VECTORS_N
    cols = nvec * width

    def codegen(context, builder, signature, args):
        ap_, ia_, bp_, jb_, kc_, cb_, co_, ldc_ = args
        aty, _, bty, _, _, cty = signature.args[:6]
        a_data = context.make_array(aty)(context, builder, ap_).data
        b_data = context.make_array(bty)(context, builder, bp_).data
        c_data = context.make_array(cty)(context, builder, cb_).data
        vec = ir.VectorType(ir.FloatType(), width)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec, vec, vec]), f"llvm.fma.v{width}f32"
        )
        splat_mask = ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width)
        undef = ir.Constant(vec, ir.Undefined)
        pa = builder.gep(a_data, [ia_])
        pb = builder.gep(b_data, [jb_])
        # Accumulators as allocas: LLVM's mem2reg turns them into registers.
        acc = [[cgutils.alloca_once(builder, vec) for _ in range(nvec)] for _ in range(rows)]
        for row in acc:
            for slot in row:
                builder.store(ir.Constant(vec, [0.0] * width), slot)
        with cgutils.for_range(builder, kc_) as loop:
            p = loop.index
            b_row = builder.mul(p, _const(cols))
            b_vecs = [
                builder.load(
                    builder.bitcast(
                        builder.gep(pb, [builder.add(b_row, _const(v * width))]), vec.as_pointer()
                    ),
                    align=4,
                )
                for v in range(nvec)
            ]
            a_col = builder.mul(p, _const(rows))
            for i in range(rows):
                a = builder.load(builder.gep(pa, [builder.add(a_col, _const(i))]), align=4)
                a_vec = builder.shuffle_vector(
                    builder.insert_element(undef, a, ir.Constant(ir.IntType(32), 0)),
                    undef,
                    splat_mask,
                )
                for v in range(nvec):
                    builder.store(
                        builder.call(fma, [a_vec, b_vecs[v], builder.load(acc[i][v])]), acc[i][v]
                    )
        pc = builder.gep(c_data, [co_])
        for i in range(rows):
            row_start = builder.mul(_const(i), ldc_)
            for v in range(nvec):
                ptr = builder.bitcast(
                    builder.gep(pc, [builder.add(row_start, _const(v * width))]), vec.as_pointer()
                )
                total = builder.fadd(builder.load(ptr, align=4), builder.load(acc[i][v]))
                builder.store(total, ptr, align=4)
        return context.get_dummy_value()

    return sig, codegen
