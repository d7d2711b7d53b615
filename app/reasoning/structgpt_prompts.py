"""Prompts of the StructGPT reasoner (relation choice, answer-or-continue, final answer, triple filter)."""

from __future__ import annotations

SYSTEM = "You answer questions by exploring a knowledge graph step by step. Be concise."


def choose_relations(question: str, entity: str, relations: list[str], history: list[str], width: int) -> str:
    """Ask for up to ``width`` relations of ``entity`` worth following."""
    past = "\n".join(f"- {h}" for h in history) or "None"
    rels = "; ".join(relations)
    return (
        f"Question: {question}\n"
        f"Relations followed so far:\n{past}\n"
        f"Topic entity: {entity}\n"
        f"Candidate relations of {entity} (a relation marked (inverse) is followed against its direction): "
        f"{rels}\n"
        f"Choose at most {width} of the candidate relations that are most useful to answer the question. "
        "Reply with JSON only, the chosen relations copied exactly as the list \"relations\"."
    )


def answer_or_continue(question: str, triples_text: str) -> str:
    """Ask whether the triples suffice; the reply starts with 'Final Answer:' or says 'Continue'."""
    return (
        f"Question: {question}\n"
        f"Retrieved triples (head, relation, tail): {triples_text or 'None'}\n"
        "If these triples are enough to answer the question, reply 'Final Answer: <answer>' giving only the "
        "answer entity names (separate several with ', '). Otherwise reply 'Continue' and nothing else."
    )


def final_answer(question: str, triples_text: str) -> str:
    """Force an answer after the last hop."""
    return (
        f"Question: {question}\n"
        f"Retrieved triples (head, relation, tail): {triples_text or 'None'}\n"
        "Answer the question from these triples (or from your knowledge if they do not help). "
        "Reply 'Final Answer: <answer>' giving only the answer entity names (separate several with ', ')."
    )


def filter_triples(question: str, answer: str, triples_text: str) -> str:
    """Ask which retrieved triples support the answer."""
    return (
        f"Question: {question}\n"
        f"Answer: {answer}\n"
        f"Retrieved triples: {triples_text}\n"
        "List the triples that are needed to support the answer, copied exactly as (head, relation, tail), "
        "one per line. Reply with the triples only."
    )
