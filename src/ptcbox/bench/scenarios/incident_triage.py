"""Incident triage across log files.

Which service logged the most errors between 14:00 and 15:00 UTC, and what is its most
frequent error? Classic: list services, list each service's log files (five calls), read
every file's ERROR lines (twelve calls), answer. PTC: a first snippet looks at the
files and the line format, a second counts and prints a two-line summary.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

DATE = "2025-03-14"
_SERVICES = [
    ("api-gateway", "edge", 1, 3),
    ("auth", "identity", 1, 2),
    ("payments", "payments", 1, 3),
    ("search", "discovery", 2, 2),
    ("notifications", "messaging", 3, 2),
]
_ERRORS = {
    "api-gateway": [
        "UpstreamReset: upstream connection reset by peer",
        "RateLimited: 429 for tenant",
    ],
    "auth": ["TokenExpired: refresh token expired", "LdapTimeout: directory lookup took > 2 s"],
    "payments": [
        "LedgerTimeout: timeout calling ledger-db after 5000 ms",
        "CardDeclined: issuer declined (code 05)",
        "IdempotencyConflict: key reused with a different body",
    ],
    "search": ["IndexStale: shard 7 is 300 s behind", "QueryTimeout: took > 1500 ms"],
    "notifications": ["SmtpRefused: 421 try again later", "TemplateMissing: welcome_v3"],
}
_INFO = [
    "GET /v1/orders 200 in 42 ms",
    "POST /v1/charges 201 in 180 ms",
    "cache hit ratio 0.93",
    "health check ok",
    "worker pool resized to 16",
    "GET /v1/users/me 200 in 12 ms",
]
_WARN = ["slow query 850 ms", "retrying request (attempt 2)", "connection pool at 85%"]


def _minute(rng: random.Random, service: str) -> int:
    """Minutes after 13:00; incident windows make some services bursty."""
    if service == "payments" and rng.random() < 0.5:
        return rng.randint(70, 100)  # 14:10-14:40, the ledger incident
    if service == "search" and rng.random() < 0.55:
        return rng.randint(130, 165)  # 15:10-15:45, after the window
    return rng.randint(0, 179)


def _build() -> dict[str, list[str]]:
    rng = random.Random(314)
    files: dict[str, list[str]] = {}
    for service, _team, _tier, hosts in _SERVICES:
        for host in range(1, hosts + 1):
            entries = []
            for _ in range(rng.randint(140, 170)):
                roll = rng.random()
                minute = _minute(rng, service)
                if service == "payments" and 70 <= minute <= 100 and roll < 0.75:
                    level, message = "ERROR", _ERRORS[service][0]
                elif service == "search" and minute >= 130 and roll < 0.7:
                    level, message = "ERROR", _ERRORS[service][1]
                elif roll < 0.14:
                    level, message = "ERROR", rng.choice(_ERRORS[service])
                elif roll < 0.3:
                    level, message = "WARN", rng.choice(_WARN)
                else:
                    level, message = "INFO", rng.choice(_INFO)
                stamp = f"{13 + minute // 60:02d}:{minute % 60:02d}:{rng.randint(0, 59):02d}"
                ms = rng.randint(0, 999)
                req = f"{rng.getrandbits(32):08x}"
                entries.append(
                    (stamp, ms, f"{level} {service}-{host} [req={req}] {message}"),
                )
            entries.sort()
            path = f"/var/log/{service}/{DATE}/{service}-{host}.log"
            files[path] = [f"{DATE}T{stamp}.{ms:03d}Z {text}" for stamp, ms, text in entries]
    return files


_FILES = _build()


def list_services() -> list[dict[str, Any]]:
    """List the production services.

    Returns:
        One dict per service: ``name``, ``owner_team``, ``tier`` (1 = most critical),
        ``host_count``, ``runbook_url``.
    """
    return [
        {
            "name": name,
            "owner_team": team,
            "tier": tier,
            "host_count": hosts,
            "runbook_url": f"https://runbooks.example.com/{name}",
        }
        for name, team, tier, hosts in _SERVICES
    ]


def list_log_files(service: str, date: str) -> list[dict[str, Any]]:
    """List a service's log files for one day.

    Args:
        service: Service name from ``list_services``.
        date: Day as ``YYYY-MM-DD``.

    Returns:
        One dict per file: ``path``, ``host``, ``line_count``, ``size_bytes``,
        ``first_timestamp``, ``last_timestamp``.
    """
    rows = []
    for path, lines in _FILES.items():
        if path.startswith(f"/var/log/{service}/{date}/"):
            rows.append(
                {
                    "path": path,
                    "host": path.rsplit("/", 1)[1].removesuffix(".log"),
                    "line_count": len(lines),
                    "size_bytes": sum(len(line) + 1 for line in lines),
                    "first_timestamp": lines[0][:24],
                    "last_timestamp": lines[-1][:24],
                }
            )
    return rows


def read_log(path: str, level: str | None = None) -> list[str]:
    """Read a log file's lines, optionally only those of one level.

    Each line reads ``<ISO timestamp> <LEVEL> <host> [req=<id>] <message>``.

    Args:
        path: A path from ``list_log_files``.
        level: ``"INFO"``, ``"WARN"`` or ``"ERROR"``; ``None`` returns every line.

    Returns:
        The lines, oldest first.

    Raises:
        FileNotFoundError: If there is no such log file.
    """
    if path not in _FILES:
        raise FileNotFoundError(path)
    lines = _FILES[path]
    if level is None:
        return list(lines)
    return [line for line in lines if line.split(" ", 2)[1] == level]


def _triage(files: dict[str, list[str]]) -> tuple[str, int, str, int, str, int]:
    per_service: Counter[str] = Counter()
    messages: dict[str, Counter[str]] = {}
    for path, lines in files.items():
        service = path.split("/")[3]
        for line in lines:
            stamp, level, _host, _req, message = line.split(" ", 4)
            if level == "ERROR" and "T14:" in stamp:
                per_service[service] += 1
                messages.setdefault(service, Counter())[message] += 1
    (top, count), (second, second_count) = per_service.most_common(2)
    message, message_count = messages[top].most_common(1)[0]
    return top, count, message, message_count, second, second_count


def reference() -> tuple[str, int, str, int, str, int]:
    """``(service, errors, top message, its count, runner-up service, its errors)``."""
    return _triage(_FILES)


def solve(fetch: Fetch) -> tuple[str, int, str, int, str, int]:
    """The answer from tool results: every service's log files, their ERROR lines."""
    files = {}
    for service in fetch("list_services"):
        for f in fetch("list_log_files", service=service["name"], date=DATE):
            files[f["path"]] = fetch("read_log", path=f["path"], level="ERROR")
    return _triage(files)


