"""Type stubs of the native module `sna_history._native` (written by hand; checked by mypy.stubtest)."""

import datetime
import os
import pathlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, BinaryIO, ClassVar, Literal, TypedDict, final

from typing_extensions import Self, TypeAlias

__all__ = [
    "__version__",
    "Agent",
    "AgentEvent",
    "AgentEventIterator",
    "AgentStatus",
    "Host",
    "RuntimeFailedError",
    "TimedOutError",
    "Turn",
    "ERROR_CODES",
    "SnaError",
    "InvalidInputError",
    "NotFoundError",
    "ConflictError",
    "SchemaTooNewError",
    "StorageError",
    "IoError",
    "UnsupportedError",
    "LossyError",
    "ClosedError",
    "InternalError",
    "Store",
    "Session",
    "Block",
    "SearchHit",
    "UsageReport",
    "UsageRow",
    "ModelUsage",
    "ResponseUsage",
    "SessionUsage",
    "SessionInfo",
    "SyncConflict",
    "SyncReport",
    "Attribution",
    "Switch",
    "Compaction",
    "Binding",
    "Continuation",
    "ResumePlan",
    "Report",
    "ReportEntry",
    "Export",
    "runtimes",
    "formats",
    "_panic_for_tests",
]

__version__: str
ERROR_CODES: list[str]

_RuntimeName: TypeAlias = Literal["claude-code", "codex", "opencode", "gemini-cli", "pi", "qwen-code", "copilot-cli"]
_ActorName: TypeAlias = Literal["user", "assistant", "system"]
_KindName: TypeAlias = Literal["text", "thinking", "tool_use", "tool_result", "status", "error"]
_FormatName: TypeAlias = Literal["transcript", "messages", "items", "rollout", "session", "prelude", "log", "contents", "entries", "chat", "events"]
_StrPath: TypeAlias = str | os.PathLike[str]
_NativeData: TypeAlias = list[Any] | dict[str, Any] | str

def runtimes() -> list[str]:
    """The runtimes sna-history converts to and from."""

def formats(runtime: str) -> list[str]:
    """The native formats of `runtime`; the first is the default."""

def _panic_for_tests() -> None: ...

class SnaError(Exception):
    """Base class of every error sna-history raises; `code` names the kind."""

    code: ClassVar[str | None]
    line: int | None
    offset: int | None
    index: int | None
    field: str | None

class InvalidInputError(SnaError):
    """INVALID_INPUT: the input is not acceptable; `line`, `offset`, `index`, `field` say where."""

class NotFoundError(SnaError):
    """NOT_FOUND: no such session, block, embed or binding."""

class ConflictError(SnaError):
    """CONFLICT: clashes with what is stored."""

class SchemaTooNewError(SnaError):
    """SCHEMA_TOO_NEW: the database was written by a newer sna-history; it was left untouched."""

class StorageError(SnaError):
    """STORAGE: SQLite failed."""

class IoError(SnaError):
    """IO: a file could not be read or written."""

class UnsupportedError(SnaError):
    """UNSUPPORTED: the runtime does not offer this operation."""

class LossyError(SnaError):
    """LOSSY: strict mode, and the conversion would lose or alter something."""

class ClosedError(SnaError):
    """CLOSED: the store was closed."""

class TimedOutError(SnaError):
    """TIMEOUT: a runtime did not answer or finish in the time given."""

class RuntimeFailedError(SnaError):
    """RUNTIME: a runtime process failed: it exited during a turn or refused a request."""

class InternalError(SnaError):
    """INTERNAL: a bug in sna-history (for instance a panic caught at the boundary)."""

