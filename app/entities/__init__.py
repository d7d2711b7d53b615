"""Document entities (``Entity`` nodes): lookup by name, suggestions, duplicate proposals and merges."""
