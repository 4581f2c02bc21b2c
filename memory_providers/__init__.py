"""Built-in memory providers, registered in the ``hermes.memory_providers`` entry-point group."""
