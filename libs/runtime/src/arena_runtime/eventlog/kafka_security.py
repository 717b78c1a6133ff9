"""How the Kafka clients authenticate and encrypt: the aiokafka options built from the settings.

Every client of the Kafka log (producer, admin, readers, group members) gets the same options.
TLS verifies the brokers' certificates against ``ARENA_KAFKA_TLS_CA_FILE`` (the system's CAs when
unset) and, unless ``ARENA_KAFKA_TLS_CHECK_HOSTNAME`` is off, that a certificate names the host
connected to; a client certificate and key make it mutual TLS. SASL adds a user name and password
(PLAIN, or SCRAM-SHA-256/512, which never sends the password itself). aiokafka takes the SCRAM
credentials in its ``sasl_plain_*`` options too.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka.helpers import create_ssl_context

from arena_runtime.config import ConfigError, Settings


@dataclass(frozen=True)
class KafkaSecurity:
    tls: bool = False
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> KafkaSecurity:
        key_password = settings.kafka_tls_key_password
        sasl_password = settings.kafka_sasl_password
        return cls(
            tls=settings.kafka_tls,
            ca_file=settings.kafka_tls_ca_file,
            cert_file=settings.kafka_tls_cert_file,
            key_file=settings.kafka_tls_key_file,
            key_password=None if key_password is None else key_password.get_secret_value(),
            check_hostname=settings.kafka_tls_check_hostname,
            sasl_mechanism=settings.kafka_sasl_mechanism,
            sasl_username=settings.kafka_sasl_username,
            sasl_password=None if sasl_password is None else sasl_password.get_secret_value(),
        )

    @property
    def protocol(self) -> str:
        """Kafka's name for the combination: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."""
        if self.sasl_mechanism is None:
            return "SSL" if self.tls else "PLAINTEXT"
        return "SASL_SSL" if self.tls else "SASL_PLAINTEXT"

    def describe(self) -> str:
        """For error messages: how the clients connect, without any secret."""
        if self.sasl_mechanism is None:
            return self.protocol
        return f"{self.protocol}, {self.sasl_mechanism} as {self.sasl_username!r}"

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for every aiokafka client; a ConfigError naming the file at fault."""
        options: dict[str, Any] = {"security_protocol": self.protocol}
        if self.tls:
            options["ssl_context"] = self.ssl_context()
        if self.sasl_mechanism is not None:
            options["sasl_mechanism"] = self.sasl_mechanism
            options["sasl_plain_username"] = self.sasl_username
            options["sasl_plain_password"] = self.sasl_password
        return options

    def ssl_context(self) -> ssl.SSLContext:
        try:
            context: ssl.SSLContext = create_ssl_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                "ARENA_KAFKA_TLS_CA_FILE", f"cannot load the CA file {self.ca_file}: {exc}"
            ) from None
        if self.cert_file is not None:
            try:
                context.load_cert_chain(self.cert_file, self.key_file, self.key_password)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(
                    "ARENA_KAFKA_TLS_CERT_FILE",
                    f"cannot load the client certificate {self.cert_file} with its key "
                    f"{self.key_file}: {exc}",
                ) from None
        # The CA check stays on either way; only the name in the certificate goes unchecked.
        context.check_hostname = self.check_hostname
        return context
