"""Golden KG-R1 answers: write our fixture in KG-R1's data layout, then record the real server's answers.

Two steps (the outputs are committed under tests/fixtures/kg_r1_golden/):

    .venv/bin/python scripts/kg_r1_golden.py data            # writes data_kg/ (our data, KG-R1 layout)
    .venv/bin/python scripts/kg_r1_golden.py record --checkout /tmp/kgr1 --python /tmp/kgr1-venv/bin/python

``record`` RUNS an already-fetched checkout of github:Jinyeop3110/KG-R1 (its ``kg_r1/search`` package,
served by ``uvicorn kg_r1.search.server:app`` from the checkout directory, as its start script does) on
127.0.0.1 at a free port, once per configuration (entity names or MIDs, each relation format), sends
every action of :func:`actions` one request at a time and writes the answers to ``golden.jsonl``. It
neither fetches nor installs anything; nothing of the checkout is copied here.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "kg_r1_golden"
PQ = ROOT / "tests" / "fixtures" / "kg" / "pathquestion"
sys.path.insert(0, str(ROOT))

# --- our data, written in KG-R1's layout ---------------------------------------------------------------

# Hand-written samples (Freebase-style relations of 1 to 5 dotted parts, case variants, duplicate names
# at distinct indices, quotes, non-ASCII names, an isolated entity). Entities are written "name" or
# "name#k" (k distinguishes two vocabulary entries that carry the same name).
HAND: dict[str, list[tuple[str, str, str]]] = {
    "WebQTrn-0": [
        ("Justin Bieber", "music.artist.album", "My World"),
        ("Justin Bieber", "music.artist.album", "My World 2.0"),
        ("Justin Bieber", "music.artist.album", "Believe#1"),
        ("Justin Bieber", "music.artist.album", "Believe#2"),
        ("Justin Bieber", "music.artist.track", "Believe#2"),
        ("Justin Bieber", "people.person.sibling_s", "m.0gxnnwc"),
        ("m.0gxnnwc", "people.sibling_relationship.sibling", "Jaxon Bieber"),
        ("Jaxon Bieber", "people.person.parents", "Jeremy Bieber"),
        ("Justin Bieber", "people.person.parents", "Jeremy Bieber"),
        ("Justin Bieber", "people.person.parents", "Pattie Mallette"),
        ("Justin Bieber", "people.person.nationality", "Canada"),
        ("Justin Bieber", "base.gender.personal_gender_identity.gender_identity", "Male"),
        ("Justin Bieber", "base.popstra.celebrity.friendship.participant", "\"Weird Al\" Yankovic"),
        ("Justin Bieber", "kg.alias", "JB"),
        ("Justin Bieber", "spouse", "Hailey Baldwin"),
        ("Justin Bieber", "common.topic.notable_types", "Musical Artist"),
        ("justin bieber", "common.topic.notable_types", "Musical Artist"),
        ("justin bieber", "common.topic.alias", "Biebs"),
        ("Jeremy Bieber", "people.person.gender", "Male"),
        ("Pattie Mallette", "people.person.gender", "Female"),
        ("\"Weird Al\" Yankovic", "music.artist.genre", "Parody"),
        ("Beyoncé", "music.artist.genre", "Pop music"),
        ("Justin Bieber", "music.artist.genre", "Pop music"),
        ("Canada", "location.country.capital", "Ottawa"),
        ("Pop music", "music.genre.artists", "Beyoncé"),
    ],
    "WebQTrn-1": [
        ("Paris", "location.location.containedby", "France"),
        ("paris", "location.location.containedby", "Texas"),
        ("Paris", "common.topic.notable_types", "City/Town/Village"),
        ("paris", "common.topic.notable_types", "City/Town/Village"),
        ("Paris", "location.location.people_born_here", "Zoë Müller"),
        ("Zürich", "location.location.containedby", "Switzerland"),
        ("Springfield#1", "location.location.containedby", "Illinois"),
        ("Springfield#2", "location.location.containedby", "Massachusetts"),
        ("Springfield#2", "location.citytown.postal_codes", "01101"),
        ("France", "location.country.capital", "Paris"),
        ("Texas", "location.location.contains", "paris"),
    ],
    "WebQTrn-2": [],  # a sample with no tuples: the real server answers "not found"
    "WebQTrn-5": [("Old Sample Entity", "people.person.gender", "Male")],  # replaced by the test split
}
TEST_HAND: dict[str, list[tuple[str, str, str]]] = {
    "WebQTest-0": [
        ("Barack Obama", "people.person.place_of_birth", "Honolulu"),
        ("Barack Obama", "people.person.spouse_s", "m.02nqglv"),
        ("m.02nqglv", "people.marriage.spouse", "Michelle Obama"),
        ("Honolulu", "location.location.containedby", "Hawaii"),
        ("Michelle Obama", "people.person.place_of_birth", "Chicago"),
    ],
    "WebQTrn-5": [("New Sample Entity", "people.person.gender", "Female")],
}
ISOLATED = {"WebQTrn-1": ["Lonely Entity"], "WebQTest-0": ["Lonely Entity"]}
EXTRA_ENTITIES = ["Paris#3", "Nowhere Town"]  # in the vocabulary, in no sample
EXTRA_RELATIONS = ["film.film.sequel", "people.person.height_meters", "location.location.area"]
CWQ: dict[str, list[tuple[str, str, str]]] = {
    "WebQTrn-0_cwq": [("Justin Bieber", "music.artist.album", "Purpose"),
                      ("Justin Bieber", "people.person.nationality", "Canada")],
}
PQ_SAMPLES = 6
PQ_ENTITIES = 2  # entities asked about per PathQuestion sample, besides its topic


def _pq_samples() -> dict[str, list[tuple[str, str, str]]]:
    """The first PathQuestion 2-hop questions as 1-hop neighbourhoods (real triples, 1-part relations)."""
    from ingest.kg.pathquestion import neighbourhood, parse_path, read_kb

    adjacency: dict[str, list[tuple[str, str, str]]] = {}
    for triple in read_kb(PQ / "2H-kb.txt"):
        adjacency.setdefault(triple[0], []).append(triple)
        adjacency.setdefault(triple[2], []).append(triple)
    out: dict[str, list[tuple[str, str, str]]] = {}
    for index, line in enumerate((PQ / "PQ-2H.txt").read_text(encoding="utf-8").splitlines()):
        if len(out) == PQ_SAMPLES:
            break
        path = parse_path(line.split("\t")[2])
        if index % 40 == 0:
            out[f"PQ-2H-{index}"] = sorted(neighbourhood(adjacency, path[0][0], 1) | set(path))
    return out


class Vocab:
    """A growing entity or relation vocabulary (index order = first use)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, key: str) -> int:
        if key not in self.index:
            self.index[key] = len(self.items)
            self.items.append(key)
        return self.index[key]


