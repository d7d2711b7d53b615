"""`neorag serve` refuses a non-loopback bind without API keys unless told --insecure (one clear line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.commands.exposure import check_exposure, is_loopback
from app.core.config import Settings
from app.core.errors import ConfigError
from app.store.embedded import free_port

KEYS = "read:" + "r" * 20 + ",write:" + "w" * 20


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("10.0.0.1", False),
    ("my-laptop.lan", False)])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_check_exposure() -> None:
    base = Settings(_env_file=None)  # type: ignore[call-arg]
    assert check_exposure(base, insecure=False) is base  # 127.0.0.1 by default
    for host in ("0.0.0.0", "192.168.1.20", "::"):
        with pytest.raises(ConfigError, match="refusing to serve .* without API keys.*--insecure"):
            check_exposure(base.model_copy(update={"api_host": host}), insecure=False)
    insecure = check_exposure(base.model_copy(update={"api_host": "0.0.0.0"}), insecure=True)
    assert insecure.allowed_hosts == []  # 0.0.0.0: the operator names the hosts
    lan = base.model_copy(update={"api_host": "192.168.1.20", "api_keys": KEYS})
    keyed = check_exposure(lan, insecure=False)
    assert keyed.allowed_hosts == ["192.168.1.20"]  # clients reaching it by that address are answered
    with pytest.raises(ConfigError, match="NEORAG_API_KEYS"):
        short = base.model_copy(update={"api_host": "0.0.0.0", "api_keys": "write:short"})
        check_exposure(short, insecure=True)


def test_cli_refuses_before_starting_anything(tmp_path: Path) -> None:
    env = {**os.environ, "NEORAG_API_KEYS": "", "NEORAG_FALKOR_DATA_DIR": str(tmp_path / "db"),
           "HF_HUB_OFFLINE": "1"}
    cli = Path(sys.executable).with_name("neorag")
    done = subprocess.run([str(cli), "serve", "--host", "0.0.0.0", "--port", str(free_port())], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    assert "refusing to serve on 0.0.0.0" in done.stderr and "--insecure" in done.stderr
    assert not (tmp_path / "db").exists()  # no store was started