EXPECTED = (
    "payments",
    212,
    "LedgerTimeout: timeout calling ledger-db after 5000 ms",
    208,
    "api-gateway",
    16,
)

PROMPT = (
    f"Incident triage for {DATE}: which service logged the most ERROR lines between "
    "14:00 and 15:00 UTC, how many, and what was its most frequent error message "
    "(ignoring request ids) with its count? Also name the runner-up service and its count."
)

_NAMES = [service[0] for service in _SERVICES]

CLASSIC = (
    turn(call("list_services")),
    turn(*(call("list_log_files", service=name, date=DATE) for name in _NAMES)),
    turn(*(call("read_log", path=path, level="ERROR") for path in _FILES)),
)
EXPLORE = run_code(
    f"""
    files = {{s["name"]: list_log_files(service=s["name"], date="{DATE}") for s in list_services()}}
    print({{name: len(found) for name, found in files.items()}})
    for line in read_log(path=files["payments"][0]["path"], level="ERROR")[:3]:
        print(line)
    """
)
PTC = run_code(
    f"""
    from collections import Counter
    errors = Counter()
    messages = {{}}
    for svc in list_services():
        for f in list_log_files(service=svc["name"], date="{DATE}"):
            for line in read_log(path=f["path"], level="ERROR"):
                stamp, level, host, req, message = line.split(" ", 4)
                if "T14:" in stamp:
                    errors[svc["name"]] += 1
                    messages.setdefault(svc["name"], Counter())[message] += 1
    (top, n), (second, m) = errors.most_common(2)
    msg, k = messages[top].most_common(1)[0]
    print(f"top: {{top}} with {{n}} errors; most frequent: {{msg}} ({{k}})")
    print(f"runner-up: {{second}} with {{m}} errors")
    """
)


def _answer() -> str:
    top, count, message, message_count, second, second_count = EXPECTED
    return (
        f"Between 14:00 and 15:00 UTC, **{top}** logged the most errors: {count} ERROR "
        f"lines. Its most frequent error was `{message}` ({message_count} times), which "
        f"points at the ledger database. The runner-up was {second} with {second_count} "
        "errors, a normal baseline."
    )


_PTC = (
    turn(EXPLORE, text="First a look at the log files and the line format."),
    turn(PTC),
    final(_answer()),
)

SCENARIO = Scenario(
    name="incident_triage",
    title="Incident triage across log files",
    prompt=PROMPT,
    tools=(list_services, list_log_files, read_log),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=(
        f"{EXPECTED[0]} logged the most errors: {EXPECTED[1]} ERROR",
        f"{EXPECTED[2]} ({EXPECTED[3]} times",
        f"{EXPECTED[4]} with {EXPECTED[5]} errors",
    ),
    classic=(*CLASSIC, final(_answer())),
    ptc=_PTC,
    # Twelve large log reads: the snippets stay cheaper than any direct call.
    hybrid=_PTC,
    explores=True,
)
