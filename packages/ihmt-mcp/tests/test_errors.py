"""The one error message every edge shows: ``USER_ERRORS`` and ``plain_message``."""

from __future__ import annotations

import errno
import os

import pytest

from ihmt_mcp import USER_ERRORS, EmptyContentError, plain_message
from ihmt_store import LeafNotFoundError


def test_a_system_error_names_its_file_without_the_errno_prefix() -> None:
    exc = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "/tmp/gone.txt")
    assert plain_message(exc) == "No such file or directory: /tmp/gone.txt"


def test_an_error_without_a_message_gives_its_type_name() -> None:
    assert plain_message(ValueError()) == "ValueError"


def test_a_message_is_given_as_it_is_lines_and_all() -> None:
    assert plain_message(ValueError("first\nsecond")) == "first\nsecond"
    assert plain_message(EmptyContentError()) == "nothing to save: the content is empty"


@pytest.mark.parametrize(
    "exc",
    [EmptyContentError(), LeafNotFoundError("L-x"), KeyError("k"), PermissionError("no")],
)
def test_the_errors_a_user_is_told_about_are_caught_by_one_tuple(exc: Exception) -> None:
    assert isinstance(exc, USER_ERRORS)


def test_a_bug_is_not_a_user_error() -> None:
    assert not isinstance(TypeError("bug"), USER_ERRORS)
    assert not isinstance(RuntimeError("bug"), USER_ERRORS)
