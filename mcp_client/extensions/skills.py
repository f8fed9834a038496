"""The skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): list a server's skills, load one, read its
files, each file verified against the skill's entry.

A server that declares the extension serves ``skills/list`` (every skill's entry: its URI, its ``SKILL.md``
frontmatter, and a manifest of its files with a SHA-256 digest and a size each) and ``skills/get`` (one entry by
URI). The files themselves are ordinary resources, read with ``resources/read``. What this module adds is the
host's side of the extension's integrity rules:

* **Lazy retrieval**: listing reads no file. ``SKILL.md`` is read when the skill is loaded
  (:meth:`Skills.load`), a supporting file when it is read (:meth:`LoadedSkill.read`).
* **Verification on read**: every file read is checked against its entry's ``size`` and ``digest`` before it is
  returned; a mismatch raises :class:`SkillVerificationError` and the content is not handed out.
* **Frontmatter verification**: the loaded ``SKILL.md``'s YAML frontmatter must equal the entry's ``frontmatter``
  field by field, or the skill is not loaded.
* **The held entry**: a loaded skill reads only files its entry lists; any other file of the skill is a
  verification failure.

Digests are no trust anchor (the same server supplies both); they catch corruption, staleness and tampering on
the way. A skill's identity is its server and its URI together: a :class:`LoadedSkill` belongs to the client that
loaded it. This module talks to the server only through what it is given: a :class:`SkillsHost` (the
:class:`~mcp_client.Client`: its server's capabilities, ``request`` and ``read_resource``), so it never imports the
client.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import mcp_types
import yaml

from mcp_client._log_guard import package_logger
from mcp_client._types import JSONObject
from mcp_client.errors import MCPClientError, ProtocolError
from mcp_client.extensions import SKILLS
from mcp_client.protocol.pagination import walk

__all__ = [
    "LoadedSkill",
    "Skill",
    "SkillFile",
    "SkillVerificationError",
    "Skills",
    "SkillsHost",
    "SkillsNotSupported",
    "parse_frontmatter",
    "parse_skill",
]

logger = package_logger("mcp_client.skills")

SKILL_MD = "SKILL.md"
DYNAMIC = "dynamic"
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_FRONTMATTER = re.compile(r"^---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)

VerificationKind = Literal["size", "digest", "frontmatter", "unlisted", "dynamic", "content"]


class SkillVerificationError(MCPClientError):
    """A skill file is not what the skill's entry describes, so it is not used (the skill is not loaded).

    ``kind`` says which check failed: ``"size"``, ``"digest"``, ``"frontmatter"``, ``"unlisted"`` (a file the
    entry does not list), ``"dynamic"`` (a skill without digests, not allowed) or ``"content"`` (no readable
    content). The remedy for a stale entry is to fetch it again (:meth:`Skills.get`) and load the skill anew.
    """

    def __init__(self, message: str, *, kind: VerificationKind, uri: str, skill_uri: str) -> None:
        super().__init__(message, method="resources/read")
        self.kind: VerificationKind = kind
        self.uri = uri
        """The file that failed."""
        self.skill_uri = skill_uri
        """The skill's ``SKILL.md`` URI."""


class SkillsNotSupported(MCPClientError):
    """The server did not declare the skills extension, so ``skills/list`` and ``skills/get`` are not sent."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill, as its entry lists it."""

    uri: str
    digest: str
    """``sha256:`` and 64 lowercase hex digits, over the file's raw bytes."""
    size: int
    """The file's length in bytes."""


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill's entry, from ``skills/list`` or ``skills/get``.

    ``files`` is the complete manifest, ``None`` when the server serves the skill as ``"dynamic"`` (no digests).
    """

    uri: str
    """The URI of the skill's ``SKILL.md``."""
    frontmatter: Mapping[str, Any]
    """The ``SKILL.md`` frontmatter as the server renders it (``name`` and ``description`` always there)."""
    files: tuple[SkillFile, ...] | None
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    """The entry as received."""

    @property
    def name(self) -> str:
        """The skill's name (a label, not an identifier: two skills may share it)."""
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        """What the skill is for."""
        return str(self.frontmatter["description"])

    @property
    def dynamic(self) -> bool:
        """True when the server publishes no digests for this skill."""
        return self.files is None

    @property
    def root(self) -> str:
        """The skill's directory: its ``SKILL.md`` URI without ``/SKILL.md``."""
        return self.uri[: -len(SKILL_MD) - 1]

    def file(self, uri: str) -> SkillFile | None:
        """The manifest entry of ``uri``, if the skill lists it."""
        return next((f for f in self.files or () if f.uri == uri), None)

    def resolve(self, path: str) -> str:
        """The URI of ``path``: a URI as it is, a relative reference against the skill's root."""
        if "://" in path:
            return path
        normalized = posixpath.normpath(path.lstrip("/"))
        if normalized.startswith(".."):
            raise ValueError(f"{path!r} points outside the skill")
        return f"{self.root}/{normalized}"


