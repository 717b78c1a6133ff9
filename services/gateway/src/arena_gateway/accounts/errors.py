"""The typed refusals of the accounts API: a stable code, an HTTP status and a message."""

from __future__ import annotations

from enum import StrEnum


class AccountErrorCode(StrEnum):
    INVALID_USERNAME = "invalid_username"
    USERNAME_RESERVED = "username_reserved"
    INVALID_PASSWORD = "invalid_password"
    USERNAME_TAKEN = "username_taken"
    #: Wrong password and unknown user alike: the answer never tells which.
    INVALID_CREDENTIALS = "invalid_credentials"
    RATE_LIMITED = "rate_limited"
    NOT_A_GUEST = "not_a_guest"
    UNKNOWN_SESSION = "unknown_session"
    UNAVAILABLE = "unavailable"


STATUS = {
    AccountErrorCode.INVALID_USERNAME: 422,
    AccountErrorCode.USERNAME_RESERVED: 422,
    AccountErrorCode.INVALID_PASSWORD: 422,
    AccountErrorCode.USERNAME_TAKEN: 409,
    AccountErrorCode.INVALID_CREDENTIALS: 401,
    AccountErrorCode.RATE_LIMITED: 429,
    AccountErrorCode.NOT_A_GUEST: 409,
    AccountErrorCode.UNKNOWN_SESSION: 404,
    AccountErrorCode.UNAVAILABLE: 503,
}


class AccountError(Exception):
    def __init__(
        self, code: AccountErrorCode, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        #: Seconds until a refused caller may try again (``Retry-After``), when known.
        self.retry_after = retry_after

    @property
    def status(self) -> int:
        return STATUS[self.code]
