"""slashkit's pi extension (docs/pi.md) and its installer."""
