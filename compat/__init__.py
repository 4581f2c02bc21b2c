"""hermes.compat: run plugins written for other agents on hermes-kernel.

``hermes.compat.hermes`` runs memory providers written for Hermes Agent,
unchanged, as drivers of the kernel's ``hermes.memory_providers`` slot.
"""

__all__: list[str] = []
