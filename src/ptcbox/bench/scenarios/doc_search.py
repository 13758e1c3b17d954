"""Document search and summarise.

What are the current retention periods for logs, customer data and backups? The answer
is in one current policy; an older, superseded version says otherwise. Classic: search,
read the current policy (the search result already marks the old one superseded),
answer. PTC: the stubs do not say how a policy words its periods, so the first snippet's
guess (sentences with "retention period") finds nothing; the second prints the
sentences that name the data types of the question, then the model writes the summary.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn

_BOILERPLATE = [
    "This document applies to all employees, contractors and systems operated by the company.",
    "Exceptions require written approval from the document owner and the security team.",
    "Teams review their compliance with this document every quarter during planning.",
    "Questions about this document go to the owner listed in the header.",
    "Where a regulation sets a stricter requirement, the regulation takes precedence.",
    "Changes to this document are announced in the engineering newsletter.",
    "Systems in scope are listed in the service catalogue with their data classification.",
    "Owners must keep the runbook links in the service catalogue up to date.",
    "Violations are handled through the standard disciplinary process.",
    "Automation is preferred over manual steps wherever a control can be enforced in code.",
    "Evidence of each control is collected for the annual SOC 2 audit.",
    "Personal data is classified as confidential unless a stricter class applies.",
    "Access to production requires a ticket and is reviewed every 90 days by the manager.",
    "Encryption at rest uses AES-256 with keys managed in the cloud KMS.",
    "Third-party processors are listed in the sub-processor register.",
]

_DOCS: list[dict[str, Any]] = [
    {
        "doc_id": "DOC-201",
        "title": "Data Retention Policy v3",
        "status": "current",
        "updated_at": "2025-02-11",
        "author": "Privacy Office",
        "key": [
            "Application logs are retained for 30 days in hot storage and then deleted.",
            "Audit logs are retained for 400 days to cover the annual audit window.",
            "Customer data is deleted 90 days after account closure.",
            "Database backups are retained for 35 days and encrypted with a separate key.",
        ],
    },
    {
        "doc_id": "DOC-118",
        "title": "Data Retention Policy v2",
        "status": "superseded",
        "superseded_by": "DOC-201",
        "updated_at": "2022-06-30",
        "author": "Privacy Office",
        "key": [
            "Application logs are retained for 90 days.",
            "Audit logs are retained for 365 days.",
            "Customer data is deleted 180 days after account closure.",
            "Database backups are retained for 30 days.",
        ],
    },
    {
        "doc_id": "DOC-215",
        "title": "Logging Standards",
        "status": "current",
        "updated_at": "2024-11-04",
        "author": "Platform Engineering",
        "key": [
            "Every service logs in JSON with a request id and the tenant id.",
            "How long logs are retained is set by the data retention policy, not here.",
        ],
    },
    {
        "doc_id": "DOC-207",
        "title": "Backup and Restore Runbook",
        "status": "current",
        "updated_at": "2025-01-20",
        "author": "Database Reliability",
        "key": [
            "Point-in-time recovery is tested monthly on a staging copy.",
            "Restores of customer data need approval from the incident commander.",
        ],
    },
    {
        "doc_id": "DOC-230",
        "title": "Incident Response Plan",
        "status": "current",
        "updated_at": "2024-09-12",
        "author": "Security",
        "key": ["Incident timelines and evidence are retained with the audit logs."],
    },
    {
        "doc_id": "DOC-241",
        "title": "GDPR Subject Access Requests",
        "status": "current",
        "updated_at": "2024-05-02",
        "author": "Privacy Office",
        "key": ["Requests are answered within 30 days of identity verification."],
    },
    {
        "doc_id": "DOC-252",
        "title": "Vendor Risk Management",
        "status": "current",
        "updated_at": "2023-12-01",
        "author": "Procurement",
        "key": ["Vendors holding customer data are reassessed every year."],
    },
    {
        "doc_id": "DOC-263",
        "title": "Access Review Procedure",
        "status": "current",
        "updated_at": "2025-03-03",
        "author": "Security",
        "key": ["Dormant accounts are disabled after 45 days without a login."],
    },
    {
        "doc_id": "DOC-274",
        "title": "Engineering Onboarding Checklist",
        "status": "current",
        "updated_at": "2025-04-15",
        "author": "People Ops",
        "key": ["New engineers read the logging standards and the data retention policy."],
    },
    {
        "doc_id": "DOC-285",
        "title": "Data Classification Standard",
        "status": "current",
        "updated_at": "2024-02-19",
        "author": "Security",
        "key": ["Customer data and audit logs are classified as confidential."],
    },
]


def _build_bodies() -> dict[str, str]:
    rng = random.Random(55)
    bodies = {}
    for doc in _DOCS:
        sections = []
        for title in ("Purpose", "Scope", "Policy", "Responsibilities", "Review"):
            sentences = rng.sample(_BOILERPLATE, k=rng.randint(7, 12))
            if title == "Policy":
                sentences = list(doc["key"]) + sentences[:3]
            sections.append(f"## {title}\n\n" + " ".join(sentences))
        header = f"# {doc['title']}\n\nOwner: {doc['author']}. Last updated {doc['updated_at']}."
        if doc["status"] == "superseded":
            header += f" SUPERSEDED by {doc['superseded_by']}; kept for reference only."
        bodies[doc["doc_id"]] = header + "\n\n" + "\n\n".join(sections)
    return bodies


_BODIES = _build_bodies()
_WORD = re.compile(r"[a-z0-9]+")


def search_docs(query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Full-text search over the internal wiki.

    Args:
        query: Words to look for.
        limit: Most results to return.

    Returns:
        Matches, best first: ``doc_id``, ``title``, ``score``, ``snippet`` (the first
        300 characters of the body), ``updated_at``, ``author``, ``status``.
    """
    words = set(_WORD.findall(query.lower()))
    hits = []
    for doc in _DOCS:
        text = (doc["title"] + " " + doc["title"] + " " + _BODIES[doc["doc_id"]]).lower()
        tokens = _WORD.findall(text)
        score = sum(tokens.count(word) for word in words)
        if score:
            hits.append((score, doc))
    hits.sort(key=lambda hit: (-hit[0], hit[1]["doc_id"]))
    return [
        {
            "doc_id": doc["doc_id"],
            "title": doc["title"],
            "score": round(score / 10, 2),
            "snippet": _BODIES[doc["doc_id"]][:300],
            "updated_at": doc["updated_at"],
            "author": doc["author"],
            "status": doc["status"],
        }
        for score, doc in hits[:limit]
    ]


