"""``--variant NAME:KEY=VALUE,...`` of the server benches: extra environment per server, side by side."""

from __future__ import annotations

VARIANT_HELP = "Also run with a server started with these extra environment variables (repeatable)."


Variant = tuple[str, dict[str, str]]


def parse_variants(specs: list[str], base: Variant = ("default", {})) -> list[Variant]:
    """``[base, (name, env), ...]`` from ``NAME:KEY=VALUE,KEY=VALUE`` specs."""
    variants = [base]
    for spec in specs:
        name, _, pairs = spec.partition(":")
        variants.append((name, dict(pair.split("=", 1) for pair in pairs.split(",") if pair)))
    return variants
