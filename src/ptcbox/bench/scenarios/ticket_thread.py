"""Reading free text: what a customer asked for in a ticket, and what support promised.

The answer is in the wording of a message thread, which code cannot condense without
knowing what it says: the snippet has to print the thread for the model to read, so it
costs the thread plus the code. Hybrid calls the tool directly.
"""

from __future__ import annotations

import re
from typing import Any

from ptcbox.bench._scenario import Fetch, Scenario, call, final, run_code, turn
from ptcbox.bench.scenarios import _shop

TICKET = "T-7781"

PROMPT = (
    f"Read support ticket {TICKET}: what does the customer want, and what exactly did our "
    "agent promise her (amount, how it is paid, by when, and whether she must return "
    "anything)?"
)


def _promise(ticket: dict[str, Any]) -> tuple[str, float, int, int]:
    """``(what she wants, refund amount, business days, days to return)``."""
    wants = ticket["messages"][0]["body"]
    assert "money back" in wants
    (last,) = [m for m in ticket["messages"] if "(support)" in m["from"]][-1:]
    amount = re.search(r"refund of ([\d.]+) USD", last["body"])
    days = re.search(r"within (\d+) business days", last["body"])
    drop = re.search(r"within (\d+) days", last["body"])
    assert amount and days and drop
    return "refund for the lamp", float(amount[1]), int(days[1]), int(drop[1])


def reference() -> tuple[str, float, int, int]:
    """The customer's request and the promise, read from the thread's data."""
    return _promise(_shop._TICKETS[TICKET])


def solve(fetch: Fetch) -> tuple[str, float, int, int]:
    """The answer from tool results: the ticket's thread."""
    return _promise(fetch("get_ticket", ticket_id=TICKET))


EXPECTED = ("refund for the lamp", 89.9, 5, 14)

ANSWER = """
Marta Ilic wants a refund for the Arc floor lamp, whose glass shade arrived cracked; she
explicitly does not want a replacement or a voucher, and keeps the bulbs.

Lena Hoffmann (support) promised a refund of 89.90 USD for the lamp to her original card,
arriving within 5 business days. She must return the lamp, but at no cost: a prepaid DHL
label is attached and she has 14 days to drop it off. Shipping is not refunded.
"""
PTC = run_code(
    f"""
    t = get_ticket(ticket_id="{TICKET}")
    print(t["subject"], "|", t["status"], "|", t["order_id"])
    for m in t["messages"]:
        print(f"--- {{m['from']}} at {{m['at']}}:")
        print(m["body"])
    """
)
_DIRECT = turn(call("get_ticket", ticket_id=TICKET))

SCENARIO = Scenario(
    name="ticket_thread",
    title="What a support thread promised (reading free text)",
    prompt=PROMPT,
    tools=_shop.TOOLS,
    reference=reference,
    solve=solve,
    expected=EXPECTED,
    facts=("wants a refund", "89.90 USD", "within 5 business days", "14 days"),
    classic=(_DIRECT, final(ANSWER)),
    ptc=(turn(PTC), final(ANSWER)),
    # The model must read the whole thread either way: the direct call is cheaper.
    hybrid=(_DIRECT, final(ANSWER)),
    shape="free text",
)
