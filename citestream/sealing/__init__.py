"""Every record a worker writes carries a seal; a stage, the page and the clients trust only records whose seal holds.

``seals`` (sealing and checking, and why), ``keys`` (the key files).
"""

from .seals import (
    MAC_FIELD, PROVENANCE_MISMATCH, KeyUnavailable, RecordSealer, RecordVerifier, canonical, public_path,
)

__all__ = ["MAC_FIELD", "PROVENANCE_MISMATCH", "KeyUnavailable", "RecordSealer", "RecordVerifier", "canonical",
           "public_path"]
