"""Tool-history repair (case B28 and its whole kind)."""

from __future__ import annotations

from ptcbox.agent_glue import Message, ToolCall, repair_tool_history

INTERRUPTED = "Tool call interrupted by user"


def _assistant(*ids: str) -> Message:
    return Message.assistant("", tuple(ToolCall(i, "tool", "{}") for i in ids))


def test_B28_dangling_call_gets_an_interrupted_result_right_after_the_others() -> None:
    """B28: assistant calls c1 and c2, only c1 answered: c2 gets an is_error result."""
    history = [
        Message.user("go"),
        _assistant("c1", "c2"),
        Message.tool("c1", "ok"),
        Message.user("what happened?"),
    ]
    repair = repair_tool_history(history)
    assert repair.changed and repair.synthesized == 1
    assert [m.role for m in repair.messages] == ["user", "assistant", "tool", "tool", "user"]
    added = repair.messages[3]
    assert (added.tool_call_id, added.content, added.is_error) == ("c2", INTERRUPTED, True)
    assert added.name == "tool"
    assert history[2] == Message.tool("c1", "ok")  # the input is untouched
    assert len(history) == 4


def test_valid_history_is_unchanged() -> None:
    history = [Message.user("a"), _assistant("c1"), Message.tool("c1", "x"), Message.assistant("b")]
    repair = repair_tool_history(history)
    assert not repair.changed and list(repair.messages) == history
    assert (repair.synthesized, repair.dropped_orphans, repair.dropped_duplicates) == (0, 0, 0)


def test_orphans_duplicates_and_order() -> None:
    history = [
        Message.tool("zz", "orphan before any call"),
        Message.user("go"),
        _assistant("c1", "c2", "c3"),
        Message.tool("c3", "three"),
        Message.tool("c1", "one"),
        Message.tool("c1", "one again"),
        Message.tool("c9", "orphan in turn"),
        Message.tool("c2", "two"),
    ]
    repair = repair_tool_history(history)
    assert [m.content for m in repair.messages] == ["go", "", "one", "two", "three"]
    assert repair.dropped_orphans == 2 and repair.dropped_duplicates == 1
    assert repair.reordered >= 2 and repair.synthesized == 0


def test_same_id_in_different_turns_matches_its_own_turn() -> None:
    history = [
        _assistant("call_0"),
        Message.tool("call_0", "first turn"),
        Message.assistant("thinking more"),
        _assistant("call_0"),  # a provider that reuses ids per turn
        Message.user("stop that"),  # queued user text landed between call and result
        Message.tool("call_0", "second turn"),
    ]
    repair = repair_tool_history(history)
    contents = [(m.role, m.content) for m in repair.messages]
    assert contents == [
        ("assistant", ""),
        ("tool", "first turn"),
        ("assistant", "thinking more"),
        ("assistant", ""),
        ("tool", "second turn"),
        ("user", "stop that"),
    ]


def test_trailing_turn_without_results_and_openai_dicts() -> None:
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
            ],
        },
    ]
    repair = repair_tool_history(history)
    assert repair.synthesized == 2
    assert [m.to_openai() for m in repair.messages[2:]] == [
        {"role": "tool", "tool_call_id": "a", "content": INTERRUPTED},
        {"role": "tool", "tool_call_id": "b", "content": INTERRUPTED},
    ]
