"""The Chainlit adapter over :mod:`lgos_ui`: settings, schema, widgets and the turn runner."""
