"""Fast query encoder: a traced, frozen (bf16 or fp32) copy of the sentence-transformers model.

Only the query-embedding worker (``QueryBatcher``) uses it; ingest keeps the model's own fp32 path.
``EncoderSelection`` decides, in small steps the worker runs while idle, which encoder serves queries:
it builds each candidate, checks it against the fp32 path on probe sentences (cosine >= ``MIN_COSINE``),
times the survivors and keeps the fastest; whatever is rejected is logged and reported with its reason.
"""

from __future__ import annotations

import copy
import logging
import math
import statistics
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# "auto": bf16 traced when the CPU has native bf16, else fp32 traced (each kept only if it passes the
# probe); "bf16" / "fp32_traced": that encoder only (still probe-checked); "fp32": the model's eager path.
PRECISIONS = ("auto", "bf16", "fp32_traced", "fp32")
MIN_COSINE = 0.9995
# Probe sentences: question-like inputs of many lengths (also as one padded batch), one truncated input.
PROBES = [
    "Who?",
    "Which river flows through the capital of the country where the Eiffel Tower stands?",
    "Were the directors of Jaws and Alien born in the same decade?",
    "What is the name of the band whose lead singer wrote a memoir about growing up in Dublin in the 1970s?",
    "In which year did the company that built the first commercial jet airliner merge with its rival?",
    "How many players on a field?",
    " ".join(["Which stadium, opened before the war and rebuilt since, hosts the club's matches?"] * 24),
]
BatchEncoder = Callable[[list[str]], list[list[float]]]
# Input shapes are rounded up to a few buckets: tokens to a multiple of SEQ_BUCKET, rows to 1, 2, 4, 8 and
# then multiples of ROW_STEP. Every new (rows, tokens) shape costs PyTorch memory that it keeps (allocator
# pools, per-shape kernels): unbucketed, a server's RSS grew for many minutes as new shapes kept arriving
# (bench/query_encoder_memory.py measures both ways).
SEQ_BUCKET = 8
ROW_STEP = 8
BUCKETED = True  # bench/query_encoder_memory.py turns it off to measure what the buckets save


