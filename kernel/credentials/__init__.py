"""Credentials: the pool of API keys per provider and the strategy contract."""

from .pool import (
    COOLDOWNS,
    Credential,
    CredentialLease,
    CredentialPool,
    CredentialsExhaustedError,
    NoCredentialsError,
    env_key_for,
)
from .sources import kernel_auth_path
from .store import AuthStore, key_id
from .strategy import CredentialStatus, CredentialStrategy

__all__ = [
    "COOLDOWNS",
    "AuthStore",
    "Credential",
    "CredentialLease",
    "CredentialPool",
    "CredentialStatus",
    "CredentialStrategy",
    "CredentialsExhaustedError",
    "NoCredentialsError",
    "env_key_for",
    "kernel_auth_path",
    "key_id",
]
