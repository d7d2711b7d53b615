"""FastAPI dependencies: the services container from app state."""

from __future__ import annotations

from fastapi import Request

from app.services.container import Services


def get_services(request: Request) -> Services:
    """The process's Services (built in the lifespan)."""
    services: Services = request.app.state.services
    return services
