"""Helpers for the /ui tests: a real uvicorn server in a thread and a headless Debian Chromium."""
