"""``pytest --detachlint``: the test session runs under the runtime companion's observer.

Registered through the ``pytest11`` entry point of the detachlint-runtime distribution. Without
``--detachlint`` nothing is imported beyond this module (no torch), so installing the runtime
never changes a plain ``pytest`` run.
"""

from __future__ import annotations


def pytest_addoption(parser) -> None:
    group = parser.getgroup("detachlint", "detachlint runtime companion")
    group.addoption("--detachlint", action="store_true", default=False,
                    help="observe aliasing/detach hazards while the tests run and give each static "
                         "finding in the code that ran a verdict (confirmed / observed / harmless-in-run / unobservable / "
                         "not-run)")
    group.addoption("--detachlint-watch", choices=("flagged", "all"), default="flagged",
                    help="as `detachlint run --watch` (default: flagged)")
    group.addoption("--detachlint-fail-on", choices=("never", "confirmed", "observed"), default="never",
                    help="as `detachlint run --fail-on`: exit 1 when the tests passed but a finding is "
                         "confirmed, or with `observed` also when what a finding describes happened "
                         "(default: never)")
    group.addoption("--detachlint-output", metavar="FILE", default=None,
                    help="also write the report to FILE (format from --detachlint-output-format)")
    group.addoption("--detachlint-output-format", choices=("text", "json", "sarif"), default="text",
                    help="format of --detachlint-output (default: text)")


def pytest_configure(config) -> None:
    if not config.getoption("detachlint"):
        return
    from .observe import Observer

    observer = Observer(watch_all=config.getoption("detachlint_watch") == "all")
    config._detachlint_observer = observer
    observer.start()


def _finish(config) -> bool:
    """Stop observing and report; whether ``--detachlint-fail-on`` fails the session."""
    observer = getattr(config, "_detachlint_observer", None)
    if observer is None:
        return False
    del config._detachlint_observer
    observer.stop()
    from .report import failed, write_report

    results = observer.results()
    write_report(results, config.getoption("detachlint_output"), config.getoption("detachlint_output_format"))
    return failed(results, config.getoption("detachlint_fail_on"))


def pytest_sessionfinish(session, exitstatus) -> None:
    # Here, not at unconfigure: the session's exit status can still be changed.
    if _finish(session.config) and exitstatus == 0:
        session.exitstatus = 1


def pytest_unconfigure(config) -> None:
    _finish(config)  # a session that never finished (an internal error)
