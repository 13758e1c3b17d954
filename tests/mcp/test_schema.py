"""JSON Schema -> signatures, annotations and identifiers (no server needed)."""

from __future__ import annotations

import inspect
import typing
from typing import Any, Literal

import pytest

pytest.importorskip("mcp")

from ptcbox.mcp._schema import SchemaTypes, python_identifier, result_wrapper
from ptcbox.projections._stubs import format_annotation


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("get-stock", "get_stock"),
        ("fs.read", "fs_read"),
        ("notes/read", "notes_read"),
        ("class", "class_"),
        ("match", "match_"),
        ("2fa", "tool_2fa"),
        ("_private", "private"),
        ("a--b..c", "a_b_c"),
        ("日本", "tool"),
    ],
)
def test_python_identifier(name: str, expected: str) -> None:
    assert python_identifier(name) == expected


def test_result_wrapper_only_for_the_single_required_result_property() -> None:
    wrapped = {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert result_wrapper(wrapped) == {"type": "integer"}
    assert result_wrapper({"properties": {"result": {}}, "required": []}) is None
    assert result_wrapper({"properties": {"result": {}, "n": {}}, "required": ["result"]}) is None
    assert result_wrapper(None) is None


def test_signature_orders_required_first_with_defaults_and_renames() -> None:
    schema = {
        "type": "object",
        "properties": {
            "from": {"type": "string", "description": "Start date."},
            "limit": {"type": "integer", "default": 10},
            "user-id": {"type": "string"},
            "mode": {"enum": ["fast", "slow"]},
        },
        "required": ["user-id"],
    }
    types = SchemaTypes()
    signature, params = types.signature("t", schema, int)
    assert list(signature.parameters) == ["user_id", "from_", "limit", "mode"]
    assert signature.parameters["user_id"].default is inspect.Parameter.empty
    assert signature.parameters["limit"].default == 10
    assert signature.parameters["from_"].default is None
    assert signature.parameters["from_"].annotation == str | None
    assert signature.parameters["mode"].annotation == Literal["fast", "slow"] | None
    assert {p.python_name: p.wire_name for p in params}["from_"] == "from"
    assert signature.return_annotation is int


def test_refs_nested_objects_and_arrays_become_typeddicts() -> None:
    schema = {
        "$defs": {
            "Address": {
                "type": "object",
                "title": "Address",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            }
        },
        "type": "object",
        "title": "Customer",
        "properties": {
            "name": {"type": "string"},
            "addresses": {"type": "array", "items": {"$ref": "#/$defs/Address"}},
            "score": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        },
        "required": ["name", "addresses", "score"],
    }
    returns = SchemaTypes().returns("get_customer", schema)
    hints = typing.get_type_hints(returns)
    assert returns.__name__ == "Customer"
    assert format_annotation(hints["addresses"]) == "list[Address]"
    assert hints["score"] == float | None


def test_wrapped_scalar_and_untyped_outputs() -> None:
    types = SchemaTypes()
    wrapped = {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert types.returns("n", wrapped) is int
    assert types.returns("n", None) is Any
    free_object = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert types.returns("n", free_object) == dict[str, int]


def test_recursive_refs_stop() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["children"],
            }
        },
        "$ref": "#/$defs/Node",
    }
    returns = SchemaTypes().returns("tree", schema)
    assert typing.get_type_hints(returns)["children"] == list[dict[str, Any]]


def test_keys_that_are_not_identifiers_fall_back_to_dict() -> None:
    schema = {"type": "object", "properties": {"user-id": {"type": "string"}}}
    assert SchemaTypes().returns("t", schema) == dict[str, Any]


def test_nested_input_objects_become_typeddicts_in_the_stub() -> None:
    from ptcbox.projections._stubs import render_stubs

    schema = {
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "title": "Address",
                "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["city", "zip"],
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["address"],
    }
    signature, _ = SchemaTypes().signature("ship", schema, Any)

    class Ship:  # a ToolProjection with a signature, as MCPToolProjection has
        name = "ship"
        doc = "Ship a parcel."

        def __init__(self) -> None:
            self.signature = signature

        def __call__(self, **kwargs: Any) -> Any:
            return kwargs

    stubs = render_stubs({"ship": Ship()})
    assert "class Address(TypedDict):\n    city: str\n    zip: str" in stubs
    assert "def ship(address: Address, tags: list[str] | None = None) -> Any:" in stubs
