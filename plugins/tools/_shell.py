"""The shell-line parser, which lives in the kernel (:mod:`hermes.kernel.shell`).

The danger check here and the server's allow-list (:mod:`hermes.kernel.approvals`) read
commands through the same parser, so what one sees the other sees too.
"""

from __future__ import annotations

from hermes.kernel.shell import SHELLS, SimpleCommand, simple_commands

__all__ = ["SHELLS", "SimpleCommand", "simple_commands"]
