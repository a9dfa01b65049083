"""The Codex host: slash chains and self-commands on `codex app-server` (docs/codex.md)."""
