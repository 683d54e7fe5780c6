"""Run the code examples of the user documentation (``docs/*.md``).

Conventions of the pages (``docs/index.md`` states them for readers too):

* every fenced block whose info string is ``python`` is executed; the blocks
  of one page run in order in one fresh namespace, so later blocks see what
  earlier ones defined;
* a fenced block whose info string is ``python mypy`` is not executed but
  type-checked: all such blocks of a page are saved as modules and checked
  in one run of ``mypy --strict`` with ``plait.mypy_plugin``;
* a fenced ``text`` block that follows one of those blocks with nothing but
  blank lines in between is its expected output, compared exactly (trailing
  whitespace ignored): the standard output of a ``python`` block, mypy's
  report on a ``python mypy`` block (each file named ``example.py``). A
  ``python mypy`` block without one must type-check cleanly;
* other fences (``sh``, ``ini``, ``toml``, a ``text`` block after prose) are
  not run.

A failing example fails the test of its page with the page name and the
line of the offending block.  ``python tests/test_docs.py [page.md ...]``
runs pages without pytest.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = ["index.md", "jaxprs.md", "interpreters.md", "jit.md", "autodiff.md", "vmap.md",
         "control_flow.md", "custom_derivatives.md", "numpy.md", "typing.md", "errors.md",
         "pytrees.md", "scipy.md", "random.md", "nn.md", "example_libraries.md", "export.md",
         "callbacks.md", "scaling.md", "custom_batching.md", "optimize.md", "image.md",
         "signal.md", "refs.md", "extend.md", "checkify.md", "compat.md",
         "profiling.md", "sparse.md", "config.md", "ffi.md", "pallas.md"]
_FENCE = re.compile(r"^(`{3,})(.*)$")
_MYPY_LINE = re.compile(r"^(?P<file>[^:\s]+\.py):(?P<line>\d+): (?P<rest>.*)$")


class DocExampleError(AssertionError):
    """An example of a page failed (raised, printed something else, or mis-typed)."""


@attrs.frozen
class Block:
    """One fenced code block: its info string, text and 1-based line of its opening fence."""

    info: str
    text: str
    line: int


@attrs.frozen
class Example:
    """A ``python`` (or ``python mypy``) block and the ``text`` block that follows it, if any."""

    code: Block
    expected: Block | None


def parse_blocks(source: str) -> list[tuple[Block, int]]:
    """The fenced blocks of a Markdown page, each with the line after its closing fence."""
    lines = source.splitlines()
    blocks: list[tuple[Block, int]] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].rstrip() != fence:
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"unclosed code fence opened at line {start + 1}")
        i += 1
        blocks.append((Block(info, "\n".join(body) + "\n", start + 1), i))
    return blocks


def parse_examples(source: str) -> list[Example]:
    """The ``python`` and ``python mypy`` blocks of a page, each paired with the ``text``
    block right after it (only blank lines between)."""
    lines = source.splitlines()
    blocks = parse_blocks(source)
    examples: list[Example] = []
    for k, (block, end) in enumerate(blocks):
        if block.info not in ("python", "python mypy"):
            continue
        expected = None
        if k + 1 < len(blocks):
            nxt = blocks[k + 1][0]
            between = lines[end:nxt.line - 1]
            if nxt.info == "text" and all(not s.strip() for s in between):
                expected = nxt
        examples.append(Example(block, expected))
    return examples


def normalize(out: str) -> str:
    """Output as compared: trailing whitespace of lines and of the whole text dropped."""
    return "\n".join(line.rstrip() for line in out.rstrip().splitlines())


def _compare(page: str, ex: Example, got: str) -> None:
    want = normalize(ex.expected.text) if ex.expected is not None else ""
    got = normalize(got)
    if got != want:
        where = f"the text block at {page}:{ex.expected.line}" if ex.expected else "no output"
        raise DocExampleError(
            f"output of the example at {page}:{ex.code.line} differs from {where}\n"
            f"--- expected ---\n{want}\n--- got ---\n{got}")


def run_python(path: Path, examples: list[Example]) -> None:
    """Execute the ``python`` blocks of a page in order, in one fresh namespace."""
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    for ex in examples:
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                # Padded so that tracebacks and recorded source lines give the
                # line numbers of the Markdown page itself.
                # dont_inherit: this module's ``from __future__ import annotations``
                # must not turn the page's annotations into strings.
                code = compile("\n" * ex.code.line + ex.code.text, path.name, "exec",
                               dont_inherit=True)
                exec(code, namespace)
        except Exception:
            raise DocExampleError(
                f"the example at {path.name}:{ex.code.line} raised:\n{traceback.format_exc()}"
                f"--- its output so far ---\n{buf.getvalue()}") from None
        if ex.expected is not None:
            _compare(path.name, ex, buf.getvalue())


def run_mypy(path: Path, examples: list[Example]) -> None:
    """Type-check the ``python mypy`` blocks of a page in one mypy run."""
    if not examples:
        return
    mypy_api = pytest.importorskip("mypy.api")
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for k, ex in enumerate(examples):
            f = Path(tmp) / f"example_{k}.py"
            f.write_text(ex.code.text)
            files.append(f)
        config = Path(tmp) / "mypy.ini"
        # mypy_path: an editable install is an import hook, which mypy cannot follow.
        config.write_text(f"[mypy]\nstrict = True\nplugins = plait.mypy_plugin\n"
                          f"follow_imports = silent\nmypy_path = {ROOT}\n")
        stdout, stderr, _ = mypy_api.run([
            "--config-file", str(config), "--cache-dir", str(ROOT / ".mypy_cache" / "docs"),
            "--no-pretty", "--show-error-codes", "--no-error-summary", "--hide-error-context",
            *map(str, files)])
    if stderr.strip() or "INTERNAL ERROR" in stdout:
        raise DocExampleError(f"mypy failed on the examples of {path.name}:\n{stdout}{stderr}")
    reports: dict[int, list[str]] = {k: [] for k in range(len(examples))}
    for line in stdout.splitlines():
        m = _MYPY_LINE.match(line)
        if m is None:
            raise DocExampleError(f"unexpected mypy output for {path.name}: {line!r}")
        k = int(Path(m["file"]).stem.rsplit("_", 1)[1])
        reports[k].append(f"example.py:{m['line']}: {m['rest']}")
    for k, ex in enumerate(examples):
        _compare(path.name, ex, "\n".join(reports[k]))


@contextlib.contextmanager
def _isolated_page() -> Iterator[None]:
    """Undo what a page may change globally: config options, primitives it defines."""
    import plait
    from plait.ir import PRIMITIVES, impl_rules
    options = dict(vars(plait.config.values))
    prims = dict(PRIMITIVES)
    impls = dict(impl_rules)
    try:
        yield
    finally:
        for name, value in options.items():
            setattr(plait.config.values, name, value)
        for name in [k for k in PRIMITIVES if k not in prims]:
            del PRIMITIVES[name]
        for prim in [k for k in impl_rules if k not in impls]:
            del impl_rules[prim]


def run_page(path: Path) -> None:
    """Run every example of one page; raises :class:`DocExampleError` on the first failure."""
    examples = parse_examples(path.read_text())
    with _isolated_page():
        run_python(path, [e for e in examples if e.code.info == "python"])
    run_mypy(path, [e for e in examples if e.code.info == "python mypy"])


# -- tests ---------------------------------------------------------------------------

def test_every_page_exists() -> None:
    for name in PAGES:
        assert (DOCS / name).exists(), f"docs/{name} is missing"


def test_links_between_pages_resolve() -> None:
    for path in sorted(DOCS.glob("*.md")):
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", path.read_text()):
            assert (DOCS / target).exists(), f"{path.name} links to missing {target}"


def test_harness_pairs_text_blocks_with_examples() -> None:
    src = ("x\n```python\nprint(1)\n```\n\n```text\n1\n```\n"
           "```python mypy\nx: int = 1\n```\nprose\n```text\n2\n```\n")
    examples = parse_examples(src)
    assert [(e.code.info, e.code.line) for e in examples] == [("python", 2), ("python mypy", 9)]
    assert examples[0].expected is not None and examples[0].expected.text == "1\n"
    assert examples[1].expected is None


def test_harness_reports_page_and_line(tmp_path: Path) -> None:
    page = tmp_path / "broken.md"
    page.write_text("# t\n\n```python\nprint(2)\n```\n\n```text\n3\n```\n\n"
                    "```python\nraise ValueError('boom')\n```\n")
    with pytest.raises(DocExampleError, match=r"broken\.md:3 differs from the text block at "
                                              r"broken\.md:7"):
        run_page(page)
    page.write_text("```python\nx = 1\n```\n\n```python\nraise ValueError('boom')\n```\n")
    with pytest.raises(DocExampleError, match=r"(?s)broken\.md:5 raised:.*broken\.md\", line 6"):
        run_page(page)


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_page(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DOCS)
    failure = None
    try:
        run_page(DOCS / page)
    except DocExampleError as e:
        failure = str(e)
    if failure is not None:
        pytest.fail(failure, pytrace=False)


if __name__ == "__main__":
    import time
    sys.path.insert(0, str(ROOT))
    for name in sys.argv[1:] or sorted(p.name for p in DOCS.glob("*.md")):
        t0 = time.perf_counter()
        run_page(DOCS / name)
        print(f"{name}: ok ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
