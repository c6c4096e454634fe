"""secrets-audit: remediate leaked secrets in a seeded git repository (framework-free core).

`scenarios` generates repository plans, `splits` names tasks, `tiers` decides what the agent
sees, `leakscan` finds what still leaks, `rubric` scores, `status` observes, `programs` holds
what runs inside the runtime. Only `taskset.py` (and `tools.py`) import verifiers.
"""
