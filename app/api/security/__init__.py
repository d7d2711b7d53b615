"""API security: access levels per route, API keys, Host/Origin checks and request-body limits."""

from app.api.security.access import PUBLIC, READ, WRITE, access
from app.api.security.middleware import writer

__all__ = ["PUBLIC", "READ", "WRITE", "access", "writer"]
