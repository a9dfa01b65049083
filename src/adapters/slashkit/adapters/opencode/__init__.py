"""slashkit's opencode host: a thin plugin module over the resident helper and its bridge protocol."""