def row_bucket(n: int) -> int:
    """Rows a batch of ``n`` texts is padded to: the next power of two up to ROW_STEP, then the next
    multiple of ROW_STEP."""
    if n <= ROW_STEP:
        return 1 << max(0, n - 1).bit_length()
    return -(-n // ROW_STEP) * ROW_STEP


def _cpu_flags() -> set[str] | None:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return None


def native_bf16() -> tuple[bool, str]:
    """Whether this CPU runs bf16 matmuls natively (oneDNN with AVX512-BF16 or AMX-BF16), and why."""
    import torch

    if not torch.backends.mkldnn.is_available():
        return False, "PyTorch has no oneDNN (mkldnn) backend"
    if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        return False, "oneDNN reports no bf16 support on this CPU"
    flags = _cpu_flags()
    if flags is None:
        return True, "oneDNN reports bf16 support (CPU flags unreadable)"
    native = sorted({"avx512_bf16", "amx_bf16"} & flags)
    if not native:
        return False, "CPU lacks avx512_bf16/amx_bf16 (bf16 would be emulated, slower than fp32)"
    return True, "CPU has " + "+".join(native)


POOLING_MODES = ("mean", "cls")


def pooling_mode(model: Any) -> str:
    """The pooling of a Transformer -> Pooling [-> Normalize] model ("mean", "cls", ...)."""
    pool = list(model)[1]
    mode = getattr(pool, "pooling_mode", None)
    if mode is None and hasattr(pool, "get_pooling_mode_str"):
        mode = pool.get_pooling_mode_str()
    modes = (mode,) if isinstance(mode, str) else tuple(mode or ())
    return modes[0] if len(modes) == 1 else repr(modes)


def pipeline_problem(model: Any) -> str | None:
    """Why ``model`` is not Transformer -> Pooling(mean or cls) [-> Normalize] (None when it is)."""
    if model is None:
        return "the embedder has no torch model (its own engine encodes questions)"
    mods = list(model)
    names = [type(m).__name__ for m in mods]
    shape_ok = (len(mods) in (2, 3) and names[:2] == ["Transformer", "Pooling"]
                and (len(mods) == 2 or names[2] == "Normalize"))
    if not shape_ok:
        return f"model pipeline is {' -> '.join(names)}, not Transformer -> Pooling(mean) -> Normalize"
    mode = pooling_mode(model)
    if mode not in POOLING_MODES:
        return f"pooling mode is {mode}, not mean or cls"
    if getattr(mods[0], "auto_model", None) is None or getattr(model, "tokenizer", None) is None:
        return "the Transformer module has no auto_model/tokenizer"
    return None


def _pooled_module(transformer: Any, cls: bool = False) -> Any:
    import torch

    class Pooled(torch.nn.Module):
        """Transformer -> masked mean pooling (fp32 accumulation; ``cls``: the first token) -> L2 norm."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            # a 4-D boolean mask goes to attention as-is: no data-dependent "skip the mask" branch
            # is baked into the trace, so padded batches stay correct
            bias = attention_mask[:, None, None, :].bool()
            hidden = self.inner(input_ids=input_ids, attention_mask=bias).last_hidden_state.float()
            if cls:
                return torch.nn.functional.normalize(hidden[:, 0], p=2.0, dim=1)
            mask = attention_mask.unsqueeze(-1).float()
            mean = (hidden * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    return Pooled(transformer).eval()


def _quiet_build_warnings() -> None:
    """Silence the known, harmless warnings of building (process-wide filters matched by message:
    ``warnings.catch_warnings`` is not thread-safe and the worker builds on its own thread)."""
    import torch

    # the only data-dependent branch HF's SDPA takes is "mask is None", and we always pass a mask
    warnings.filterwarnings("ignore", message="Converting a tensor to a Python boolean",
                            category=torch.jit.TracerWarning)
    # torch.jit is deprecated in favour of torch.compile/export; should it go, building fails and the
    # selection falls back to the eager path (the reason shows in /diagnostics)
    warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated",  # transformers'
                            category=FutureWarning)


class FastQueryEncoder:
    """A traced + frozen copy of the model's transformer in ``precision`` ("bf16" or "fp32"), with the
    model's pooling (mean or CLS) and L2 normalisation. Not thread-safe: one thread (the query worker)
    uses it."""

    def __init__(self, model: Any, precision: str) -> None:
        import torch

        problem = pipeline_problem(model)
        if problem:
            raise ValueError(problem)
        if precision not in ("bf16", "fp32"):
            raise ValueError(f"precision {precision!r} is not bf16 or fp32")
        self.precision = precision
        self.traced = True
        self._tokenizer = model.tokenizer
        self.max_seq_length = int(model.max_seq_length)
        self._pad_id = int(getattr(self._tokenizer, "pad_token_id", None) or 0)
        dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        ids, mask = self.features(["a short question", "a longer example question, padded against the other"])
        _quiet_build_warnings()
        with torch.inference_mode():
            inner = copy.deepcopy(model[0].auto_model).to(dtype).eval()
            module = _pooled_module(inner, cls=pooling_mode(model) == "cls")
            traced = torch.jit.trace(module, (ids, mask), strict=False, check_trace=False)
            self._module = torch.jit.freeze(traced.eval())

    def tokens(self, texts: list[str]) -> tuple[Any, Any]:
        """Token ids and attention mask, tokenised like the model (padding, truncation to max_seq_length)."""
        f = self._tokenizer(texts, padding=True, truncation="longest_first", max_length=self.max_seq_length,
                            return_tensors="pt")
        return f["input_ids"], f["attention_mask"]

    def features(self, texts: list[str]) -> tuple[Any, Any]:
        """:meth:`tokens` padded to the shape bucket: tokens (masked padding) to a multiple of SEQ_BUCKET,
        never past max_seq_length; rows (copies of the first) to :func:`row_bucket`."""
        import torch

        ids, mask = self.tokens(texts)
        if not BUCKETED:
            return ids, mask
        length = ids.shape[1]
        more = max(length, min(-(-length // SEQ_BUCKET) * SEQ_BUCKET, self.max_seq_length)) - length
        if more:
            ids = torch.nn.functional.pad(ids, (0, more), value=self._pad_id)
            mask = torch.nn.functional.pad(mask, (0, more), value=0)
        extra = row_bucket(len(texts)) - len(texts)
        if extra:
            ids, mask = _pad_rows(ids, extra), _pad_rows(mask, extra)
        return ids, mask

    def encode(self, texts: list[str]) -> list[list[float]]:
        """Unit-length embeddings of ``texts`` (one padded batch; the bucket's extra rows are dropped)."""
        import torch

        ids, mask = self.features(texts)
        with torch.inference_mode():
            out = self._module(ids, mask)
        return [row.tolist() for row in out[:len(texts)]]


def _pad_rows(tensor: Any, extra: int) -> Any:
    """``tensor`` with ``extra`` copies of its first row appended."""
    import torch

    return torch.cat([tensor, tensor[:1].expand(extra, -1)])


def _min_cosine(got: list[list[float]], want: list[list[float]]) -> float:
    """Lowest cosine of ``got[i]`` to ``want[i]``; a ``got`` vector that is not unit length counts as 0."""
    worst = 1.0
    for g, w in zip(got, want, strict=True):
        norm_g, norm_w = math.sqrt(math.fsum(x * x for x in g)), math.sqrt(math.fsum(x * x for x in w))
        cos = math.fsum(a * b for a, b in zip(g, w, strict=True)) / (norm_g * norm_w or 1.0)
        worst = min(worst, cos if abs(norm_g - 1.0) < 1e-3 else 0.0)
    return worst


def candidate_clock() -> Callable[[], float]:
    """The clock that times the candidates: the calling thread's CPU time when torch computes on that
    thread alone (one intra-op thread, the query worker's default), else wall time. Wall time at start-up
    also counts the index builds and other processes sharing the cores: a candidate timed while a
    neighbour ran looked 2-3x slower (bench/query.py once saw bf16 at 24 ms against fp32 at 8 ms on a CPU
    where bf16 is twice as fast), and the wrong choice then served for the process's lifetime."""
    import torch

    return time.thread_time if torch.get_num_threads() == 1 else time.perf_counter


def rank_by_speed(p50_ms: dict[str, float]) -> list[str]:
    """Candidate names, fastest p50 first; a tie keeps the given order (bf16 is listed before fp32)."""
    order = list(p50_ms)
    return sorted(order, key=lambda name: (p50_ms[name], order.index(name)))


class EncoderSelection:
    """Chooses the query encoder for ``setting`` (see ``PRECISIONS``) in steps: iterate ``steps()`` one
    ``next()`` at a time (each a fraction of a second) or call ``run()``. Afterwards ``encoder`` is the
    fast encoder (None: use the model's eager fp32 path) and ``info()`` says what was chosen and why."""

    def __init__(self, model: Any, setting: str, reference: BatchEncoder,
                 native: Callable[[], tuple[bool, str]] = native_bf16, time_rounds: int = 3,
                 clock: Callable[[], float] | None = None) -> None:
        if setting not in PRECISIONS:
            raise ValueError(f"query precision {setting!r} is not one of {PRECISIONS}")
        self.model = model
        self.setting = setting
        self.reference = reference
        self.native = native
        self.time_rounds = time_rounds
        self.clock = clock  # None: candidate_clock() on the selecting thread
        self.encoder: FastQueryEncoder | None = None
        self.done = setting == "fp32"
        self.fallback_reason: str | None = None
        self.choice: str | None = None
        self.candidates: dict[str, dict[str, Any]] = {}

    def info(self) -> dict[str, Any]:
        """What serves queries now: precision, traced, probe cosine, fallback reason, candidates tried."""
        enc = self.encoder
        chosen = self.candidates.get("bf16" if enc and enc.precision == "bf16" else "fp32_traced", {})
        return {
            "setting": self.setting, "ready": self.done,
            "precision": enc.precision if enc else "fp32", "traced": enc is not None,
            "probe_cosine": chosen.get("probe_cosine") if enc else None,
            "fallback_reason": self.fallback_reason, "choice": self.choice,
            "candidates": {k: dict(v) for k, v in dict(self.candidates).items()},  # snapshot: worker writes
        }

    def run(self) -> EncoderSelection:
        """All steps at once (tests, tools)."""
        for _ in self.steps():
            pass
        return self

    def steps(self) -> Iterator[None]:
        """The selection, one short step per ``next()``; never raises (failures become fallbacks)."""
        if self.done:
            return
        reasons: list[str] = []
        try:
            yield from self._select(reasons)
        except Exception as exc:  # noqa: BLE001 - any failure falls back to the exact eager path
            log.exception("query encoder selection failed")
            reasons.append(f"selection failed: {exc}")
            self.encoder = None
        self.fallback_reason = "; ".join(reasons) or None
        self.done = True
        if self.fallback_reason:
            using = self.encoder.precision + " traced" if self.encoder else "fp32 eager"
            log.warning("query encoder (setting %s) uses %s: %s", self.setting, using, self.fallback_reason)
        log.info("query encoder in use: %s", self.info())

    def _names(self, reasons: list[str]) -> list[str]:
        if self.setting == "fp32_traced":
            return ["fp32_traced"]
        ok, why = self.native()
        if self.setting == "bf16":
            if not ok:
                log.warning("query precision bf16 forced although %s", why)
            return ["bf16"]
        if not ok:
            reasons.append(f"bf16 skipped: {why}")
            return ["fp32_traced"]
        return ["bf16", "fp32_traced"]

    def _select(self, reasons: list[str]) -> Iterator[None]:
        problem = pipeline_problem(self.model)
        if problem:
            reasons.append(problem)
            return
        names = self._names(reasons)
        want_single = [self.reference([p])[0] for p in PROBES]
        yield
        want_batch = self.reference(PROBES[:-1])  # one padded batch (the long probe only alone: cheaper)
        yield
        built: dict[str, FastQueryEncoder] = {}
        for name in names:
            try:
                enc = FastQueryEncoder(self.model, "bf16" if name == "bf16" else "fp32")
                yield
                cos = _min_cosine([enc.encode([p])[0] for p in PROBES], want_single)
                yield
                cos = min(cos, _min_cosine(enc.encode(PROBES[:-1]), want_batch))
                same_tokens = self._same_tokens(enc)
            except Exception as exc:  # noqa: BLE001 - this candidate only
                log.exception("query encoder %s failed", name)
                reasons.append(f"{name} failed: {exc}")
                continue
            self.candidates[name] = {"probe_cosine": round(cos, 7)}
            if not same_tokens:
                reasons.append(f"{name} rejected: its tokenisation differs from the model's")
            elif cos < MIN_COSINE:
                reasons.append(f"{name} rejected: probe cosine {cos:.6f} < {MIN_COSINE}")
            else:
                built[name] = enc
            yield
        if not built:
            return
        times: dict[str, list[float]] = {name: [] for name in built}
        for enc in built.values():  # the first calls of a frozen module profile it
            for p in PROBES[:-1]:
                enc.encode([p])
        yield
        clock = self.clock or candidate_clock()
        for _ in range(self.time_rounds):  # time the survivors interleaved (single questions, p50)
            for name, enc in built.items():
                for p in PROBES[:-1]:
                    t0 = clock()
                    enc.encode([p])
                    times[name].append((clock() - t0) * 1000)
            yield
        for name in built:
            p50 = round(statistics.median(times[name]), 3)
            self.candidates[name] = {**self.candidates[name], "p50_ms": p50}
        ranked = rank_by_speed({name: self.candidates[name]["p50_ms"] for name in built})
        self.encoder = built[ranked[0]]
        self.choice = "fastest: " + ", ".join(f"{n} {self.candidates[n]['p50_ms']} ms" for n in ranked)

    def _same_tokens(self, enc: FastQueryEncoder) -> bool:
        preprocess = getattr(self.model, "preprocess", None) or self.model.tokenize
        want = preprocess(list(PROBES))
        ids, mask = enc.tokens(list(PROBES))
        return bool((want["input_ids"] == ids).all() and (want["attention_mask"] == mask).all())