def _mid(key: str, index: int) -> str:
    name = key.split("#")[0]
    return name if name.startswith("m.0") else f"m.0{index:04x}q"


def _write_dataset(folder: Path, splits: dict[str, dict[str, list[tuple[str, str, str]]]],
                   isolated: dict[str, list[str]], extra_entities: list[str], extra_relations: list[str]) -> None:
    ents, rels = Vocab(), Vocab()
    lines: dict[str, list[str]] = {}
    for split, samples in splits.items():
        rows = []
        for sid, triples in samples.items():
            tuples = [[ents(h), rels(r), ents(t)] for h, r, t in triples]
            members = sorted({i for h, _, t in tuples for i in (h, t)} | {ents(e) for e in isolated.get(sid, [])})
            topic = [tuples[0][0]] if tuples else []
            answers = [{"kb_id": _mid(ents.items[tuples[-1][2]], tuples[-1][2]),
                        "text": ents.items[tuples[-1][2]].split("#")[0]}] if tuples else []
            rows.append(json.dumps({"id": sid, "answers": answers, "question": f"question of {sid}",
                                    "entities": topic, "subgraph": {"tuples": tuples, "entities": members}}))
        lines[split] = rows
    for key in extra_entities:
        ents(key)
    for rel in extra_relations:
        rels(rel)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "entities_text.txt").write_text("".join(k.split("#")[0] + "\n" for k in ents.items),
                                              encoding="utf-8")
    (folder / "entities.txt").write_text("".join(_mid(k, i) + "\n" for i, k in enumerate(ents.items)),
                                         encoding="utf-8")
    (folder / "relations.txt").write_text("".join(r + "\n" for r in rels.items), encoding="utf-8")
    for split, rows in lines.items():
        (folder / split).write_text("".join(r + "\n" for r in rows), encoding="utf-8")


