"""LGOS Files service: the OpenAI Files API and vector stores, on S3/MinIO or local disk.

The app factory is ``files_service.app.create_app`` and its settings ``files_service.settings``;
this package module imports nothing, so its submodules can import each other through it.
"""
