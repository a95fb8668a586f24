"""psum.parse, psum.load and what a Program does: compile, alloc, lint,
bound, verify, the timeline; each against the command line's own output."""

import json

import psum
import pytest
from conftest import REPO, console, run

ONE_SPILL = "examples/02_one_spill.psum"
ONE_SPILL_BANKS = {
    "t0": 0,
    "t1": 7,
    "t2": 6,
    "t3": 5,
    "t4": 4,
    "t5": 3,
    "t6": 2,
    "t7": 1,
    "t8": 0,
    "t0_ReloadTensorCopy1": 0,
}

SMALL = """arch trn1

psum acc [128, 2048]
sbuf w [128, 256] bf16
sbuf x [128, 2048] bf16
sbuf y [128, 2048]
dram out [128, 2048]

block main {
  loop k 0..2 {
    matmul acc <- w, x[0:128, k*1024 : k*1024+1024]
  }
  act y <- acc
  dma out <- y
}
"""


def cli(*args):
    """stdout of the console command, which must succeed."""
    o = run([console(), *args])
    assert o.returncode == 0, o.stderr.decode()
    return o.stdout.decode()


def test_parse_gives_the_canonical_text_and_json():
    p = psum.parse(SMALL)
    assert p.file == "<string>"
    assert p.arch == "trn1"
    assert p.text == SMALL.replace("k*1024 : k*1024+1024", "k*1024:k*1024+1024")
    assert p.warnings == []
    assert p.to_json() == psum.parse(SMALL).to_json()
    again = psum.parse(p.to_json(), file="small.json")
    assert again.file == "small.json"
    assert again.text == p.text
    assert repr(p) == "<psum.Program <string> (arch trn1, 5 tensors, 3 instructions)>"
    assert str(p) == p.text


def test_load_and_compile_match_psum_compile():
    p = psum.load(REPO / ONE_SPILL)
    assert p.text == cli("fmt", ONE_SPILL)
    assert p.to_json() == cli("fmt", ONE_SPILL, "--emit", "json")
    c = p.compile()
    assert c.text == cli("compile", ONE_SPILL)
    assert c.banks == ONE_SPILL_BANKS
    assert c.spills == ["t0"]
    assert c.verified is True
    assert c.hazards == []
    assert c.summary.startswith("psum compile: arch trn1, 8 PSUM banks, 15 instructions after unrolling\n")
    report = c.report
    expected = json.loads(cli("compile", ONE_SPILL, "--report", "json", "-o", "/dev/null"))
    del report["timings_ms"], expected["timings_ms"]
    assert report == expected
    assert report["spilled"] == ["t0"]
    assert report["spill_cost_cycles"] == 128
    assert report["verify"] == {"checker": "ok", "simulator": "ok", "statics": "ok"}
    assert repr(c) == "<psum.Compiled %s (arch trn1, 8 PSUM banks, 1 spilled, verify ok)>" % (REPO / ONE_SPILL)


def test_compile_options_reach_the_pipeline(in_repo):
    p = psum.load(REPO / ONE_SPILL)
    skipped = p.compile(verify=False)
    assert skipped.verified is False
    assert skipped.report["verify"] == {"checker": "skipped", "simulator": "skipped"}
    assert p.compile(allocator="mincost").text == cli("compile", ONE_SPILL, "--allocator", "mincost")
    assert p.compile(rotate=True).text == cli("compile", ONE_SPILL, "--rotate")
    assert p.compile(rotate=False, allocator="mincost").text == cli(
        "compile", ONE_SPILL, "--allocator", "mincost", "--no-rotate"
    )
    with pytest.raises(psum.AllocationError) as e:
        psum.load(ONE_SPILL).compile(banks=7)
    o = run([console(), "compile", ONE_SPILL, "--psum-banks", "7"])
    assert (o.returncode, o.stderr.decode()) == (1, "%s\n" % e.value)
    assert (e.value.file, e.value.line, e.value.column) == (ONE_SPILL, 14, 6)
    assert p.compile(spill_latency=10).report["spill_cost_cycles"] == 20
    with pytest.raises(ValueError, match="allocator='linear'"):
        p.compile(allocator="linear")


def test_alloc_matches_psum_alloc():
    p = psum.load(REPO / ONE_SPILL)
    a = p.alloc()
    assert a.text == cli("alloc", ONE_SPILL)
    assert a.spills == ["t0"]
    assert a.banks == ONE_SPILL_BANKS
    assert a.warnings == []
    assert a.log == run([console(), "alloc", ONE_SPILL, "-v", "-o", "/dev/null"]).stderr.decode().splitlines()
    report = a.report
    expected = json.loads(cli("alloc", ONE_SPILL, "--report", "json", "-o", "/dev/null"))
    del report["timings_ms"], expected["timings_ms"]
    assert report == expected
    assert repr(a) == "<psum.Allocation (arch trn1, 8 PSUM banks, 1 spilled)>"


def test_bound_matches_psum_bound():
    b = psum.load(REPO / ONE_SPILL).bound()
    assert b == json.loads(cli("bound", ONE_SPILL, "--report", "json"))
    assert (b["peak_demand"], b["min_spills"], b["spill_set"]) == (9, 1, ["t0"])
    assert psum.load(REPO / ONE_SPILL).bound(banks=7)["min_spills"] == 2


