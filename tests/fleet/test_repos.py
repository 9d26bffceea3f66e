"""The repositories file: paths, URLs, refs, comments."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from patchsmith.errors import FailureCode
from patchsmith.fleet import RepoSpec, parse_repos, read_repos_file


def test_paths_urls_refs_and_comments(tmp_path: Path) -> None:
    text = (
        "# a comment\n"
        "\n"
        "repos/a\n"
        "repos/b@v1.2  # trailing comment\n"
        "/abs/c@feature/x\n"
        "file:///srv/d.git@main\n"
        "git@github.com:org/e.git\n"
        "git@github.com:org/e.git@dev\n"
        "https://user@host.example/f.git\n"
        "repos/a\n"
    )
    specs = parse_repos(text, base=tmp_path)

    assert specs == [
        RepoSpec("repos/a", str(tmp_path / "repos/a"), None),
        RepoSpec("repos/b@v1.2", str(tmp_path / "repos/b"), "v1.2"),
        RepoSpec("/abs/c@feature/x", "/abs/c", "feature/x"),
        RepoSpec("file:///srv/d.git@main", "file:///srv/d.git", "main"),
        RepoSpec("git@github.com:org/e.git", "git@github.com:org/e.git", None),
        RepoSpec("git@github.com:org/e.git@dev", "git@github.com:org/e.git", "dev"),
        RepoSpec("https://user@host.example/f.git", "https://user@host.example/f.git", None),
    ]


def test_a_bad_line_is_kept_for_its_own_error(tmp_path: Path) -> None:
    """Nothing is judged while parsing: a line naming nothing fails when its turn comes."""
    specs = parse_repos("repo@\n", base=tmp_path)

    assert [s.key for s in specs] == ["repo@"]
    assert specs[0].ref is None


def test_unreadable_file(tmp_path: Path) -> None:
    failure = read_repos_file(tmp_path / "missing.txt")

    assert not isinstance(failure, list)
    assert failure.code is FailureCode.FILE_NOT_FOUND


def test_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "repos.txt").write_text("one\n")

    specs = read_repos_file(tmp_path / "sub" / "repos.txt")

    assert isinstance(specs, list)
    assert specs[0].source == str(tmp_path / "sub" / "one")


@given(st.text(max_size=200))
def test_any_text_parses_to_unique_keys(text: str) -> None:
    specs = parse_repos(text, base=Path("/base"))
    keys = [s.key for s in specs]

    assert len(keys) == len(set(keys))
    assert all(k and k == k.strip() and not k.startswith("#") for k in keys)
