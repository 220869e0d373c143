"""What the install and the Docker files hand out (issue 48): every package installed against a pinned hash (pip
and torch included, in the Makefile and in the image), and each container given only the secrets it uses (the
broker once got the database's passwords and the LLM key through ``env_file``).

No Docker engine runs on these machines: the compose files are read as Compose reads them (YAML, its anchors and
merges, ``${VAR}`` interpolation from ``--env-file``), and the install lines as the shell would run them.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path

import pytest
import yaml

from citestream.config import PROJECT_ROOT

SECRETS = {"POSTGRES_PASSWORD", "CITESTREAM_APP_DB_PASSWORD", "CITESTREAM_PAGE_DB_PASSWORD",
           "CITESTREAM_OPENAI_API_KEY", "KAFKA_ADMIN_PASSWORD", "KAFKA_PUBLISHER_PASSWORD",
           "CITESTREAM_BROKER_SASL_PASSWORD"}
NEEDS = {
    "postgres": {"POSTGRES_PASSWORD"},
    "kafka": {"KAFKA_ADMIN_PASSWORD", "KAFKA_PUBLISHER_PASSWORD", "CITESTREAM_BROKER_SASL_PASSWORD"},  # its JAAS
    "acls": {"KAFKA_ADMIN_PASSWORD"},
    "init": {"POSTGRES_PASSWORD", "CITESTREAM_APP_DB_PASSWORD", "CITESTREAM_PAGE_DB_PASSWORD",
             "CITESTREAM_BROKER_SASL_PASSWORD"},
    "worker": {"CITESTREAM_APP_DB_PASSWORD", "CITESTREAM_OPENAI_API_KEY", "CITESTREAM_BROKER_SASL_PASSWORD"},
    "cli": {"CITESTREAM_APP_DB_PASSWORD", "CITESTREAM_OPENAI_API_KEY", "CITESTREAM_BROKER_SASL_PASSWORD"},
}
"""Service → the secrets it may be handed, and no other."""


def _services(*files: str) -> dict[str, dict]:
    """The services of ``files`` merged as ``docker compose -f a -f b`` merges them (later keys win)."""
    merged: dict[str, dict] = {}
    for name in files:
        for service, body in yaml.safe_load((PROJECT_ROOT / "docker" / name).read_text())["services"].items():
            into = merged.setdefault(service, {})
            for key, value in body.items():
                if isinstance(value, dict) and isinstance(into.get(key), dict):
                    into[key] = {**into[key], **value}
                else:
                    into[key] = value
    return merged


def _handed(service: dict) -> set[str]:
    """The secrets a container gets: all of them through an ``env_file``, else those its environment names or
    interpolates (a ``${SECRET}`` anywhere in a value, or the key itself)."""
    if service.get("env_file"):
        return set(SECRETS)
    env = service.get("environment") or {}
    items = env.items() if isinstance(env, dict) else (e.split("=", 1) + [""] for e in env)
    out = set()
    for key, value in items:
        if key in SECRETS and str(value).strip() not in ("", '""'):
            out.add(key)
        out |= set(re.findall(r"\$\{(\w+)", str(value))) & SECRETS
    return out


AUTHENTICATED = {"SASL_PLAINTEXT", "SASL_SSL"}
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}


def _listeners(env: dict) -> dict[str, tuple[str, int, str]]:
    """Listener name → (host, port, security protocol), as Kafka reads ``listeners`` and the protocol map."""
    protocols = dict(pair.split(":", 1) for pair in str(env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"]).split(","))
    out = {}
    for listener in str(env["KAFKA_LISTENERS"]).split(","):
        name, address = listener.split("://", 1)
        host, port = address.rsplit(":", 1)
        out[name] = (host, int(port), protocols.get(name, name))
    return out


def test_the_sasl_brokers_listeners_are_authenticated_or_reach_no_other_container():
    """Issue 54: the SASL template's controller listener was PLAINTEXT on every interface: any container on the
    network could speak to the KRaft controller unauthenticated. Every listener is now SASL or bound to the
    container's loopback, the quorum's voter is that loopback listener, and a published port is an authenticated
    listener's. (Read statically: Docker cannot run on these machines.)"""
    env = _services("compose.yml", "compose.sasl.yml")["kafka"]["environment"]
    listeners = _listeners(env)
    open_ones = {name: (host, protocol) for name, (host, _, protocol) in listeners.items()
                 if protocol not in AUTHENTICATED and host not in LOOPBACK_HOSTS}
    assert open_ones == {}, f"listeners without authentication that other containers reach: {open_ones}"
    host, port, _ = listeners[env["KAFKA_CONTROLLER_LISTENER_NAMES"]]
    assert {v.split("@", 1)[1] for v in str(env["KAFKA_CONTROLLER_QUORUM_VOTERS"]).split(",")} == {f"{host}:{port}"}
    published = {int(p.rsplit(":", 1)[1]) for p in _services("compose.yml", "compose.sasl.yml")["kafka"]["ports"]}
    assert published <= {port for _, port, protocol in listeners.values() if protocol in AUTHENTICATED}


