"""``neorag serve`` refuses to serve the network without API keys, unless told ``--insecure``."""

from __future__ import annotations

import ipaddress

from app.api.security.keys import KeyRing
from app.core.config import Settings
from app.core.errors import ConfigError

LOOPBACK_NAMES = ("localhost", "localhost.", "ip6-localhost")


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost; False for 0.0.0.0, :: and every other address or name."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings, insecure: bool) -> Settings:
    """Refuse a non-loopback bind without API keys (one line) unless ``insecure``; the settings to serve with.

    A specific bind address (say 192.168.1.20) is added to the Host allow-list, so clients reaching the
    server by that address are answered; with 0.0.0.0, name the hosts in NEORAG_ALLOWED_HOSTS.
    """
    host = settings.api_host
    if is_loopback(host):
        return settings
    keys = KeyRing.parse(settings.api_keys)  # a malformed key fails here too, before anything starts
    if not keys.enabled and not insecure:
        raise ConfigError(
            f"refusing to serve on {host}:{settings.api_port} without API keys",
            "anyone who can reach that address could read every stored text and start ingests",
            "set NEORAG_API_KEYS=read:<key>,write:<key> (docs/API.md, Authentication), bind 127.0.0.1, "
            "or pass --insecure to serve without keys anyway")
    name = host.strip().strip("[]")
    try:
        specific = not ipaddress.ip_address(name).is_unspecified
    except ValueError:
        specific = True  # a host name
    if specific and name not in settings.allowed_hosts:
        return settings.model_copy(update={"allowed_hosts": [*settings.allowed_hosts, name]})
    return settings
