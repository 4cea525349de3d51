"""The demo graphs and the registry LGOS serves in the demo stack."""