def parse_skill(raw: object) -> Skill:
    """Check one entry against the extension's rules and build a :class:`Skill`.

    Raises:
        ProtocolError: the entry is invalid (a host must not load it).
    """
    if not isinstance(raw, dict):
        raise ProtocolError(f"a skill entry must be an object, not {type(raw).__name__}")
    uri, frontmatter, resources = raw.get("uri"), raw.get("frontmatter"), raw.get("resources")
    if not isinstance(uri, str) or not uri.endswith("/" + SKILL_MD) or "://" not in uri:
        raise ProtocolError(f"a skill entry's uri must be the URI of its SKILL.md, got {uri!r}")
    if not isinstance(frontmatter, dict):
        raise ProtocolError(f"skill {uri}: frontmatter must be an object")
    for key in ("name", "description"):
        if not isinstance(frontmatter.get(key), str) or not frontmatter[key]:
            raise ProtocolError(f"skill {uri}: frontmatter has no {key}")
    if uri[: -len(SKILL_MD) - 1].rsplit("/", 1)[-1] != frontmatter["name"]:
        raise ProtocolError(f"skill {uri}: the final path segment is not the skill's name {frontmatter['name']!r}")
    if resources == DYNAMIC:
        return Skill(uri, frontmatter, None, raw)
    if not isinstance(resources, list):
        raise ProtocolError(f"skill {uri}: resources must be a list of files or 'dynamic'")
    files = tuple(_parse_file(uri, item) for item in resources)
    if not any(f.uri == uri for f in files):
        raise ProtocolError(f"skill {uri}: the file list does not include its SKILL.md")
    return Skill(uri, frontmatter, files, raw)


def _parse_file(skill_uri: str, raw: object) -> SkillFile:
    if not isinstance(raw, dict):
        raise ProtocolError(f"skill {skill_uri}: a file entry must be an object")
    uri, digest, size = raw.get("uri"), raw.get("digest"), raw.get("size")
    root = skill_uri[: -len(SKILL_MD)]
    if not isinstance(uri, str) or not (uri == skill_uri or uri.startswith(root)):
        raise ProtocolError(f"skill {skill_uri}: file {uri!r} is not within the skill")
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise ProtocolError(f"skill {skill_uri}: file {uri} has no valid sha256 digest")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ProtocolError(f"skill {skill_uri}: file {uri} has no valid size")
    return SkillFile(uri, digest, size)


class _FrontmatterLoader(yaml.SafeLoader):
    """YAML's safe loader without implicit timestamps: a date stays the string it was (as in the JSON entry)."""


_FrontmatterLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_frontmatter(text: str) -> dict[str, Any] | None:
    """The YAML frontmatter at the start of a ``SKILL.md`` as a dict; ``None`` when there is none or it is broken."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        return None
    try:
        parsed = yaml.load(match.group(1), Loader=_FrontmatterLoader)
    except yaml.YAMLError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _same_json(a: object, b: object) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``, objects compare key by key (absent equals null)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_same_json(a.get(k), b.get(k)) for k in a.keys() | b.keys())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _content_bytes(result: mcp_types.ReadResourceResult, uri: str) -> bytes | None:
    contents = [c for c in result.contents if str(c.uri) == uri] or list(result.contents)
    if len(contents) != 1:
        return None
    content = contents[0]
    if isinstance(content, mcp_types.TextResourceContents):
        return content.text.encode("utf-8")
    try:
        return base64.b64decode(content.blob, validate=True)
    except (binascii.Error, ValueError):
        return None


class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified: the entry it was loaded from, its text, and its files.

    Files are read on demand and verified against the held entry; what was read is kept, so a second read of the
    same file costs nothing.
    """

    def __init__(self, skills: Skills, entry: Skill, text: str) -> None:
        self._skills = skills
        self.entry = entry
        """The entry the skill was loaded from (the *held entry*: reads resolve only to files it lists)."""
        self.text = text
        """The ``SKILL.md`` as the model should see it."""
        self._read: dict[str, bytes] = {}

    @property
    def frontmatter(self) -> Mapping[str, Any]:
        """The verified frontmatter."""
        return self.entry.frontmatter

    async def read(self, path: str) -> bytes:
        """The verified bytes of one file of the skill: a URI, or a path relative to the skill's root.

        Raises:
            SkillVerificationError: the entry does not list the file, or its content does not match.
            ValueError: ``path`` points outside the skill.
        """
        uri = self.entry.resolve(path)
        cached = self._read.get(uri)
        if cached is not None:
            return cached
        content = await self._skills.read_verified(self.entry, uri)
        self._read[uri] = content
        return content

    async def read_text(self, path: str) -> str:
        """:meth:`read`, decoded as UTF-8."""
        return (await self.read(path)).decode("utf-8")


class SkillsHost(Protocol):
    """What the skills extension needs of its client (:class:`~mcp_client.Client` has all of it)."""

    @property
    def server_capabilities(self) -> mcp_types.ServerCapabilities | None:
        """The capabilities the server declared (``extensions`` says whether it serves skills)."""
        ...

    async def request(self, method: str, params: JSONObject | None = None, *, idempotent: bool = False) -> JSONObject:
        """Send ``method`` under the client's policies and return its raw ``result`` object."""
        ...

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        """``resources/read`` of ``uri``."""
        ...


