"""Gateway glue for LGOS: catalog-sync jobs (LiteLLM, Bifrost) and the MCP demo database."""
