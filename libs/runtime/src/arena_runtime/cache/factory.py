"""Pick the cache the settings ask for: Redis when ARENA_REDIS_URL is set, else in-process."""

from __future__ import annotations

from arena_runtime.cache.base import Cache
from arena_runtime.config import Settings


def open_cache(settings: Settings) -> Cache:
    """The configured cache, not yet started (``await cache.start()`` or ``async with cache``)."""
    if settings.redis_url is not None:
        from arena_runtime.cache.redis import RedisCache

        return RedisCache(settings.redis_url.get_secret_value(), prefix=settings.cache_prefix)
    from arena_runtime.cache.memory import MemoryCache

    return MemoryCache()
