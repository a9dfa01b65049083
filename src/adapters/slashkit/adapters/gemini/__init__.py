"""slashkit on Gemini CLI: its hooks, its fail tool and its installer (docs/gemini.md)."""