class Skills:
    """The skills extension on one client: ``client.skills``.

    ```python
    async with Client(server, extensions={"io.modelcontextprotocol/skills": {}}) as client:
        for entry in await client.skills.list():          # reads no file
            print(entry.name, entry.description)
        skill = await client.skills.load(entry)           # SKILL.md read and verified
        forms = await skill.read_text("references/FORMS.md")   # verified against the entry too
    ```
    """

    def __init__(self, client: SkillsHost) -> None:
        self._client = client

    @property
    def supported(self) -> bool:
        """True when the server declared the extension."""
        capabilities = self._client.server_capabilities
        extensions = capabilities.extensions if capabilities is not None else None
        return bool(extensions) and SKILLS in (extensions or {})

    def _require(self, method: str) -> None:
        if not self.supported:
            raise SkillsNotSupported(f"the server does not declare the {SKILLS} extension", method=method)

    async def list(self) -> list[Skill]:
        """Every skill entry the server lists, all pages fetched. Reads no file.

        An invalid entry is left out, with a warning (a host must not load it). An empty or partial listing is
        no proof the server has no other skills: :meth:`get` finds one by its URI.
        """
        self._require("skills/list")

        async def fetch(params: dict[str, Any]) -> dict[str, Any]:
            return await self._client.request("skills/list", params, idempotent=True)

        skills: list[Skill] = []
        for page in await walk("skills/list", fetch):
            entries = page.get("skills")
            if not isinstance(entries, list):
                raise ProtocolError("skills/list: the result has no skills list", method="skills/list")
            for raw in entries:
                try:
                    skills.append(parse_skill(raw))
                except ProtocolError as exc:
                    logger.warning("skills/list: leaving out an invalid entry: %s", exc.message)
        return skills

    async def get(self, uri: str) -> Skill:
        """The current entry of the skill whose ``SKILL.md`` is at ``uri`` (listed or not)."""
        self._require("skills/get")
        result = await self._client.request("skills/get", {"uri": uri}, idempotent=True)
        skill = parse_skill(result.get("skill"))
        if skill.uri != uri:
            raise ProtocolError(f"skills/get: asked for {uri}, got the entry of {skill.uri}", method="skills/get")
        return skill

    async def load(self, skill: Skill | str, *, allow_dynamic: bool = False) -> LoadedSkill:
        """Load a skill: read its ``SKILL.md``, verify size, digest and frontmatter against the entry.

        Args:
            skill: The entry (from :meth:`list` or :meth:`get`), or the ``SKILL.md`` URI (its entry is fetched).
            allow_dynamic: Load a skill served as ``"dynamic"`` (no digests, so only its frontmatter is checked).

        Raises:
            SkillVerificationError: the ``SKILL.md`` does not match the entry; nothing of it is returned.
        """
        entry = skill if isinstance(skill, Skill) else await self.get(skill)
        if entry.dynamic and not allow_dynamic:
            raise SkillVerificationError(
                f"skill {entry.uri} is served as dynamic (no digests); pass allow_dynamic=True to load it anyway",
                kind="dynamic",
                uri=entry.uri,
                skill_uri=entry.uri,
            )
        content = await self.read_verified(entry, entry.uri)
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillVerificationError(
                f"{entry.uri} is not UTF-8 text", kind="content", uri=entry.uri, skill_uri=entry.uri
            ) from None
        frontmatter = parse_frontmatter(text)
        if frontmatter is None or not _same_json(frontmatter, dict(entry.frontmatter)):
            differs = sorted(
                key
                for key in (frontmatter or {}).keys() | entry.frontmatter.keys()
                if not _same_json((frontmatter or {}).get(key), entry.frontmatter.get(key))
            )
            detail = "has no readable frontmatter" if frontmatter is None else f"differs in {', '.join(differs)}"
            raise SkillVerificationError(
                f"{entry.uri}: the frontmatter {detail} from the skill's entry; the skill is not loaded",
                kind="frontmatter",
                uri=entry.uri,
                skill_uri=entry.uri,
            )
        return LoadedSkill(self, entry, text)

    async def read_verified(self, entry: Skill, uri: str) -> bytes:
        """Read one file of ``entry`` and return its bytes once they match the entry's size and digest.

        A dynamic skill's files are only checked to lie within the skill.
        """

        def failure(kind: VerificationKind, message: str) -> SkillVerificationError:
            return SkillVerificationError(f"{uri}: {message}", kind=kind, uri=uri, skill_uri=entry.uri)

        listed = entry.file(uri)
        if listed is None and (not entry.dynamic or not uri.startswith(entry.root + "/")):
            raise failure("unlisted", "the skill's entry does not list this file")
        result = await self._client.read_resource(uri)
        content = _content_bytes(result, uri)
        if content is None:
            raise failure("content", "the server returned no single text or blob content for it")
        if listed is not None:
            if len(content) != listed.size:
                raise failure("size", f"{len(content)} bytes where the entry says {listed.size}")
            digest = "sha256:" + hashlib.sha256(content).hexdigest()
            if digest != listed.digest:
                raise failure("digest", f"its digest {digest} is not the entry's {listed.digest}")
        return content
