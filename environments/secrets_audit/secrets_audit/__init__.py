"""secrets-audit: the taskset id's top-level module (`vf-eval secrets-audit`).

The code lives in `redaction_pressure.audit`; this module only re-exports the Taskset, since
a verifiers id resolves to a top-level module.
"""

from redaction_pressure.audit.taskset import SecretsAuditTaskset

__all__ = ["SecretsAuditTaskset"]