def write_data(base: Path) -> None:
    """``base/webqsp`` (hand-written + PathQuestion samples, both splits) and ``base/CWQ``."""
    train = {**HAND, **_pq_samples()}
    _write_dataset(base / "webqsp", {"train_simple.json": train, "test_simple.json": TEST_HAND},
                   ISOLATED, EXTRA_ENTITIES, EXTRA_RELATIONS)
    _write_dataset(base / "CWQ", {"train_simple.json": CWQ, "test_simple.json": {}}, {}, [], [])


# --- the actions sent --------------------------------------------------------------------------------------

NEW = ["get_relations_in", "get_relations_out", "get_entities_in", "get_entities_out"]
LEGACY = ["get_head_relations", "get_tail_relations", "get_head_entities", "get_tail_entities"]
REL_ACTIONS = ["get_relations", "get_relations_in", "get_relations_out"]


def _req(action: str, sample: str, entity: Any, relation: Any = None, dataset: str = "webqsp",
         **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"action_type": action, "dataset_name": dataset, "sample_id": sample,
                            "entity_id": entity}
    if relation is not None:
        item["relation"] = relation
    item.update(extra)
    return item


def _samples(data: Path, dataset: str, use_text: bool) -> dict[str, list[tuple[str, str, str]]]:
    """Each sample's triples as names (or MIDs), read back from our layout (test split wins)."""
    folder = data / dataset
    names = (folder / ("entities_text.txt" if use_text else "entities.txt")).read_text(encoding="utf-8").split("\n")
    rels = (folder / "relations.txt").read_text(encoding="utf-8").split("\n")
    out: dict[str, list[tuple[str, str, str]]] = {}
    for split in ("train_simple.json", "test_simple.json"):
        for line in (folder / split).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out[row["id"]] = [(names[h], rels[r], names[t]) for h, r, t in row["subgraph"]["tuples"]]
    return out


