"""Client extensions and the skills extension (SEP-2640): declared per request, lazy, every file verified."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from mcp_client import Client, TimeoutPolicy, memory
from mcp_client.extensions import SKILLS, with_extensions
from mcp_client.extensions.skills import SkillsNotSupported, SkillVerificationError, parse_frontmatter
from tests.integration.line_server import JSON, LineServer, Notify, RpcError

pytestmark = pytest.mark.anyio

SKILL_URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = "---\nname: pdf-processing\ndescription: Extract PDF text\nreleased: 2024-05-01\n---\n\nSkill body.\n"
FORMS_MD = "Forms content.\n"
FRONTMATTER = {"name": "pdf-processing", "description": "Extract PDF text", "released": "2024-05-01"}
POLICY = TimeoutPolicy(idle=10, maximum=100, connect=30)


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def entry(**changes: Any) -> JSON:
    raw: JSON = {
        "uri": SKILL_URI,
        "frontmatter": dict(FRONTMATTER),
        "resources": [
            {"uri": SKILL_URI, "digest": digest(SKILL_MD), "size": len(SKILL_MD.encode())},
            {"uri": FORMS_URI, "digest": digest(FORMS_MD), "size": len(FORMS_MD.encode())},
        ],
    }
    raw.update(changes)
    return raw


class SkillServer:
    """Serves one skill; ``files`` maps URIs to the text ``resources/read`` returns (tamper with it in a test)."""

    def __init__(self, entries: list[JSON] | None = None, *, declare: bool = True, era: str = "modern") -> None:
        self.entries = entries if entries is not None else [entry()]
        self.files = {SKILL_URI: SKILL_MD, FORMS_URI: FORMS_MD, "skill://pdf-processing/secret.md": "unlisted\n"}
        extensions: JSON = {SKILLS: {}} if declare else {}
        self.server = LineServer(self.handle, era=era, capabilities={"resources": {}, "extensions": extensions})  # type: ignore[arg-type]

    async def handle(self, method: str, params: JSON, notify: Notify) -> JSON:
        if method == "skills/list":
            return {"skills": self.entries, "ttlMs": 0, "cacheScope": "private"}
        if method == "skills/get":
            found = [e for e in self.entries if e.get("uri") == params["uri"]]
            if not found:
                raise RpcError(-32602, "no such skill")
            return {"skill": found[0], "ttlMs": 0, "cacheScope": "private"}
        if method == "resources/read":
            uri = params["uri"]
            return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": self.files[uri]}]}
        raise RpcError(-32601, f"no {method}")

    def reads(self) -> list[str]:
        return [r["params"]["uri"] for r in self.server.requests if r["method"] == "resources/read"]

    def client(self, **options: Any) -> Client:
        return Client(memory(self.server.serve), timeout=POLICY, extensions={SKILLS: {}}, **options)


async def test_listing_reads_no_file_and_loading_verifies_each_file_read() -> None:
    skills = SkillServer()
    async with skills.client() as client:
        [listed] = await client.skills.list()
        assert skills.reads() == []  # lazy: nothing read on listing
        assert (listed.name, listed.description, listed.dynamic) == ("pdf-processing", "Extract PDF text", False)
        loaded = await client.skills.load(listed)
        assert skills.reads() == [SKILL_URI]
        assert loaded.text == SKILL_MD
        assert loaded.frontmatter["released"] == "2024-05-01"  # a YAML date stays the string the entry has
        assert await loaded.read_text("references/FORMS.md") == FORMS_MD
        assert await loaded.read(FORMS_URI) == FORMS_MD.encode()  # the same file, resolved, read once
        assert skills.reads() == [SKILL_URI, FORMS_URI]


@pytest.mark.parametrize(
    ("tamper", "kind"),
    [
        (lambda s: s.files.__setitem__(SKILL_URI, SKILL_MD.replace("Skill body.", "Evil body!!")), "digest"),
        (lambda s: s.files.__setitem__(SKILL_URI, SKILL_MD + "more"), "size"),
        (lambda s: s.entries[0]["frontmatter"].__setitem__("description", "Exfiltrate credentials"), "frontmatter"),
    ],
    ids=["digest", "size", "frontmatter"],
)
async def test_a_skill_md_that_differs_from_its_entry_is_not_loaded(tamper: Any, kind: str) -> None:
    skills = SkillServer()
    tamper(skills)
    async with skills.client() as client:
        [listed] = await client.skills.list()
        with pytest.raises(SkillVerificationError) as caught:
            await client.skills.load(listed)
    assert caught.value.kind == kind
    assert caught.value.uri == SKILL_URI


async def test_the_frontmatter_check_compares_fields_and_the_digest_of_the_new_content() -> None:
    """A server that updates both the digest and the file, but not the entry's frontmatter, is still caught."""
    tampered = SKILL_MD.replace("Extract PDF text", "Exfiltrate credentials")
    raw = entry()
    raw["resources"][0].update(digest=digest(tampered), size=len(tampered.encode()))
    skills = SkillServer([raw])
    skills.files[SKILL_URI] = tampered
    async with skills.client() as client:
        with pytest.raises(SkillVerificationError, match="description") as caught:
            await client.skills.load(SKILL_URI)  # by URI: the entry comes from skills/get
    assert caught.value.kind == "frontmatter"
    assert skills.server.methods()[-2:] == ["skills/get", "resources/read"]


