"""fp8check's version, in a module of its own: the hub client's user agent, `env` and `--version` read it without
importing the package's API (fp8check/__init__.py re-exports it)."""

__version__ = "0.1.0"