@pytest.mark.parametrize("files", [("compose.yml",), ("compose.yml", "compose.sasl.yml")])
def test_each_container_gets_the_secrets_it_uses_and_no_other(files):
    services = _services(*files)
    for name, service in services.items():
        assert not service.get("env_file"), f"{name} reads docker/.env whole"
        assert _handed(service) <= NEEDS[name], (name, _handed(service) - NEEDS[name])
    assert "POSTGRES_PASSWORD" not in _handed(services["worker"])
    if "acls" in services:
        assert _handed(services["kafka"]).isdisjoint({"POSTGRES_PASSWORD", "CITESTREAM_APP_DB_PASSWORD",
                                                      "CITESTREAM_OPENAI_API_KEY"})


def _install_lines(text: str, continued: str) -> list[list[str]]:
    """Each ``pip install`` command of a Makefile recipe or a Dockerfile RUN, split as the shell would."""
    joined = text.replace(continued, " ")
    out = []
    for line in joined.splitlines():
        for command in re.split(r"&&|;", line):
            command = command.replace("$(PIP)", "pip")
            if not re.search(r"\bpip\b.*\binstall\b", command):
                continue
            words = shlex.split(command, comments=True)
            if "pip" in words and "install" in words:
                out.append(words[words.index("install") + 1:])
    return out


@pytest.mark.parametrize("file, continued", [("Makefile", "\\\n"), ("docker/Dockerfile", "\\\n")])
def test_every_install_is_checked_against_pinned_hashes(file, continued):
    """pip itself and torch included; the project goes in last, without dependencies or a build environment."""
    installs = _install_lines((PROJECT_ROOT / file).read_text(), continued)
    assert installs
    for args in installs:
        if "-r" in args:
            assert "--require-hashes" in args, (file, args)
            lock = PROJECT_ROOT / args[args.index("-r") + 1]
            assert lock.exists(), lock
        else:  # the project itself
            assert {"--no-deps", "--no-build-isolation"} <= set(args), (file, args)
    locks = [args[args.index("-r") + 1] for args in installs if "-r" in args]
    assert locks[:2] == ["requirements-pip.lock", "requirements-torch.lock"], locks  # before anything else


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-nodeps.lock", "requirements-torch.lock",
                                  "requirements-pip.lock", "requirements-docker.lock"])
def test_every_pinned_package_has_a_hash(lock):
    text = (PROJECT_ROOT / lock).read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9])", re.sub(r"(?m)^#.*\n", "", text).strip())
    assert entries
    for entry in entries:
        assert "==" in entry.split()[0] and "--hash=sha256:" in entry, entry.splitlines()[0]


def test_the_torch_pinned_is_the_cpu_wheel_on_this_machine():
    wheel = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    if not wheel.exists():
        pytest.skip("no local torch wheel to hash")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert f"--hash=sha256:{digest}" in (PROJECT_ROOT / "requirements-torch.lock").read_text()
