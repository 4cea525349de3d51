"""Turning an attached file into searchable chunks."""
