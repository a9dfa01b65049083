"""The SDK host's agenda is every harness host's: `slashkit.adapters.harness.agenda`."""

from slashkit.adapters.harness.agenda import Agenda, Query, SettingStore, chain_of, started_by

__all__ = ["Agenda", "Query", "SettingStore", "chain_of", "started_by"]
