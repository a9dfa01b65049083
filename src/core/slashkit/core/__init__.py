"""slashkit's pure core: the chain parser, the step state machine, the self-command decisions, the texts and
the ports. No I/O of any kind; adapters bring the outside world in as events."""

from slashkit.core.chain import Chain, Step, parse_chain

__all__ = ["Chain", "Step", "parse_chain"]
