"""copy.deepcopy(x, memo) of a host object never hands its private state to the snippet.

The stdlib's ``deepcopy`` stores what it copies in the memo (``memo[id(original)] =
copy``) and keeps every original it copied alive in ``memo[id(memo)]``. A host object is
copied through its own reduce protocol, so its state, the real ``__dict__`` of an object
without ``__getstate__``, went into the snippet's memo: ``copy.deepcopy(pow, m)`` (a bound
method of the process-wide size limits) left the limits' real ``__dict__`` in
``m[id(m)]``, where the snippet raised ``max_repeat_bytes`` for every later execution in
the process; ``copy.deepcopy(bytes, m)`` left the unchecked ``bytes`` constructor behind
the sized stand-in. The sandbox's ``copy`` copies host objects with a memo of its own
(``sandbox/_modspecs_more.py``). Control: the real ``copy`` module (the module views
off). Each control and refusal runs its snippet in a fresh child or under the fix: the
limits a failing refusal would raise are those of this process, so the limits attack
runs last and checks them.
"""

from __future__ import annotations

import pytest

from ptcbox.runtimes import ThreadRuntime

from ._proof import Attack, assert_control, assert_refused, by_id

pytestmark = pytest.mark.anyio

_SIZE = "result size of '*' exceeded: 100,000,000 bytes > limit"
_SIZE_BYTES = "result size of 'bytes(n)' exceeded: 100,000,000 bytes > limit"

ATTACKS = by_id(
    [
        Attack(
            id="limits_dict_kept_alive",
            code=(
                "import copy\nm = {}\ncopy.deepcopy(pow, m)\n"
                "for v in m[id(m)]:\n"
                "    if type(v) is dict and 'max_repeat_bytes' in v:\n"
                "        v['max_repeat_bytes'] = 10 ** 12\n"
                "print('repeat', len('a' * 100_000_000))"
            ),
            line=7,
            error_type="ArithmeticLimitExceeded",
            message=_SIZE,
            guard="module_views",
            marker="repeat 100000000",
        ),
        Attack(
            id="unchecked_bytes_in_memo",
            code=(
                "import copy\nm = {}\ntry:\n    copy.deepcopy(bytes, m)\nexcept RecursionError:\n"
                "    pass\n"
                "raw = [v['_real'] for v in m.values() if type(v) is dict and '_real' in v]\n"
                "print('raw', len((raw or [bytes])[0](100_000_000)))"
            ),
            line=8,
            error_type="ArithmeticLimitExceeded",
            message=_SIZE_BYTES,
            guard="module_views",
            marker="raw 100000000",
        ),
    ]
)


@pytest.mark.parametrize("attack", ["unchecked_bytes_in_memo", "limits_dict_kept_alive"])
async def test_deepcopy_memo_never_holds_host_state(attack: str) -> None:
    proof = ATTACKS[attack]
    assert_control(proof, ATTACKS.values())  # the real copy: the state lands in the memo
    runtime = ThreadRuntime()
    try:
        result = await runtime.execute(proof.code, {}, timeout=30)
        assert_refused(proof, result)
        # and the limits of this process are what they were
        again = await runtime.execute("len('a' * 100_000_000)", {}, timeout=30)
        assert again.error_type == "ArithmeticLimitExceeded", again
    finally:
        await runtime.aclose()


async def test_deepcopy_still_copies_host_and_own_objects() -> None:
    """Host objects inside the snippet's structures are copied; cycles and the
    snippet's own objects work as in CPython; a memo argument still maps them."""
    code = (
        "import copy, datetime\n"
        "class S:\n    def __init__(self):\n        self.v = [1]\n"
        "d = datetime.timedelta(days=2)\nbox = [d, S(), {'k': d}]\nbox.append(box)\n"
        "m = {}\nc = copy.deepcopy(box, m)\n"
        "print(c[0] == d, c[1].v, c[1] is not box[1], c[3] is c, m[id(box)] is c)"
    )
    runtime = ThreadRuntime()
    try:
        result = await runtime.execute(code, {}, timeout=30)
    finally:
        await runtime.aclose()
    assert result.ok, result.error
    assert result.stdout == "True [1] True True True\n"
