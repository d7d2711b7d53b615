"""The four ways KG-R1's server writes a relation list (``KG_RELATION_FORMAT``), as NeoRAG's chat answers do.

``flat``: ``r1, r2`` in the order given. The three hierarchical forms group dotted Freebase relations as
domain / type / property: three parts are ``domain.type.property``; four or more take the first two
parts as the domain, the third as the type and the rest (re-joined with dots) as the property; fewer
than three parts go under domain ``other``, type ``unknown``, whole. Domains, types and properties are
sorted. ``full_indent`` puts each level on its own line (two spaces per level), ``mixed`` writes a type's
properties on the type's line (``  type: p1, p2``), ``compact`` writes ``domain.type: p1, p2`` lines.
"""

from __future__ import annotations

from collections import defaultdict

FORMATS = ("flat", "full_indent", "mixed", "compact")
Grouped = dict[str, dict[str, list[str]]]


def group_relations(relations: list[str]) -> Grouped:
    """``{domain: {type: [property, ...]}}`` (empty relation names are left out)."""
    grouped: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for relation in relations:
        if not relation:
            continue
        parts = relation.split(".")
        if len(parts) >= 4:
            grouped[f"{parts[0]}.{parts[1]}"][parts[2]].append(".".join(parts[3:]))
        elif len(parts) == 3:
            grouped[parts[0]][parts[1]].append(parts[2])
        else:
            grouped["other"]["unknown"].append(relation)
    return grouped


def format_relations(relations: list[str], fmt: str = "flat") -> str:
    """``relations`` written in ``fmt`` (one of :data:`FORMATS`; an unknown name means full_indent)."""
    if fmt == "flat":
        return ", ".join(relations)
    grouped = group_relations(relations)
    lines: list[str] = []
    for domain in sorted(grouped):
        types = grouped[domain]
        if fmt == "compact":
            lines += [f"{domain}.{t}: {', '.join(sorted(types[t]))}" for t in sorted(types)]
            continue
        lines.append(domain)
        for type_name in sorted(types):
            props = sorted(types[type_name])
            if fmt == "mixed":
                lines.append(f"  {type_name}: {', '.join(props)}")
            else:
                lines.append(f"  {type_name}")
                lines += [f"    {p}" for p in props]
    return "\n".join(lines)
