"""docker-compose.yml, Dockerfile and .env.example agree with the Settings (no Docker engine needed)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.core.config import REPO_ROOT, Settings

FIELDS = set(Settings.model_fields)
ENV_NAME = re.compile(r"\bNEORAG_([A-Z0-9_]+)\b")
INTERPOLATION = re.compile(r"\$\{([A-Za-z0-9_]+)(?::?-([^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    return data


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def _with_defaults(value: str) -> str:
    """Compose interpolation with no variables set: ``${X:-d}`` -> d."""
    return INTERPOLATION.sub(lambda m: m.group(2) or "", value)


def _unknown(names: set[str]) -> set[str]:
    return {n for n in names if n.lower() not in FIELDS}


def test_services_and_neo4j_healthcheck(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"neo4j", "neorag"}
    neo4j = services["neo4j"]
    assert neo4j["image"] == "neo4j:5.26-community"
    assert {"7474:7474", "7687:7687"} <= {str(p) for p in neo4j["ports"]}
    health = neo4j["healthcheck"]
    assert health["test"] and "cypher-shell" in " ".join(health["test"])
    assert health["retries"] >= 3 and health["interval"]
    auth = _env(neo4j)["NEO4J_AUTH"]
    assert auth.startswith("neo4j/${NEO4J_PASSWORD")  # from the environment / .env, not hard-coded
    mounts = {v.split(":")[1]: v.split(":")[0] for v in neo4j["volumes"]}
    assert set(mounts) == {"/data", "/logs"}
    assert set(mounts.values()) <= set(compose["volumes"])  # named volumes, declared


def test_neorag_service_waits_for_a_healthy_neo4j(compose: dict[str, Any]) -> None:
    app = compose["services"]["neorag"]
    assert app["depends_on"] == {"neo4j": {"condition": "service_healthy"}}
    assert (REPO_ROOT / app["build"]["context"] / app["build"]["dockerfile"]).is_file()
    assert [str(p) for p in app["ports"]] == ["127.0.0.1:8010:8010"]  # loopback: served without keys
    assert app["command"] == ["neorag", "serve", "--host", "0.0.0.0", "--insecure"]
    env = _env(app)
    assert env["NEORAG_BACKEND"] == "neo4j"
    assert env["NEORAG_NEO4J_URI"] == "bolt://neo4j:7687"
    assert env["NEORAG_API_HOST"] == "0.0.0.0"
    assert "${NEO4J_PASSWORD" in env["NEORAG_NEO4J_PASSWORD"]


def test_every_neorag_env_name_in_compose_is_a_setting(compose: dict[str, Any],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(compose["services"]["neorag"])
    names = {k.removeprefix("NEORAG_") for k in env if k.startswith("NEORAG_")}
    assert names and not _unknown(names), f"not Settings fields: {sorted(_unknown(names))}"
    for key, value in env.items():
        monkeypatch.setenv(key, _with_defaults(value))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (settings.backend, settings.api_host, settings.api_port) == ("neo4j", "0.0.0.0", 8010)
    assert settings.neo4j_password == "neorag-password" and not settings.llm_configured


def test_dockerfile_installs_cpu_torch_first_then_serves() -> None:
    text = (REPO_ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    torch = re.search(r'pip install "?torch==2\.13\.0"? '
                      r"--index-url https://download\.pytorch\.org/whl/cpu", text)
    package = re.search(r"pip install (-e )?\.", text)
    assert torch and package and torch.start() < package.start()
    assert 'CMD ["neorag", "serve", "--host", "0.0.0.0"]' in text
    assert "COPY cypher" in text
    names = set(ENV_NAME.findall(text))
    assert "BACKEND" in names and not _unknown(names), sorted(_unknown(names))
    ignored = (REPO_ROOT / ".dockerignore").read_text().split()
    assert ".venv/" in ignored and "data/" in ignored


def _env_example_module() -> Any:
    spec = importlib.util.spec_from_file_location("env_example", REPO_ROOT / "scripts" / "env_example.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_example_lists_every_setting() -> None:
    text = (REPO_ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^# NEORAG_([A-Z0-9_]+)=", text, re.M))
    assert not _unknown(listed), f".env.example names unknown settings: {sorted(_unknown(listed))}"
    missing = {f.upper() for f in FIELDS} - listed
    assert not missing, (f".env.example lacks {sorted(missing)}: run "
                         "`.venv/bin/python scripts/env_example.py > .env.example`")
    generated = set(re.findall(r"^# NEORAG_([A-Z0-9_]+)=", _env_example_module().render(), re.M))
    assert generated == {f.upper() for f in FIELDS}  # the generator covers every field
    assert re.search(r"^NEO4J_PASSWORD=\S{8,}$", text, re.M)  # what docker compose reads


def test_readme_names_only_real_settings() -> None:
    names = set(ENV_NAME.findall((REPO_ROOT / "README.md").read_text()))
    assert not _unknown(names), f"README.md names unknown settings: {sorted(_unknown(names))}"


def test_settings_ignore_the_compose_only_variable(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text((REPO_ROOT / ".env.example").read_text())
    settings = Settings(_env_file=env_file)  # type: ignore[call-arg]
    assert settings.backend == "embedded"  # every NEORAG_ line is commented: defaults apply
