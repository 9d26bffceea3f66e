"""Java type attribution: the JDK's own compiler says which method each call binds to.

`attribute` sends the texts to a small Java helper (`javaattr/JavaAttr.java`, shipped as
package data) that parses and attributes them with `JavacTask` and answers in JSON: for
every call, method reference and static import of the methods asked about, the declaring
type and erased parameter types javac resolved, how the receiver is written, and what
given simple names would bind to at that place. The helper is compiled with the
installed `javac` on first use into the user cache (keyed by its source's hash and the
JDK's version) and reused; one JVM answers for all the files of one operation.

It runs javac as a tool over the sources, not the repository's program: `-proc:none`
keeps annotation processors (repository code) from running, and nothing is written
into the workspace. Without a JDK, or when the helper fails, the answer is the reason,
and the caller falls back to reading syntax (docs/decisions/0035).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from patchsmith.runtime.process import ESSENTIAL_ENV, run_process
from patchsmith.runtime.usercache import cache_dir

__all__ = ["FileAttribution", "Receiver", "Site", "attribute", "helper_classes"]

HELPER = Path(__file__).with_name("javaattr") / "JavaAttr.java"
"""The helper's source, shipped inside the package."""

COMPILE_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 600.0
_JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
"""A short-lived JVM: the quick compiler tier only, the simplest collector."""


@dataclass(frozen=True)
class Receiver:
    """How a call's receiver (or a method reference's qualifier) is written.

    `form`: `simple` (a type's simple name), `qualified` (a type's qualified name) or
    `expression` (a variable, `this`, `super`, a call...).
    """

    form: str
    start: int
    end: int


@dataclass(frozen=True)
class Site:
    """One call (`invocation`), method reference (`method_ref`), `static_import` of a method
    asked about, or single-type `import` of a class declaring one.

    Offsets are UTF-8 byte offsets into the text sent. `resolved` is false when javac
    bound the name to nothing it could name (then the other facts are empty).
    `bindings` maps each qualified type asked about to what its simple name denotes
    here (`None`: nothing; `<ambiguous>`, `<local>`); `members` maps `Type#method` to
    how an unqualified call of that method would bind here (`none`, `to`, `other`).
    """

    kind: str
    start: int
    end: int
    line: int
    resolved: bool
    declaring: str | None = None
    method: str | None = None
    params: tuple[str, ...] = ()
    static: bool = False
    name_start: int = 0
    name_end: int = 0
    receiver: Receiver | None = None
    unqualified: str | None = None
    """For a call without a receiver: `member` (of an enclosing class) or `static_import`."""
    bindings: Mapping[str, str | None] = field(default_factory=dict)
    members: Mapping[str, str] = field(default_factory=dict)
    overloads: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """For a static import: every static method of that name, (declaring type, params)."""


@dataclass(frozen=True)
class FileAttribution:
    """What javac said about one file: its errors (then nothing else is trusted) and sites."""

    path: str
    errors: tuple[str, ...]
    bindings: Mapping[str, str | None]
    sites: tuple[Site, ...]


def _jdk() -> tuple[str, str] | str:
    """(javac, java) of one JDK, or why there is none."""
    javac = shutil.which("javac")
    if javac is None:
        return "no JDK: javac is not on PATH"
    sibling = Path(os.path.realpath(javac)).with_name("java")
    java = str(sibling) if sibling.is_file() else shutil.which("java")
    if java is None:
        return "no JDK: java is not on PATH"
    return javac, java


def _jdk_version(javac: str) -> str | None:
    """The JDK's version: its `release` file, else what `javac -version` prints."""
    release = Path(os.path.realpath(javac)).parent.parent / "release"
    try:
        return release.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    done = run_process([javac, "-version"], cwd=tempfile.gettempdir(), timeout_s=60.0)
    return (done.stdout + done.stderr).strip() if done.ok else None


@cache
def helper_classes() -> tuple[Path, str] | str:
    """The compiled helper's folder and the `java` to run it with, or why there is none."""
    jdk = _jdk()
    if isinstance(jdk, str):
        return jdk
    javac, java = jdk
    source = HELPER.read_bytes()
    version = _jdk_version(javac)
    if version is None:
        return f"{javac} -version failed"
    key = hashlib.sha256(source + b"\0" + version.encode("utf-8")).hexdigest()[:20]
    base = cache_dir()
    if base is None:  # no cache: compile once into this process's own temporary folder
        base = Path(tempfile.mkdtemp(prefix="patchsmith-javaattr-"))
    folder = base / "javaattr" / key
    if (folder / "JavaAttr.class").is_file():
        return folder, java
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        building = folder.parent / f".tmp-{uuid.uuid4().hex}"
        building.mkdir()
    except OSError as exc:
        return f"cannot write the helper's classes: {exc.strerror or exc}"
    done = run_process(
        [javac, "-proc:none", "-encoding", "UTF-8", "-nowarn", "-d", str(building), str(HELPER)],
        cwd=building,
        timeout_s=COMPILE_TIMEOUT_S,
        env_allow=(*ESSENTIAL_ENV, "JAVA_HOME"),
    )
    if not done.ok:
        shutil.rmtree(building, ignore_errors=True)
        why = done.start_error or (done.stderr or done.stdout).strip()[-500:]
        return f"javac could not compile the attribution helper: {why}"
    try:
        os.replace(building, folder)
    except OSError:  # another process finished first: its classes are the same
        shutil.rmtree(building, ignore_errors=True)
    return folder, java


