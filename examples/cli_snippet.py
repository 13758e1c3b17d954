# ruff: noqa: F821  (the tools are provided by `ptcbox run --tools cli_tools:TOOLS`)
"""A snippet as a model writes it; run it with ``ptcbox run`` (see cli_tools.py)."""

reports = [get_weather(city=city) for city in list_cities()]
warmest = max(reports, key=lambda report: report["temperature_c"])
for report in reports:
    print(f"{report['city']}: {report['temperature_c']} °C, {report['conditions']}")
print("warmest:", warmest["city"])
warmest["city"]
