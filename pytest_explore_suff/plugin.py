"""pytest hooks and options (placeholder while the library lands)."""
