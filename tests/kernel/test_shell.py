"""The shell-line parser's record of what a command is as written: the parts a check must not be fooled by."""

from __future__ import annotations

import pytest

from hermes.kernel.shell import simple_commands


def _only(command: str, name: str):  # type: ignore[no-untyped-def]
    (found,) = [c for c in simple_commands(command) if c.name == name]
    return found


def test_written_keeps_variables_substitutions_and_the_program_path() -> None:
    assert _only("X=rm; $X -rf d", "rm").written == ["$X", "-rf", "d"]
    assert _only("$(which rm) -rf ~", "$(which rm)").written == ["$(which rm)", "-rf", "~"]
    assert _only("/tmp/evil/ls -la", "ls").written == ["/tmp/evil/ls", "-la"]
    assert _only("echo `date`", "echo").written == ["echo", "`date`"]
    assert _only("sudo -u me rm x", "rm").written == ["rm", "x"]  # from the program on, like argv


def test_a_process_substitution_is_a_file_not_its_text() -> None:
    bash = _only("bash <(echo 'rm -rf ~')", "bash")
    assert bash.argv == ["bash", "<(echo 'rm -rf ~')"]
    assert _only("rm -rf $(echo /)", "rm").argv == ["rm", "-rf", "/"]  # a command substitution is its text


def test_assignments_and_redirections_alone_are_recorded() -> None:
    (alone,) = simple_commands("PATH=/tmp/x:$PATH")
    assert alone.argv == [] and alone.words == [] and alone.assigns == ["PATH=/tmp/x:$PATH"]
    (redirect,) = simple_commands("> ~/.bashrc")
    assert redirect.writes == ["~/.bashrc"] and redirect.words == []
    assert _only("GIT_PAGER=x git log", "git").assigns == ["GIT_PAGER=x"]


def test_here_documents_are_bodies_not_commands() -> None:
    commands = simple_commands("cat <<'EOF' > notes.txt\nrm -rf ~\nEOF\nls")
    assert [c.name for c in commands] == ["cat", "ls"]
    assert commands[0].heredocs == [("rm -rf ~\n", False)] and commands[0].writes == ["notes.txt"]
    tabbed = simple_commands("cat <<-END\n\tone\n\tEND\necho after")
    assert tabbed[0].heredocs == [("one\n", True)] and tabbed[1].argv == ["echo", "after"]
    assert _only('python3 <<< "print($X)"', "python3").heredocs == [("print($X)", True)]


def test_an_unquoted_here_document_runs_its_substitutions() -> None:
    names = [c.name for c in simple_commands("cat <<EOF\nnow $(rm -rf ~)\nEOF")]
    assert names == ["rm", "cat"]
    assert [c.name for c in simple_commands("cat <<'EOF'\nnow $(rm -rf ~)\nEOF")] == ["cat"]


def test_a_here_document_inside_a_substitution_belongs_to_it() -> None:
    bash = _only("x=$(bash <<'E'\nrm -rf ~\nE\n)", "bash")
    assert bash.heredocs == [("rm -rf ~\n", False)] and bash.depth == 1


@pytest.mark.parametrize("command", ["f() { ls; }; f", "f () { ls; }", "function f { ls; }"])
def test_function_definitions_are_marked(command: str) -> None:
    assert [c.name for c in simple_commands(command) if c.function] in (["f"], ["function"])
    assert not [c for c in simple_commands("echo 'f()'; git commit -m 'fix g()'") if c.function]