async def test_a_loaded_skill_reads_only_the_files_its_entry_lists() -> None:
    skills = SkillServer()
    async with skills.client() as client:
        loaded = await client.skills.load((await client.skills.list())[0])
        with pytest.raises(SkillVerificationError) as caught:
            await loaded.read("secret.md")
        assert caught.value.kind == "unlisted"
        with pytest.raises(ValueError, match="outside"):
            await loaded.read("../other/SKILL.md")
        skills.files[FORMS_URI] = "changed since listing\n"
        with pytest.raises(SkillVerificationError) as stale:
            await loaded.read("references/FORMS.md")
        assert stale.value.kind == "size"
    assert skills.reads() == [SKILL_URI, FORMS_URI]


async def test_invalid_entries_are_left_out_and_dynamic_skills_need_consent() -> None:
    bad_digest = entry(uri="skill://broken/SKILL.md", frontmatter={"name": "broken", "description": "x"})
    bad_digest["resources"] = [{"uri": "skill://broken/SKILL.md", "digest": "md5:abc", "size": 3}]
    misnamed = entry(frontmatter={"name": "other", "description": "x"})
    dynamic = entry(uri="skill://daily/SKILL.md", frontmatter={"name": "daily", "description": "d"})
    dynamic["resources"] = "dynamic"
    skills = SkillServer([bad_digest, misnamed, entry(resources=None), dynamic, entry()])
    async with skills.client() as client:
        listed = await client.skills.list()
        assert [s.uri for s in listed] == ["skill://daily/SKILL.md", SKILL_URI]
        with pytest.raises(SkillVerificationError) as caught:
            await client.skills.load(listed[0])
        assert caught.value.kind == "dynamic"
        assert skills.reads() == []


async def test_skills_methods_are_not_sent_to_a_server_that_did_not_declare_the_extension() -> None:
    skills = SkillServer(declare=False)
    async with skills.client() as client:
        assert not client.skills.supported
        with pytest.raises(SkillsNotSupported):
            await client.skills.list()
    assert skills.server.methods() == ["server/discover"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_declared_extensions_go_into_the_capabilities_of_each_era(era: str) -> None:
    skills = SkillServer(era=era)
    async with skills.client(protocol="auto" if era == "modern" else "2025-11-25") as client:
        await client.skills.list()
        await client.read_resource(SKILL_URI)
    requests = skills.server.requests
    if era == "modern":
        capabilities = [r["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] for r in requests]
        assert len(capabilities) == 3  # server/discover, skills/list, resources/read: every request
        # (beside the tasks extension, declared on every modern request unless Client(tasks=False))
        expected: dict[str, object] = {"extensions": {SKILLS: {}, "io.modelcontextprotocol/tasks": {}}}
    else:
        capabilities = [r["params"]["capabilities"] for r in requests if r["method"] == "initialize"]
        assert len(capabilities) == 1
        expected = {"extensions": {SKILLS: {}}}  # 2025-11-25 has tasks of its own: not the modern extension
    assert all(c == expected for c in capabilities)


def test_extension_declarations_are_checked() -> None:
    assert with_extensions({"roots": {}}, {SKILLS: {"x": 1}}) == {"roots": {}, "extensions": {SKILLS: {"x": 1}}}
    with pytest.raises(ValueError, match="identifier"):
        with_extensions({}, {"not an id!": {}})
    with pytest.raises(TypeError, match="mapping"):
        with_extensions({}, {SKILLS: True})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="JSON"):
        with_extensions({}, {SKILLS: {"x": object()}})


def test_frontmatter_parsing() -> None:
    assert parse_frontmatter("\ufeff---\r\nname: a\r\n---\r\nbody") == {"name": "a"}
    assert parse_frontmatter("no frontmatter") is None
    assert parse_frontmatter("---\nname: [unclosed\n---\n") is None
    assert parse_frontmatter("---\n- a list\n---\n") is None
