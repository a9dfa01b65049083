"""slashkit's adapters: the hosts around the pure core (slashkit.core)."""

#: slashkit's version, written here only: the package metadata reads it (pyproject.toml, `[tool.hatch.version]`),
#: and so do `slashkit --version` and the plugins' manifests.
__version__ = "0.1.0"