def actions(data: Path, use_text: bool, relations_only: bool = False,
            only: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Every action name x every outcome over our fixture (deterministic order); ``only``: the samples
    whose every entity is asked about (default all); ``relations_only``: relation actions only."""
    samples = _samples(data, "webqsp", use_text)
    items: list[dict[str, Any]] = []
    other_rel = "location.location.containedby"  # in the vocabulary, not in WebQTrn-0
    for sid, triples in samples.items():
        if only is not None and sid not in only:
            continue
        entities = sorted({e for h, _, t in triples for e in (h, t)})
        if sid.startswith("PQ-"):  # real data: a few entities each, the topic first
            entities = [triples[0][0]] + [e for e in entities if e != triples[0][0]][:PQ_ENTITIES]
        rels = sorted({r for _, r, _ in triples})
        for entity in entities:
            for action in REL_ACTIONS:
                items.append(_req(action, sid, entity))
            if relations_only:
                continue
            own = sorted({r for h, r, t in triples if entity in (h, t)})
            for relation in own[:1]:
                items.append(_req("get_entities_out", sid, entity, relation))
                items.append(_req("get_entities_in", sid, entity, relation))
            if entity == triples[0][0] and sid.startswith("WebQ"):
                for concept in ("people", "location", "music"):
                    items.append(_req("get_conditional_relations", sid, entity, concept=concept))
        if relations_only or not triples:
            continue
        entity = triples[0][0]
        items.append(_req("get_entities_out", sid, entity, rels[-1] if rels[-1] not in
                          {r for h, r, _ in triples if h == entity} else other_rel))  # in sample, not for entity
        items.append(_req("get_entities_out", sid, entity, "film.film.sequel"))  # in vocab, in no sample
        items.append(_req("get_entities_in", sid, entity, "no.such.relation"))  # not in the vocabulary
    if relations_only:
        return items
    s0, s1 = "WebQTrn-0", "WebQTrn-1"
    bieber = samples[s0][0][0]
    paris = samples[s1][0][0]
    items += [
        # case variants and their union, trimming, quotes
        *[_req(a, s1, e) for a in REL_ACTIONS for e in ("PARIS", " paris ", "pArIs", "Paris ", paris)],
        _req("get_entities_out", s1, "PARIS", "location.location.containedby"),
        _req("get_entities_out", s1, "paris", "common.topic.notable_types"),
        _req("get_entities_in", s1, "PARIS", "location.country.capital"),
        # names that several vocabulary entries carry (each entry is listed), and their union
        _req("get_entities_out", s0, bieber, "music.artist.album"),
        _req("get_entities_out", s0, bieber, "music.artist.track"),
        _req("get_entities_in", s0, "Believe", "music.artist.album"),
        _req("get_entities_out", s1, "Springfield", "location.location.containedby"),
        _req("get_relations_out", s1, "springfield"),
        _req("get_entities_in", s1, "Illinois", "location.location.containedby"),
        _req("get_entities_in", s0, "Musical Artist", "common.topic.notable_types"),
        _req("get_entities_in", s0, "MUSICAL ARTIST", "common.topic.notable_types"),
        _req("get_relations_out", s0, "JUSTIN BIEBER"),
        _req("get_entities_out", s0, "justin BIEBER", "common.topic.notable_types"),
        _req("get_relations_out", s0, f'"{bieber}"'),
        _req("get_relations_out", s0, f"'{bieber}'"),
        _req("get_relations_out", s0, '"Nobody"'),
        _req("get_entities_out", s0, bieber, '"music.artist.album"'),
        _req("get_entities_out", s0, bieber, "'no.such'"),
        _req("get_entities_out", s0, bieber, " music.artist.album"),
        # entities: in the vocabulary but not in the sample, unknown, isolated in the sample
        *[_req(a, s0, e) for a in REL_ACTIONS for e in ("France", "Nowhere Town", "Nobody At All")],
        *[_req(a, s1, "Lonely Entity") for a in REL_ACTIONS],
        _req("get_entities_out", s1, "Lonely Entity", "location.location.containedby"),
        _req("get_conditional_relations", s1, "Lonely Entity", concept="location"),
        _req("get_entities_out", s0, "Nobody At All", "no.such.relation"),  # entity is checked first
        _req("get_entities_in", s0, "Nobody At All", "no.such.relation"),
        # samples: missing, empty, replaced by the test split, in the other dataset
        *[_req(a, "WebQTrn-404", bieber) for a in REL_ACTIONS],
        _req("get_entities_out", "WebQTrn-404", bieber, "music.artist.album"),
        _req("get_entities_in", "WebQTrn-404", bieber, "music.artist.album"),
        _req("get_conditional_relations", "WebQTrn-404", bieber, concept="people"),
        *[_req(a, "WebQTrn-2", bieber) for a in REL_ACTIONS],
        _req("get_entities_out", "WebQTrn-2", bieber, "music.artist.album"),
        _req("get_relations_out", "WebQTrn-5", "Old Sample Entity"),
        _req("get_relations_out", "WebQTrn-5", "New Sample Entity"),
        _req("get_relations_out", "WebQTrn-0_cwq", bieber),
        # datasets: cwq in any case is CWQ; unknown datasets
        *[_req("get_relations_out", "WebQTrn-0_cwq", bieber, dataset=d) for d in ("cwq", "CWQ", "Cwq")],
        _req("get_entities_out", "WebQTrn-0_cwq", bieber, "music.artist.album", dataset="cwq"),
        _req("get_relations_out", s0, bieber, dataset="nosuch"),
        _req("get_relations_out", s0, bieber, dataset="WEBQSP"),
        # conditional relations: concept case, spaces, quotes, no match
        *[_req("get_conditional_relations", s0, bieber, concept=c)
          for c in ("PEOPLE", " people ", '"people"', "base", "film", "kg", "spouse")],
        # extra fields: relation on relation actions, unknown keys
        _req("get_relations", s0, bieber, "music.artist.album"),
        _req("get_relations_in", s0, bieber, "music.artist.album"),
        _req("get_relations_out", s0, bieber, "music.artist.album"),
        _req("get_conditional_relations", s0, bieber, "music.artist.album", concept="people"),
        _req("get_relations_out", s0, bieber, _debug_batch_idx=7),
        _req("get_relations_out", s0, bieber, concept="people"),
        # missing or empty required fields (per-item format errors)
        *[{k: v for k, v in _req(a, s0, bieber, "music.artist.album").items() if k != "relation"}
          for a in ("get_entities_in", "get_entities_out")],
        *[{k: v for k, v in _req(a, s0, bieber).items() if k != "entity_id"} for a in NEW + ["get_relations"]],
        *[{k: v for k, v in _req(a, s0, bieber).items() if k != "sample_id"} for a in NEW + ["get_relations"]],
        _req("get_conditional_relations", s0, bieber),
        {k: v for k, v in _req("get_conditional_relations", s0, bieber).items() if k != "entity_id"},
        _req("get_relations_out", s0, ""),
        _req("get_entities_out", s0, bieber, ""),
        _req("get_entities_out", "", "", ""),
        _req("get_relations_out", s0, "   "),
        _req("get_conditional_relations", s0, bieber, concept=""),
        # invalid items the real server refuses for the whole request (HTTP 422)
        *[_req(a, s0, bieber, "music.artist.album" if "entities" in a else None) for a in LEGACY],
        _req("fly_to_moon", s0, bieber),
        _req("GET_RELATIONS_OUT", s0, bieber),
        {"action_type": "get_relations_out", "sample_id": s0, "entity_id": bieber},
        _req("get_relations_out", s0, 42),
        _req("get_relations_out", 7, bieber),
        _req("get_entities_out", s0, bieber, ["music.artist.album"]),
        _req("get_relations_out", s0, None),
        {"dataset_name": "webqsp", "sample_id": s0, "entity_id": bieber},
    ]
    return items


BATCHES = [  # whole-list requests: order and per-item independence inside one batch
    [0, 5, 11, 40, 77], [3, 3, 3],
]

# --- running the real server ------------------------------------------------------------------------------

HUB = ("WebQTrn-0", "WebQTrn-1")
CONFIGS: list[tuple[str, bool, str, bool, tuple[str, ...] | None]] = [
    # name, KG_USE_ENTITIES_TEXT, KG_RELATION_FORMAT, relation actions only, samples asked about in full
    ("text-flat", True, "flat", False, None),
    ("text-full_indent", True, "full_indent", True, HUB),
    ("text-mixed", True, "mixed", True, HUB),
    ("text-compact", True, "compact", True, HUB),
    ("mid-flat", False, "flat", False, HUB[:1]),
]
ENABLED = "get_relations,get_relations_in,get_relations_out,get_entities_in,get_entities_out,get_conditional_relations"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def post(url: str, body: Any) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def serve(checkout: Path, python: str, data: Path, use_text: bool, fmt: str) -> tuple[subprocess.Popen[bytes], str]:
    """The real server, started the way its start script starts it (uvicorn, env configuration)."""
    port = free_port()
    env = {**os.environ, "KG_BASE_DATA_PATH": str(data), "KG_SUPPORTED_KGS": "webqsp,CWQ",
           "KG_USE_ENTITIES_TEXT": "true" if use_text else "false", "KG_RELATION_FORMAT": fmt,
           "KG_ENABLED_ACTIONS": ENABLED, "KG_THREAD_WORKERS": "4"}
    proc = subprocess.Popen([python, "-m", "uvicorn", "kg_r1.search.server:app", "--host", "127.0.0.1",
                             "--port", str(port), "--workers", "1", "--log-level", "warning"],
                            cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with urllib.request.urlopen(base + "/health", timeout=2):
                return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the KG-R1 server did not come up")


def record(checkout: Path, python: str, data: Path, out: Path) -> int:
    rows = 0
    with out.open("w", encoding="utf-8") as handle:
        for name, use_text, fmt, rel_only, only in CONFIGS:
            proc, base = serve(checkout, python, data, use_text, fmt)
            try:
                items = actions(data, use_text, rel_only, only)
                requests = [[item] for item in items]
                if not rel_only:
                    requests += [[items[i] for i in batch] for batch in BATCHES]
                for body in requests:
                    status, answer = post(base + "/retrieve", body)
                    handle.write(json.dumps({"config": name, "request": body, "status": status,
                                             "response": answer}, ensure_ascii=False, separators=(",", ":")) + "\n")
                    rows += 1
                if name == "text-flat":
                    with urllib.request.urlopen(base + "/actions", timeout=10) as resp:
                        handle.write(json.dumps({"config": name, "get": "/actions", "status": resp.status,
                                                 "response": json.loads(resp.read())}) + "\n")
                        rows += 1
            finally:
                proc.terminate()
                proc.wait(timeout=20)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    data_cmd = sub.add_parser("data", help="write our fixture in KG-R1's layout")
    data_cmd.add_argument("--out", type=Path, default=OUT / "data_kg")
    rec = sub.add_parser("record", help="record the real server's answers over the fixture")
    rec.add_argument("--checkout", type=Path, required=True, help="a fetched KG-R1 checkout (has kg_r1/search)")
    rec.add_argument("--python", default=sys.executable, help="a Python with fastapi, uvicorn, pydantic")
    rec.add_argument("--data", type=Path, default=OUT / "data_kg")
    rec.add_argument("--out", type=Path, default=OUT / "golden.jsonl")
    args = parser.parse_args()
    if args.cmd == "data":
        write_data(args.out)
        print(f"wrote {args.out}")
    else:
        print(f"recorded {record(args.checkout, args.python, args.data.resolve(), args.out)} answers in {args.out}")


if __name__ == "__main__":
    main()
