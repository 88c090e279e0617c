"""The edge: run the click group and turn every failure into one line and an exit code.

Exit codes: 0 success, 1 an error (bad input, missing store, refused save…), 2 a usage
error (unknown option, missing argument, a value of the wrong form), 130 interrupted.
"""

from __future__ import annotations

import sys
import traceback

import click

__all__ = ["main"]


MAX_MESSAGE_CHARS = 500
"""An error line is clipped to this: a message may quote what the user gave (a 100 KB id)."""


def _one_line(text: str) -> str:
    from ihmt_cli._base import clip, terminal_safe
    from ihmt_store import one_line

    return clip(terminal_safe(one_line(str(text))), MAX_MESSAGE_CHARS)


def _without_secrets(message: str, args: list[str]) -> str:
    """``message`` with every command-line argument that holds a secret cut out.

    click quotes what it could not parse ("No such option '-----BEGIN OPENSSH…'", "Got
    unexpected extra arguments (ghp_…)", "'hvs.…' is not a valid integer"): a secret
    given in the wrong place must not reach the terminal, a log or a CI transcript.
    """
    from ihmt_mcp import find_secrets

    for arg in sorted(set(args), key=len, reverse=True):
        name = arg.partition("=")[0]  # click names an unknown --option=value by its name
        # as given, and as repr() shows it (click quotes some values with repr)
        forms = [f for f in (arg, repr(arg)[1:-1], name, repr(name)[1:-1]) if len(f) >= 8]
        if not any(form in message for form in forms):
            continue
        found = find_secrets(arg)
        if found:
            hidden = f"[{found[0].kind}, not shown]"
            for form in forms[:2] + [f for f in forms[2:] if find_secrets(f)]:
                message = message.replace(form, hidden)
    if find_secrets(message):  # a secret click quoted in a form of its own
        return "the command line is not valid, and it holds a secret, so it is not shown"
    return message


def _fail(message: str, *, show_traceback: bool) -> None:
    if show_traceback:
        traceback.print_exc(file=sys.stderr)
    try:
        sys.stderr.write(f"ihmt: error: {_one_line(message)}\n")
        sys.stderr.flush()
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """Run ``ihmt`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    from ihmt_cli._app import cli

    args = list(sys.argv[1:] if argv is None else argv)
    verbose = any(a in ("-v", "--verbose") for a in args)
    try:
        outcome = cli.main(args, prog_name="ihmt", standalone_mode=False)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "ihmt"
        message = _without_secrets(exc.format_message(), args)
        _fail(
            f"{message} (see '{where} --help')",
            # the traceback would repeat click's message, secret and all
            show_traceback=verbose and message == exc.format_message(),
        )
        return 2
    except click.ClickException as exc:
        _fail(exc.format_message(), show_traceback=verbose)
        return 1
    except click.Abort:
        _fail("aborted; nothing was changed", show_traceback=False)
        return 1
    except KeyboardInterrupt:
        _fail("interrupted", show_traceback=verbose)
        return 130
    except BrokenPipeError:
        # The reader went away (`ihmt tree | head`): not an error worth a message.
        return 0
    except Exception as exc:  # noqa: BLE001 — the CLI's edge: no traceback ever reaches a user
        from ihmt_mcp import USER_ERRORS, plain_message

        if isinstance(exc, USER_ERRORS):
            _fail(plain_message(exc), show_traceback=verbose)
            return 1
        _fail(
            f"unexpected {type(exc).__name__}: {exc}; rerun with -v for the traceback and "
            "report it",
            show_traceback=verbose,
        )
        return 1
    return outcome if isinstance(outcome, int) else 0