def attribute(
    texts: Mapping[str, bytes],
    *,
    sourcepath: Sequence[str] = (),
    classpath: Sequence[str] = (),
    methods: Sequence[str],
    types: Sequence[str] = (),
    members: Sequence[str] = (),
) -> dict[str, FileAttribution] | str:
    """Attribute `texts` (path to UTF-8 Java source) in one JVM; the reason when it cannot.

    `methods` are the method names whose sites are reported; `types` qualified type
    names whose simple-name binding is reported per file and per site; `members`
    `Type#method` entries whose unqualified binding is reported per site.
    """
    helper = helper_classes()
    if isinstance(helper, str):
        return helper
    classes, java = helper
    request = {
        "files": [{"path": p, "text": t.decode("utf-8")} for p, t in texts.items()],
        "sourcepath": list(sourcepath),
        "classpath": list(classpath),
        "methods": list(methods),
        "types": list(types),
        "members": list(members),
    }
    with tempfile.TemporaryDirectory(prefix="patchsmith-javaattr-") as tmp:
        request_file = Path(tmp) / "request.json"
        request_file.write_text(json.dumps(request, ensure_ascii=True), encoding="ascii")
        done = run_process(
            [java, *_JVM_OPTIONS, "-cp", str(classes), "JavaAttr", str(request_file)],
            cwd=tmp,
            timeout_s=RUN_TIMEOUT_S,
            env_allow=(*ESSENTIAL_ENV, "JAVA_HOME"),
            max_output_bytes=1 << 30,
        )
    if not done.ok:
        why = done.start_error or ("timed out" if done.timed_out else done.stderr.strip()[-500:])
        return f"the attribution helper failed: {why}"
    try:
        answer = json.loads(done.stdout)
        files = [_file(item) for item in answer["files"]]
        problems = [str(e) for e in answer["errors"]]
    except (ValueError, KeyError, TypeError) as exc:
        return f"the attribution helper answered what patchsmith cannot read: {exc}"
    if problems:
        return f"javac could not attribute the sources: {problems[0]}"
    return {f.path: f for f in files}


def _file(item: dict[str, object]) -> FileAttribution:
    sites = item["sites"]
    assert isinstance(sites, list)
    errors = item["errors"]
    assert isinstance(errors, list)
    return FileAttribution(
        str(item["path"]),
        tuple(str(e) for e in errors),
        _bindings(item["bindings"]),
        tuple(_site(s) for s in sites),
    )


def _bindings(value: object) -> dict[str, str | None]:
    assert isinstance(value, dict)
    return {str(k): None if v is None else str(v) for k, v in value.items()}


def _site(item: dict[str, object]) -> Site:
    receiver = item.get("receiver")
    params = item.get("params") or []
    overloads = item.get("overloads") or []
    members = item.get("members") or {}
    assert isinstance(params, list) and isinstance(overloads, list)
    assert isinstance(members, dict)
    return Site(
        kind=str(item["kind"]),
        start=_int(item["start"]),
        end=_int(item["end"]),
        line=_int(item["line"]),
        resolved=bool(item["resolved"]),
        declaring=None if item.get("declaring") is None else str(item["declaring"]),
        method=None if item.get("method") is None else str(item["method"]),
        params=tuple(str(p) for p in params),
        static=bool(item.get("static", False)),
        name_start=_int(item.get("name_start", 0)),
        name_end=_int(item.get("name_end", 0)),
        unqualified=None if item.get("unqualified") is None else str(item["unqualified"]),
        receiver=None
        if not isinstance(receiver, dict)
        else Receiver(str(receiver["form"]), _int(receiver["start"]), _int(receiver["end"])),
        bindings=_bindings(item.get("bindings") or {}),
        members={str(k): str(v) for k, v in members.items()},
        overloads=tuple(
            (str(o["declaring"]), tuple(str(p) for p in o["params"])) for o in overloads
        ),
    )


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return int(value)
