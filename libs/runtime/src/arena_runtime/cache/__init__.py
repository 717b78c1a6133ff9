"""Cache and limits: one interface, a Redis and an in-process implementation."""

from arena_runtime.cache.base import (
    Cache,
    CacheError,
    CacheUnavailableError,
    InvalidRequestError,
    Message,
    Subscription,
)
from arena_runtime.cache.factory import open_cache
from arena_runtime.cache.memory import MemoryCache

__all__ = [
    "Cache",
    "CacheError",
    "CacheUnavailableError",
    "InvalidRequestError",
    "MemoryCache",
    "Message",
    "Subscription",
    "open_cache",
]