def get_document(doc_id: str) -> dict[str, Any]:
    """Fetch a wiki document in full.

    Args:
        doc_id: A ``doc_id`` from ``search_docs``.

    Returns:
        ``doc_id``, ``title``, ``status`` (``current`` or ``superseded``),
        ``superseded_by`` (a doc id or ``None``), ``updated_at``, ``author``, ``body``
        (Markdown).

    Raises:
        KeyError: If there is no such document.
    """
    for doc in _DOCS:
        if doc["doc_id"] == doc_id:
            return {
                "doc_id": doc_id,
                "title": doc["title"],
                "status": doc["status"],
                "superseded_by": doc.get("superseded_by"),
                "updated_at": doc["updated_at"],
                "author": doc["author"],
                "body": _BODIES[doc_id],
            }
    raise KeyError(f"no document {doc_id!r}")


_PERIOD = re.compile(r"(.+?) (?:are|is) (?:retained for|deleted) (\d+ days)")


def _periods(sentences: list[str]) -> dict[str, str]:
    periods = {}
    for sentence in sentences:
        match = _PERIOD.match(sentence)
        if match is not None:
            periods[match.group(1).lower()] = match.group(2)
    return periods


def reference() -> dict[str, str]:
    """Retention per data type from the current policy, ``{type: period}``."""
    (policy,) = [
        d for d in _DOCS if d["title"].startswith("Data Retention") and d["status"] == "current"
    ]
    return _periods(policy["key"])


def solve(fetch: Fetch) -> dict[str, str]:
    """The answer from tool results: the current policy's text (finding it is a search)."""
    policy = fetch("get_document", doc_id="DOC-201")
    if policy["status"] != "current":
        raise ValueError("DOC-201 is not current")
    return _periods(re.split(r"(?<=[.])\s+|\n+", policy["body"]))


EXPECTED = {
    "application logs": "30 days",
    "audit logs": "400 days",
    "customer data": "90 days",
    "database backups": "35 days",
}

PROMPT = (
    "What are our current retention periods for application logs, audit logs, customer "
    "data after account closure, and database backups? Use the internal wiki, cite the "
    "document you rely on, and ignore superseded documents."
)

CLASSIC = (
    turn(call("search_docs", query="data retention policy logs backups", limit=10)),
    turn(
        call("get_document", doc_id="DOC-201"),
        text="DOC-201 is the current retention policy (DOC-118 is superseded); reading it.",
    ),
)
_SEARCH = """
import re
hits = search_docs(query="data retention policy logs backups", limit=10)
for h in hits[:5]:
    print(h["doc_id"], h["status"], h["updated_at"], h["title"])
policy = [h for h in hits if h["status"] == "current" and "retention" in h["title"].lower()][0]
doc = get_document(doc_id=policy["doc_id"])
sentences = list(dict.fromkeys(s.strip() for s in re.split(r"(?<=[.])\\s+|\\n+", doc["body"])))
print("reading", doc["doc_id"], doc["title"], doc["status"])
"""
GUESS = run_code(
    _SEARCH
    + """
for s in sentences:
    if re.search(r"retention period", s, re.I):
        print("-", s)
"""
)
FIXED = run_code(
    _SEARCH
    + """
for s in sentences:
    if re.search(r"\\blogs?\\b|customer data|backups?", s, re.I):
        print("-", s)
"""
)
ANSWER = """
Per the current **Data Retention Policy v3 (DOC-201, updated 2025-02-11)**:

- Application logs: 30 days (hot storage, then deleted)
- Audit logs: 400 days (covers the annual audit window)
- Customer data: deleted 90 days after account closure
- Database backups: 35 days (encrypted with a separate key)

The older Data Retention Policy v2 (DOC-118) is superseded by DOC-201 and was not used.
"""
_PTC = (
    turn(GUESS, text="Searching the wiki and pulling the retention sentences of the policy."),
    turn(FIXED, text="No sentence says 'retention period'; matching the data types instead."),
    final(ANSWER),
)

SCENARIO = Scenario(
    name="doc_search",
    title="Document search and summarise",
    prompt=PROMPT,
    tools=(search_docs, get_document),
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=(
        "DOC-201",
        "application logs: 30 days",
        "audit logs: 400 days",
        "customer data: deleted 90 days",
        "database backups: 35 days",
    ),
    absent=("365 days", "180 days"),
    classic=(*CLASSIC, final(ANSWER)),
    ptc=_PTC,
    # The search results and the document are large: the snippets stay cheaper.
    hybrid=_PTC,
    shape="search and read",
)
