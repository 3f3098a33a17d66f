"""A test that needs an optional package skips with the reason, and under CI fails instead (issue
29, section 7): ``pytest.importorskip`` skipped under CI too, so CI could pass without running
RLCard's rule agent on the DouZero preset, or PostgreSQL on this machine's address."""

from __future__ import annotations

import sys

import pytest

from tests import test_ddz_roles, test_remote_hosts


def _missing(monkeypatch, module: str, ci: bool) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import and find_spec: as if not installed
    for var in ("CI", "CLIMBRL_REQUIRE_EXTERNAL"):
        monkeypatch.delenv(var, raising=False)
    if ci:
        monkeypatch.setenv("CI", "true")


def _outcome(test, *args) -> tuple[str, str]:
    """How ``test`` ends: ("skipped" | "failed" | "passed", the message); a skip is caught here,
    so that this test fails, not skips, when the other one skips where it should fail."""
    try:
        test(*args)
    except pytest.skip.Exception as e:
        return "skipped", str(e)
    except pytest.fail.Exception as e:
        return "failed", str(e)
    return "passed", ""


@pytest.mark.parametrize("ci", [False, True])
def test_rlcard_missing_skips_or_fails_under_ci(monkeypatch, ci: bool) -> None:
    _missing(monkeypatch, "rlcard", ci)
    how, why = _outcome(test_ddz_roles.test_rlcard_rule_agent_plays_the_douzero_preset)
    assert how == ("failed" if ci else "skipped") and "pip install -e '.[rlcard]'" in why, (how, why)


@pytest.mark.parametrize("ci", [False, True])
def test_postgres_driver_missing_skips_or_fails_under_ci(monkeypatch, tmp_path, ci: bool) -> None:
    _missing(monkeypatch, "psycopg", ci)
    how, why = _outcome(test_remote_hosts.test_postgres_on_this_machine_s_address_takes_password_clients_of_its_subnet,
                        tmp_path)
    assert how == ("failed" if ci else "skipped") and "no PostgreSQL driver" in why, (how, why)
