"""Our own versions of the Hermes Agent host helpers its memory providers import.

Each module here is plain functions with no state of their own; the
:class:`~hermes.compat.hermes.standins.ProviderScope` puts them into
``sys.modules`` under Hermes Agent's module names (``agent.memory_manager``,
``agent.message_content``, ``agent.skill_commands``, ``agent.async_utils``,
``agent.file_safety``, ``hermes_cli.profiles``) while a provider runs.
"""

__all__: list[str] = []