@final
class Block:
    """One canonical block of a session. Immutable; compare with `==`."""

    def __new__(
        cls,
        actor: str,
        kind: str,
        content: str | None = None,
        *,
        id: str | None = None,
        tool: Mapping[str, Any] | None = None,
        reasoning: Mapping[str, Any] | None = None,
        embeds: Mapping[str, Mapping[str, Any]] | None = None,
        provider: str | None = None,
        model_provider: str | None = None,
        model: str | None = None,
        message_id: str | None = None,
        turn_id: str | None = None,
        created_at: datetime.datetime | str | int | None = None,
        native: Mapping[str, Any] | None = None,
    ) -> Block: ...
    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Block:
        """A block from the dict `to_dict()` returns (or any dict of block fields)."""
    @staticmethod
    def from_json(text: str) -> Block:
        """A block from its JSON text (the serialized form)."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def to_json(self) -> str:
        """The serialized form as JSON text."""
    @property
    def id(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def actor(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def tool(self) -> dict[str, Any] | None: ...
    @property
    def reasoning(self) -> dict[str, Any] | None: ...
    @property
    def embeds(self) -> dict[str, dict[str, Any]]: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def model_provider(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def message_id(self) -> str | None: ...
    @property
    def turn_id(self) -> str | None: ...
    @property
    def created_at(self) -> datetime.datetime:
        """When the block was made, an aware UTC `datetime`."""
    @property
    def native(self) -> dict[str, Any] | None: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

_BlockLike: TypeAlias = Block | Mapping[str, Any]
# Writes the text that stands in for the turns a replay folds to fit its context budget.
_Summarizer: TypeAlias = Callable[[list[Block]], str]

@final
class SessionInfo:
    """What `Store.sessions()` lists about one session."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def created_at(self) -> datetime.datetime: ...
    @property
    def updated_at(self) -> datetime.datetime: ...
    @property
    def block_count(self) -> int: ...
    @property
    def providers(self) -> list[str]: ...
    @property
    def model_providers(self) -> list[str]: ...
    @property
    def models(self) -> list[str]: ...
    @property
    def origin(self) -> str | None:
        """The machine the session came from when a sync brought it here; None if made here."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class ModelUsage:
    """One model's part of a `UsageRow`."""

    @property
    def model(self) -> str | None:
        """The model, or None when the runtime did not say."""
    @property
    def input(self) -> int:
        """Prompt tokens at full price (cache reads and writes are not in it)."""
    @property
    def output(self) -> int:
        """Generated tokens, reasoning included."""
    @property
    def cache_read(self) -> int: ...
    @property
    def cache_write(self) -> int: ...
    @property
    def reasoning(self) -> int:
        """Of the output, the reasoning tokens."""
    @property
    def total(self) -> int:
        """Input, output, cache reads and cache writes."""
    @property
    def cost_usd(self) -> float | None:
        """USD, or None when the model has no price."""
    @property
    def responses(self) -> int:
        """Model responses counted."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class UsageRow:
    """One group of a `UsageReport`."""

    @property
    def key(self) -> str | None:
        """The day, week (its Monday), month, session id, project directory, model or provider; None
        for the totals and when the runtime did not say."""
    @property
    def title(self) -> str | None:
        """By session: the session's title."""
    @property
    def input(self) -> int:
        """Prompt tokens at full price (cache reads and writes are not in it)."""
    @property
    def output(self) -> int:
        """Generated tokens, reasoning included."""
    @property
    def cache_read(self) -> int: ...
    @property
    def cache_write(self) -> int: ...
    @property
    def reasoning(self) -> int:
        """Of the output, the reasoning tokens."""
    @property
    def total(self) -> int:
        """Input, output, cache reads and cache writes."""
    @property
    def cost_usd(self) -> float | None:
        """USD of the priced responses, or None when none could be priced."""
    @property
    def unpriced_models(self) -> list[str]:
        """Models of the row without a price (their tokens counted, their cost not)."""
    @property
    def responses(self) -> int:
        """Model responses counted."""
    @property
    def first_at(self) -> datetime.datetime:
        """The first response."""
    @property
    def last_at(self) -> datetime.datetime:
        """The last response."""
    @property
    def models(self) -> list[ModelUsage]:
        """The row by model, most expensive first."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class UsageReport:
    """What `Store.usage` gives."""

    @property
    def by(self) -> Literal["day", "week", "month", "session", "project", "model", "provider"]: ...
    @property
    def tz(self) -> str:
        """The time zone of days, weeks and months."""
    @property
    def rows(self) -> list[UsageRow]:
        """One row per group."""
    @property
    def totals(self) -> UsageRow:
        """Every row together (its key is None)."""
    @property
    def unpriced_models(self) -> list[str]:
        """Every model without a price."""
    @property
    def prices_date(self) -> str:
        """The shipped table's date."""
    @property
    def prices_source(self) -> str:
        """Where the shipped table's prices come from."""
    @property
    def price_files(self) -> list[str]:
        """The user price files read over it."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class ResponseUsage:
    """One model response of a session, as `Store.usage` counts it."""

    @property
    def seq(self) -> int:
        """The block that reports it."""
    @property
    def at(self) -> datetime.datetime:
        """When it was made."""
    @property
    def model(self) -> str | None:
        """The model, or None when the runtime did not say."""
    @property
    def input(self) -> int:
        """Prompt tokens at full price (cache reads and writes are not in it)."""
    @property
    def output(self) -> int:
        """Generated tokens, reasoning included."""
    @property
    def cache_read(self) -> int: ...
    @property
    def cache_write(self) -> int: ...
    @property
    def reasoning(self) -> int:
        """Of the output, the reasoning tokens."""
    @property
    def total(self) -> int:
        """Input, output, cache reads and cache writes."""
    @property
    def cost_usd(self) -> float | None:
        """USD, or None when the model has no price."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class SessionUsage:
    """What `Session.usage` gives."""

    @property
    def responses(self) -> list[ResponseUsage]:
        """Each response, in order."""
    @property
    def totals(self) -> UsageRow:
        """The session's row of a report by session (its key is None)."""
    @property
    def prices_date(self) -> str:
        """The shipped price table's date."""
    @property
    def price_files(self) -> list[str]:
        """The user price files read over it."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class SearchHit:
    """A block that matched `Store.search`."""

    @property
    def session_id(self) -> str:
        """The session the block is in."""
    @property
    def seq(self) -> int:
        """The block's position in it."""
    @property
    def block_id(self) -> str: ...
    @property
    def actor(self) -> Literal["user", "assistant", "system"]: ...
    @property
    def kind(self) -> Literal["text", "thinking", "tool_use", "tool_result", "status", "error"]: ...
    @property
    def provider(self) -> str | None:
        """The runtime that produced the block."""
    @property
    def model(self) -> str | None: ...
    @property
    def created_at(self) -> datetime.datetime: ...
    @property
    def score(self) -> float:
        """Higher is better; comparable within one store."""
    @property
    def snippet(self) -> str:
        """The text around the first match, each match between « and »."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class SyncReport:
    """What `Store.sync_to` did."""

    @property
    def sessions(self) -> int:
        """Sessions of the source looked at."""
    @property
    def created(self) -> int:
        """Sessions the target did not have, created."""
    @property
    def extended(self) -> int:
        """Sessions the target held fewer blocks of, extended."""
    @property
    def unchanged(self) -> int:
        """Sessions that were the same on both sides already."""
    @property
    def blocks(self) -> int:
        """Blocks copied."""
    @property
    def embeds(self) -> int:
        """Embed contents the target lacked, copied."""
    @property
    def embed_bytes(self) -> int:
        """Bytes of those embeds."""
    @property
    def target_ahead(self) -> list[str]:
        """Ids of the sessions the target holds more blocks of (a sync the other way brings them)."""
    @property
    def conflicts(self) -> list[SyncConflict]:
        """Sessions whose histories differ in the two stores, left as they are."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class SyncConflict:
    """A session whose histories in two stores differ from `seq` on."""

    @property
    def session_id(self) -> str: ...
    @property
    def seq(self) -> int:
        """The first position at which the two histories differ."""
    @property
    def source_block_id(self) -> str: ...
    @property
    def target_block_id(self) -> str: ...
    @property
    def source_blocks(self) -> int: ...
    @property
    def target_blocks(self) -> int: ...
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Attribution:
    """(provider, model_provider, model) of a block."""

    @property
    def provider(self) -> str | None: ...
    @property
    def model_provider(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Switch:
    """A point where the attribution changes."""

    @property
    def seq(self) -> int:
        """The first block with the new attribution."""
    @property
    def block_id(self) -> str: ...
    @property
    def from_(self) -> Attribution | None:
        """The attribution before (None at the first attributed block). `from` in `to_dict()`."""
    @property
    def to(self) -> Attribution:
        """The attribution from here on."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Compaction:
    """A point where a runtime replaced the conversation it sends its model by a summary."""

    @property
    def runtime(self) -> str:
        """The runtime that compacted ("claude-code", "codex", …)."""
    @property
    def boundary_seq(self) -> int:
        """The block that records the compaction; nothing before it but the preserved blocks is sent to a model after it."""
    @property
    def summary_seq(self) -> int:
        """The block that holds the summary (the boundary itself when the summary has no block of its own)."""
    @property
    def summary(self) -> str:
        """The summary, as the runtime sends it to its model."""
    @property
    def preserved(self) -> list[int]:
        """Seqs of the blocks before the boundary the runtime keeps sending verbatim after the summary."""
    @property
    def trigger(self) -> Literal["manual", "auto", "unknown"]:
        """What started it."""
    @property
    def tokens_before(self) -> int | None:
        """The size of the conversation when it was compacted, in tokens, as the runtime reported it."""
    @property
    def created_at(self) -> datetime.datetime:
        """When it happened (the boundary block's time), an aware UTC `datetime`."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Binding:
    """A live native thread holding the session up to `through_seq`."""

    @property
    def runtime(self) -> str: ...
    @property
    def native_id(self) -> str: ...
    @property
    def through_seq(self) -> int: ...
    @property
    def updated_at(self) -> datetime.datetime: ...
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Continuation:
    """How to go on in a runtime: continue the bound thread, or replay."""

    @property
    def mode(self) -> Literal["continue", "replay"]:
        """"continue" (send only `pending` to the thread `native_id`) or "replay" (rebuild; see `reason`)."""
    @property
    def native_id(self) -> str | None: ...
    @property
    def through_seq(self) -> int | None: ...
    @property
    def pending(self) -> list[Block]: ...
    @property
    def reason(self) -> str | None: ...
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class ResumePlan:
    """What `Session.prepare_resume` wrote and how to resume."""

    @property
    def session_id(self) -> str:
        """The runtime's own id of the session to resume."""
    @property
    def files(self) -> list[str]:
        """The files written."""
    @property
    def argv(self) -> list[str]:
        """The command to run, program first."""
    @property
    def cwd(self) -> str | None:
        """The directory to run it in, if one matters."""
    @property
    def env(self) -> dict[str, str]:
        """Environment variables the command needs (e.g. CLAUDE_CONFIG_DIR), beside the caller's own."""
    @property
    def setup(self) -> list[list[str]]:
        """Commands to run first, in order, in `cwd` with `env` (OpenCode: `opencode import <file>`)."""
    @property
    def ran(self) -> list[dict[str, Any]]:
        """Commands `prepare_resume` ran itself (OpenCode with `run_import=True`): argv, status, stdout, stderr."""
    @property
    def notes(self) -> list[str]:
        """What the caller should know about this resume (Gemini CLI: the route taken and why)."""
    @property
    def replay(self) -> _ReplayShape:
        """What shaped the replay written: the compaction it starts at, the seqs folded to fit."""
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class ReportEntry:
    """One drop, degradation, synthesized block, remap or malformed record."""

    @property
    def action(self) -> str:
        """"dropped", "degraded", "synthesized", "remapped", "malformed", "redacted" or "compacted"."""
    @property
    def block_id(self) -> str | None: ...
    @property
    def message(self) -> str: ...
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Report:
    """What a conversion lost, altered or added."""

    @property
    def entries(self) -> list[ReportEntry]: ...
    @property
    def lossless(self) -> bool:
        """True when nothing was lost, altered or added."""
    def __len__(self) -> int: ...
    def to_dict(self) -> dict[str, Any]:
        """The serialized form as JSON-compatible Python data."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Export:
    """What `Session.export` returns: the native `data` and the fidelity `report`."""

    @property
    def data(self) -> Any:
        """The native data (list, dict or str, by format)."""
    @property
    def report(self) -> Report:
        """What the conversion lost, altered or added."""

@final
class Session:
    """One session of a store: an ordered list of blocks."""

    @property
    def id(self) -> str:
        """The session id."""
    def append(self, block: _BlockLike | None = None, **fields: Any) -> Block:
        """Appends one block and returns it with `seq` and `id` filled in."""
    def extend(self, blocks: Iterable[_BlockLike]) -> list[Block]:
        """Appends blocks in one transaction: all are stored or none."""
    def blocks(self) -> list[Block]:
        """Every block, in order."""
    def blocks_range(self, start: int, stop: int) -> list[Block]:
        """The blocks with `start <= seq < stop`."""
    def block(self, id: str) -> Block:
        """The block with this id."""
    def embed(self, embed_id: str) -> bytes:
        """The bytes of an embed of this session."""
    def info(self) -> SessionInfo:
        """What `Store.sessions()` lists about this session (title, cwd, counts, models)."""
    def import_report(self) -> Report:
        """What the import of this session kept but could not read: one "malformed" entry per line, one "degraded" entry per repaired line."""
    def scan_secrets(self) -> list[dict[str, Any]]:
        """The secrets the session holds: dicts with seq, block_id, kind and a masked preview; nothing is changed."""
    def redact_in_place(self) -> Report:
        """Rewrites the stored session with its secrets replaced by [REDACTED:<kind>]; cannot be undone."""
    def usage(self, *, prices: str | os.PathLike[str] | None = None) -> SessionUsage:
        """The session's token usage, response by response, priced as `Store.usage` prices it."""
    def switches(self) -> list[Switch]:
        """Every change of (provider, model_provider, model), with the seq where it happens."""
    def compactions(self) -> list[Compaction]:
        """Every compaction a runtime made in this session, oldest first."""
    def bind(self, runtime: str, native_id: str, through_seq: int) -> Binding:
        """Records that the native thread `native_id` of `runtime` holds the blocks up to `through_seq`."""
    def binding(self, runtime: str) -> Binding | None:
        """The binding recorded for `runtime`, or None."""
    def continuation(self, runtime: str) -> Continuation:
        """How to go on in `runtime`: continue the bound thread with the pending blocks, or replay."""
    def to_native(
        self, runtime: str, format: str | None = None, *, summarizer: _Summarizer | None = None, **options: Any
    ) -> _NativeData:
        """The session in `runtime`'s native shape, as plain Python data.

        Options (keyword arguments, parsed by core): `strict`, `target_model`, `foreign_reasoning`
        ("drop" or "text"), `model_provider`, `redact`, `compaction` ("latest", the default: a
        replay into another runtime starts at the latest compaction; "none": the whole history),
        `context_window` (the target's window in tokens; a replay over it folds its oldest whole
        turns into one summary), `models` (a model file read over the shipped table).

        `summarizer`: given the folded blocks (whole turns, oldest first), returns the text standing
        in for them (default: a digest). What it raises is raised as it was; nothing is written.
        """
    def export(
        self, runtime: str, format: str | None = None, *, summarizer: _Summarizer | None = None, **options: Any
    ) -> Export:
        """Like `to_native`, with the fidelity report."""
    def to_native_text(
        self, runtime: str, format: str | None = None, *, summarizer: _Summarizer | None = None, **options: Any
    ) -> str:
        """The session as the text of a file in `runtime`'s native format."""
    def export_to(
        self,
        dest: str | os.PathLike[str] | BinaryIO,
        runtime: str,
        format: str | None = None,
        *,
        summarizer: _Summarizer | None = None,
        **options: Any,
    ) -> Report:
        """Writes the session in `runtime`'s native format to a path or a binary file object."""
    def ingest(self, runtime: str, event: Mapping[str, Any]) -> list[Block]:
        """Appends the blocks a live event of `runtime` completes; returns them."""
    def prepare_resume(
        self,
        runtime: str,
        home: _StrPath | None = None,
        cwd: _StrPath | None = None,
        config_dir: _StrPath | None = None,
        codex_home: _StrPath | None = None,
        run_import: bool = False,
        opencode_bin: _StrPath | None = None,
        *,
        summarizer: _Summarizer | None = None,
        **options: Any,
    ) -> ResumePlan:
        """Writes the native files `runtime` needs to resume this session; returns a `ResumePlan`."""
    def __len__(self) -> int:
        """Number of blocks."""
    def __bool__(self) -> bool:
        """A session is true even when empty."""
    def __enter__(self) -> Self: ...
    def __exit__(self, *_args: object) -> bool: ...

@final
class Store:
    """A database of sessions; `Store()` is in memory, `Store(path)` a database file,
    `Store("postgres://…")` a PostgreSQL database. A context manager that closes on exit."""

    def __new__(cls, path: _StrPath | None = None) -> Store: ...
    @property
    def path(self) -> pathlib.Path | None:
        """The database file, or None for an in-memory or PostgreSQL store."""
    @property
    def url(self) -> str | None:
        """A PostgreSQL store's URL without its password, None for SQLite."""
    @property
    def closed(self) -> bool:
        """True once `close()` was called."""
    def create_session(self, id: str | None = None, title: str | None = None, cwd: _StrPath | None = None) -> Session:
        """Creates an empty session."""
    def session(self, id: str) -> Session:
        """The session with this id."""
    def sessions(self) -> list[SessionInfo]:
        """Every session, most recently updated first."""
    def delete_session(self, id: str) -> None:
        """Deletes a session, its blocks and bindings; embed bytes no other session uses are freed."""
    def blob_count(self) -> int:
        """Number of distinct embed blobs stored."""
    def search(
        self,
        query: str,
        *,
        runtime: str | None = None,
        model: str | None = None,
        session: str | None = None,
        kinds: list[str] | None = None,
        since: datetime.datetime | str | None = None,
        until: datetime.datetime | str | None = None,
        limit: int = 50,
        bookkeeping: bool = False,
    ) -> list[SearchHit]:
        """Full-text search over every session's blocks, best first."""
    def usage(
        self,
        *,
        by: Literal["day", "week", "month", "session", "project", "model", "provider"] = "day",
        since: datetime.date | datetime.datetime | str | None = None,
        until: datetime.date | datetime.datetime | str | None = None,
        runtime: str | None = None,
        model: str | None = None,
        tz: str | None = None,
        prices: str | os.PathLike[str] | None = None,
    ) -> UsageReport:
        """Token usage and cost of every session, grouped, each row broken down by model, with totals."""
    def store_id(self) -> str:
        """The random id (32 hex digits) that names this store to the stores it syncs with."""
    def sync_to(self, target: Store, *, origin: str | None = None) -> SyncReport:
        """Copies into `target` the sessions and blocks it lacks, with their ids, times, attribution and embed bytes."""
    def import_native(self, runtime: str, source: str | bytes | os.PathLike[str] | list[Any] | dict[str, Any], **options: Any) -> Session:
        """Imports native history of `runtime` as a new session."""
    def import_file(self, path: _StrPath, runtime: str | None = None, **options: Any) -> Session:
        """Imports a native file; the runtime is detected from the content when `runtime` is None."""
    def import_source(self, path: _StrPath, runtime: str | None = None, **options: Any) -> tuple[Session, Literal["imported", "unchanged", "appended", "replaced"], int]:
        """Imports a native file and remembers it: importing it again adds only what it gained. Returns (session, outcome, blocks added)."""
    def source_unchanged(self, path: _StrPath) -> bool:
        """True when the file was imported and still looks as it did then (length, mtime, inode, device, not written within 2 s of that read): importing it again would do nothing. False when it has to be read to tell."""
    def import_opencode_db(self, path: _StrPath) -> list[Session]:
        """Imports every session of an `opencode.db` not yet in the store; returns those imported."""
    def import_database(self, path: _StrPath, runtime: str | None = None) -> list[Session]:
        """Imports every session of a database file (`opencode.db`) not yet in the store; the runtime is detected unless given."""
    def close(self) -> None:
        """Closes the database; later calls raise `ClosedError`."""
    def __enter__(self) -> Self: ...
    def __exit__(self, *_args: object) -> bool: ...

class _ReplayShape(TypedDict):
    # The first stored block the replay carries as it is.
    from_seq: int
    # The boundary of the compaction the replay starts at, if any.
    compaction_seq: int | None
    # The first and last seqs of the turns folded to fit the context window, if any.
    folded: list[int] | None

class _Image(TypedDict):
    data: bytes
    mime: str

@final
class Host:
    """Runs Claude Code, Codex, OpenCode, Gemini CLI, Pi, Qwen Code and Copilot CLI for the sessions of a store, one long-lived process per running session."""
    def __new__(cls, store: Store, bins: Mapping[str, _StrPath] | None = None, env: Mapping[str, str] | None = None, home: _StrPath | None = None) -> Self: ...
    def start(
        self,
        session_id: str,
        runtime: str,
        model: str | None = None,
        cwd: _StrPath | None = None,
        home: _StrPath | None = None,
        permission_mode: str | None = None,
        args: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        ask_permissions: bool = False,
        context_window: int | None = None,
    ) -> Agent:
        """Starts `runtime` for the session (created when missing) and returns its agent. With
        `ask_permissions`, a tool that needs permission waits for `Agent.answer_permission`.
        `context_window` (tokens): every replay the agent makes fits it, less the runtime's reserve;
        the oldest whole turns are folded into one summary (`Turn.replay["folded"]`)."""
    def resume(
        self, session_id: str, runtime: str | None = None, model: str | None = None, context_window: int | None = None
    ) -> Agent:
        """Brings a stored session back in a fresh process (natively when possible, else by replay)."""
    def agent(self, session_id: str) -> Agent | None:
        """The agent of a session, or None."""
    def agents(self) -> list[Agent]:
        """Every agent of this host."""
    def close(self) -> None:
        """Ends every process the host started."""
    def __enter__(self) -> Self: ...
    def __exit__(self, *_args: object) -> bool: ...

@final
class Agent:
    """A session's runtime process, kept alive between turns."""
    @property
    def session_id(self) -> str: ...
    @property
    def session(self) -> Session: ...
    def send(self, text: str, images: Iterable[_Image] | None = None, timeout: float | None = None) -> Turn:
        """Sends a user message and waits for the turn to end."""
    def compact(self, instructions: str | None = None, timeout: float | None = None) -> Turn:
        """Asks the runtime to compact its conversation with its own mechanism and waits for it like
        a turn; the compaction is then in `session.compactions()`. Raises `UnsupportedError` for
        Gemini CLI (its compression is reached only from its interactive screen)."""
    def events(self, since: int = 0, timeout: float | None = None) -> AgentEventIterator:
        """The events after `since`; with `timeout`, waits for more until `timeout` seconds pass without one."""
    def interrupt(self) -> None:
        """Stops the running turn; the process keeps running."""
    def answer_permission(self, id: str, allow: bool) -> None:
        """Answers a `permission_needed` event: the tool runs (`allow`) or is refused."""
    def set_model(self, model: str) -> None:
        """Makes the next turns run on `model`."""
    def switch(self, runtime: str, model: str | None = None) -> None:
        """Goes on in another runtime (or model), replayed into a new process."""
    def kill(self) -> None:
        """Ends the process; the next send starts it again."""
    def status(self) -> AgentStatus:
        """What the agent is doing."""

@final
class AgentEventIterator:
    def __iter__(self) -> Self: ...
    def __next__(self) -> AgentEvent: ...

@final
class AgentEvent:
    @property
    def cursor(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...
    @property
    def timestamp(self) -> int: ...

@final
class Turn:
    @property
    def blocks(self) -> list[Block]: ...
    @property
    def text(self) -> str: ...
    @property
    def usage(self) -> dict[str, Any] | None: ...
    @property
    def resumed_via(self) -> Literal["native", "replay"] | None: ...
    @property
    def replay(self) -> _ReplayShape | None:
        """What shaped the replay the turn's process was started from, or None."""
    @property
    def interrupted(self) -> bool: ...

@final
class AgentStatus:
    @property
    def session_id(self) -> str: ...
    @property
    def alive(self) -> bool: ...
    @property
    def busy(self) -> bool: ...
    @property
    def pid(self) -> int | None: ...
    @property
    def runtime(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def native_id(self) -> str | None: ...
    @property
    def spawns(self) -> int: ...
    @property
    def cursor(self) -> int: ...
