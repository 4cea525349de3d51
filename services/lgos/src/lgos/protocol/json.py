"""Fast JSON responses (orjson) for every route: the service kit's response class."""

from service_kit.responses import JSONResponse

__all__ = ["JSONResponse"]
