"""Run a model-written snippet that calls plain Python functions as tools.

    .venv/bin/python examples/basic.py

Each function becomes a tool under its own name; its docstring is its description.
The snippet gets back values (not text), catches a failing tool as ``ToolError``, and
its trailing expression comes back as ``result.value``.
"""

from __future__ import annotations

import ptcbox

STOCK = {"apples": 12, "pears": 0, "plums": 7}
PRICES = {"apples": 0.5, "pears": 0.75, "plums": 1.25}


def list_products() -> list[str]:
    """List every product name, sorted."""
    return sorted(STOCK)


def get_stock(product: str) -> int:
    """Units of a product in stock.

    Args:
        product: Product name, e.g. ``"apples"``.

    Raises:
        KeyError: If the product does not exist.
    """
    return STOCK[product]


def get_price(product: str) -> float:
    """Unit price of a product, in US dollars."""
    return PRICES[product]


SNIPPET = """
in_stock = {}
for product in list_products():
    units = get_stock(product=product)
    if units:
        in_stock[product] = units * get_price(product)   # positional arguments work too
for name, value in in_stock.items():
    print(f"{name}: ${value:.2f} in stock")
try:
    get_stock(product="kiwis")
except KeyError as err:  # the tool's own exception type (also a ToolError)
    print("as expected:", type(err).__name__, err, isinstance(err, ToolError))
sorted(in_stock)
"""


def main() -> None:
    result = ptcbox.execute(SNIPPET, tools=[list_products, get_stock, get_price])
    print(result.stdout, end="")
    print("value:", result.value)
    failed = [call.name for call in result.tool_calls if not call.ok]
    print(f"{len(result.tool_calls)} tool calls, failed: {failed}")

    broken = ptcbox.execute("total = 1 / 0")
    print("return code:", broken.return_code, "error type:", broken.error_type)
    print("what a model sees:")
    print(broken.render())


if __name__ == "__main__":
    main()