def test_verify_accepts_the_compiled_program(tmp_path):
    p = psum.load(REPO / ONE_SPILL)
    result = psum.parse(p.compile().text, file="result.psum")
    assert p.verify(result) is True
    assert p.verify(result, exact=True) is True


def test_timeline_renders_inline_and_saves_what_psum_viz_writes(tmp_path):
    t = psum.load(REPO / ONE_SPILL).compile().timeline()
    assert t._repr_svg_().startswith("<svg")
    assert "<svg" in t._repr_html_()
    assert t.svg == t._repr_svg_() and t.html == t._repr_html_()
    assert repr(t) == "<psum.Timeline 02_one_spill.psum (8 banks, 15 points)>"
    for ext in ("svg", "html"):
        ours, theirs = tmp_path / ("ours." + ext), tmp_path / ("cli." + ext)
        t.save(ours)
        cli("viz", ONE_SPILL, "-o", str(theirs))
        assert ours.read_bytes() == theirs.read_bytes()
    with pytest.raises(ValueError, match="saved as .svg or .html"):
        t.save(tmp_path / "t.png")
    with pytest.raises(psum.Error) as e:
        t.save(tmp_path / "missing" / "t.svg")
    assert e.value.file == str(tmp_path / "missing" / "t.svg")


def test_parse_error_carries_its_position_and_the_cli_text(tmp_path):
    bad = SMALL.replace("act y <- acc", "act y <- acc +")
    with pytest.raises(psum.ParseError) as e:
        psum.parse(bad, file="bad.psum")
    assert (e.value.file, e.value.line, e.value.column) == ("bad.psum", 13, 16)
    (tmp_path / "bad.psum").write_text(bad)
    o = run([console(), "compile", "bad.psum"], cwd=tmp_path)
    assert o.returncode == 1
    assert str(e.value) + "\n" == o.stderr.decode()
    assert e.value.message == str(e.value)
    assert isinstance(e.value, psum.Error)


def test_an_undefined_tensor_is_a_parse_error():
    with pytest.raises(psum.ParseError) as e:
        psum.parse(SMALL.replace("act y <- acc", "act y <- acc2"), file="t.psum")
    assert (e.value.file, e.value.line, e.value.column) == ("t.psum", 13, 12)
    assert str(e.value) == (
        "t.psum:13:12: error: undefined tensor 'acc2'\n   |\n13 |   act y <- acc2\n   |            ^^^^"
    )


def test_validation_error_points_at_the_operand():
    with pytest.raises(psum.ValidationError) as e:
        psum.parse(SMALL.replace("act y <- acc", "act y <- w"), file="t.psum")
    assert (e.value.file, e.value.line, e.value.column) == ("t.psum", 13, 12)
    assert str(e.value).startswith(
        "t.psum:13:12: error: %1 (act): destination y has shape [128 partitions, 512 elements] "
        "but source w has shape [128 partitions, 128 elements]\n"
    )


def test_allocation_error_points_at_the_tensor():
    unread = SMALL.replace("psum acc [128, 2048]\n", "psum acc [128, 2048]\npsum lost [128, 2048]\n").replace(
        "  act y <- acc\n", "  matmul lost <- w, x[0:128, 0:1024]\n  act y <- acc\n"
    )
    with pytest.raises(psum.AllocationError) as e:
        psum.parse(unread, file="u.psum").compile()
    assert (e.value.file, e.value.line, e.value.column) == ("u.psum", 4, 6)
    assert str(e.value).startswith("u.psum:4:6: error: no last use find: lost\n")
    with pytest.raises(psum.AllocationError) as e:
        psum.parse(SMALL).alloc(banks=9)
    assert str(e.value) == "<string>: error: --psum-banks 9 is out of range 1..=8"
    assert (e.value.file, e.value.line, e.value.column) == ("<string>", None, None)


def test_verify_error_points_into_the_result():
    original = psum.parse(SMALL, file="orig.psum")
    compiled = original.compile().text
    assert "flags=stop zr=0" in compiled
    result = psum.parse(compiled.replace("flags=stop zr=0", "flags=start|stop zr=0"), file="result.psum")
    with pytest.raises(psum.VerifyError) as e:
        original.verify(result)
    assert (e.value.file, e.value.line, e.value.column) == ("result.psum", 11, 3)
    assert str(e.value).startswith(
        "result.psum:11:3: error: static check: %1: flags=start|stop: start on a matmul that is not the head "
        "of its accumulation cluster (head %0)\n"
    )


def test_internal_error_carries_the_panic_message():
    with pytest.raises(psum.InternalError) as e:
        psum._psum._panic("the invariant broke")
    assert str(e.value) == "internal error: the invariant broke"
    assert (e.value.file, e.value.line, e.value.column) == (None, None, None)


def test_load_of_a_missing_file_is_an_error():
    with pytest.raises(psum.Error) as e:
        psum.load("no/such.psum")
    assert str(e.value) == "no/such.psum: error: No such file or directory (os error 2)"
    assert e.value.file == "no/such.psum"
