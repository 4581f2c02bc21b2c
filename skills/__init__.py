"""The bundled skill pack: SKILL.md folders shipped as package data (``hermes.skills``)."""
