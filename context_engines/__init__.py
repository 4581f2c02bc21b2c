"""Built-in context engines, registered in the ``hermes.context_engines`` entry-point group."""
