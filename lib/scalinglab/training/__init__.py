"""Training shared by the studies: optimizers and the one pretraining loop.

- :mod:`.optimizers`: AdamW, NAdamW, Muon, SOAP, Lion, Scion behind one table and builder
- :mod:`.pretrain`: budget-matched language-model pretraining with a held-out loss

Used by :mod:`scalinglab.studies.optimizers` and :mod:`scalinglab.studies.sparsity`.
"""
