"""Service processes: the Service shape, the consume worker, and the host that runs them."""

from arena_runtime.host.consume import CommitWatcher, ConsumeWorker, command_worker, event_worker
from arena_runtime.host.run import EXIT_BAD_CONFIG, EXIT_FAILED, EXIT_OK, ServiceBuilder, run, serve
from arena_runtime.host.runtime import Runtime, open_runtime
from arena_runtime.host.service import Service, ServiceError, Worker

__all__ = [
    "EXIT_BAD_CONFIG",
    "EXIT_FAILED",
    "EXIT_OK",
    "CommitWatcher",
    "ConsumeWorker",
    "Runtime",
    "Service",
    "ServiceBuilder",
    "ServiceError",
    "Worker",
    "command_worker",
    "event_worker",
    "open_runtime",
    "run",
    "serve",
]
