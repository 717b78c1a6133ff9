"""Player accounts: registration, sign-in, sessions and guest upgrades (docs/services.md,
"Accounts").

An account is one stream in the log, ``account-<lower-cased username>`` (``stream``); the
gateway's accounts worker is its only writer (``writer``); the gateway authenticates from a SQL
projection of those streams (``projection``, ``sessions``); the HTTP routes are ``routes``.
"""
