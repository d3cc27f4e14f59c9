"""towerear host application: protocol, sources, pipeline, games, UI and CLI."""

__version__ = "0.1.0"
