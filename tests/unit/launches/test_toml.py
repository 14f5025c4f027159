"""Launches from toml: which config wins, how `file` resolves, `let`, `target`, and error lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp.launches.toml import (
    ConfigError,
    config_errors,
    files_in_config,
    find_config,
    launches_for_file,
    read_target,
)
from tilelens_lsp.model import ScalarSpec, TensorSpec

ADD = "add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=1024)"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    kernel = write(tmp_path / "kernels" / "add.py", "# kernel\n")
    return tmp_path, kernel


def pyproject(launches: str, target: str = 'target = "cuda:89"') -> str:
    return f'[project]\nname = "x"\n\n[tool.tilelens]\n{target}\n{launches}'


def table(file: str, launch: str = ADD, let: str | None = "N = 4000", header: str = "[[tool.tilelens.launch]]") -> str:
    let_line = f'let = "{let}"\n' if let is not None else ""
    return f'{header}\nfile = "{file}"\n{let_line}launch = "{launch}"\n'


def test_pyproject_launch_relative_to_the_toml_folder(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table("kernels/add.py")))
    result = launches_for_file(kernel, root)
    assert result.errors == [] and result.target == "cuda:89"
    assert result.config_path == root / "pyproject.toml"
    (launch,) = result.launches
    assert launch.kernel == "add_kernel" and launch.origin == "pyproject"
    assert launch.line == 9  # the `launch = ...` line of the toml
    assert launch.grid == (4,)
    assert launch.args[0] == TensorSpec("fp32", (4000,), (1,), 0, 4000)
    assert launch.kwargs == (("BLOCK_SIZE", ScalarSpec("int", 1024)),)


def test_absolute_file_path_matches(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table(str(kernel))))
    assert len(launches_for_file(kernel, root).launches) == 1


def test_tables_for_other_files_are_ignored(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table("kernels/other.py", launch="k[(Q,)](1)")))
    result = launches_for_file(kernel, root)
    assert result.launches == [] and result.errors == []


def test_nearest_pyproject_with_a_tilelens_table_is_used(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table("kernels/add.py", let="N = 1")))
    write(root / "kernels" / "pyproject.toml", pyproject(table("add.py", let="N = 2048")))
    (launch,) = launches_for_file(kernel, root).launches
    assert launch.grid == (2,)


def test_pyproject_without_tilelens_is_skipped_on_the_way_up(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table("kernels/add.py")))
    write(root / "kernels" / "pyproject.toml", '[project]\nname = "inner"\n')
    assert launches_for_file(kernel, root).config_path == root / "pyproject.toml"


def test_search_stops_at_the_workspace_root(tmp_path: Path):
    write(tmp_path / "pyproject.toml", pyproject(table("ws/kernels/add.py")))
    root, kernel = workspace(tmp_path / "ws")
    assert find_config(kernel, root) is None
    assert find_config(kernel, None) == (tmp_path / "pyproject.toml", "pyproject")


def test_tilelens_toml_wins_over_pyproject(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table("kernels/add.py", let="N = 1")))
    write(root / "tilelens.toml", 'target = "cuda:90"\n\n' + table("kernels/add.py", header="[[launch]]"))
    result = launches_for_file(kernel, root)
    assert result.config_path == root / "tilelens.toml" and result.target == "cuda:90"
    (launch,) = result.launches
    assert launch.origin == "tilelens.toml" and launch.grid == (4,) and launch.line == 6


def test_explicit_config_wins_and_reads_either_format(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", table("kernels/add.py", header="[[launch]]", let="N = 1"))
    cfg_a = write(root / "ci" / "a.toml", table("../kernels/add.py", header="[[launch]]"))
    cfg_b = write(root / "ci" / "b.toml", pyproject(table("../kernels/add.py")))
    for cfg in (cfg_a, cfg_b):
        result = launches_for_file(kernel, root, config_file=cfg)
        assert result.config_path == cfg and result.errors == []
        assert [(x.origin, x.grid) for x in result.launches] == [("config", (4,))]


def test_let_may_span_lines_and_use_semicolons(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    text = (
        '[[launch]]\nfile = "kernels/add.py"\nlet = """\n    M = 2; K = 3\n    N = M * K\n"""\n'
        'launch = "add_kernel[(N,)](fp16[M, K].T, N)"\n'
    )
    write(root / "tilelens.toml", text)
    (launch,) = launches_for_file(kernel, root).launches
    assert launch.grid == (6,) and launch.args[0].shape == (3, 2)


def test_grid_lambda_from_toml_keeps_its_env(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    launch = "add_kernel[lambda meta: (cdiv(N, meta['BLOCK_SIZE']),)](fp32[N], N)"
    write(root / "tilelens.toml", table("kernels/add.py", launch=launch, header="[[launch]]"))
    (spec,) = launches_for_file(kernel, root).launches
    assert spec.grid_expr and dict(spec.grid_env) == {"N": 4000}


def test_bad_launch_is_reported_at_its_toml_line_and_column(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", table("kernels/add.py", launch="add_kernel[(1,)](Q)", header="[[launch]]"))
    result = launches_for_file(kernel, root, known_kernels={"add_kernel"})
    assert result.launches == []
    (error,) = result.errors
    assert error.path == root / "tilelens.toml" and error.line == 4
    assert error.column == len('launch = "add_kernel[(1,)](') + 1
    assert "unknown name 'Q'" in error.message and error.message.startswith("`launch`:")
    assert error.kernel == "add_kernel"


def test_unknown_kernel_in_toml_uses_the_known_kernels(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", table("kernels/add.py", header="[[launch]]"))
    (error,) = launches_for_file(kernel, root, known_kernels={"mul_kernel"}).errors
    assert "unknown kernel 'add_kernel' (kernels in this file: mul_kernel)" in error.message


def test_bad_let_is_reported_and_poisons_its_names(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", table("kernels/add.py", let="N = open('x')", header="[[launch]]"))
    errors = launches_for_file(kernel, root).errors
    assert [e.line for e in errors] == [3, 4]
    assert "calls of 'open'" in errors[0].message and "'N' has no value" in errors[1].message


def test_launch_key_must_hold_one_launch(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", table("kernels/add.py", launch="N = 3", header="[[launch]]"))
    (error,) = launches_for_file(kernel, root).errors
    assert "exactly one KERNEL[GRID](ARGS)" in error.message


def test_let_must_hold_only_bindings(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", table("kernels/add.py", let=ADD.replace("N", "4"), header="[[launch]]"))
    errors = launches_for_file(kernel, root).errors
    assert "expected `NAME = expr` bindings, got a launch" in errors[0].message


def test_unknown_and_missing_keys_are_errors(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", '[[launch]]\nfile = "kernels/add.py"\nlanch = "x"\n')
    messages = sorted(e.message for e in launches_for_file(kernel, root).errors)
    assert messages == [
        "a launch table needs `launch`",
        "unknown key 'lanch' in a launch table (keys: file, module, let, launch)",
    ]


def test_invalid_toml_is_one_error_with_its_line(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "tilelens.toml", '[[launch]]\nfile = "kernels/add.py"\nlaunch = \n')
    result = launches_for_file(kernel, root)
    assert result.launches == [] and len(result.errors) == 1
    assert result.errors[0].line == 3 and result.errors[0].message.startswith("invalid toml")


def test_bad_target_is_an_error_on_its_line(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(root / "pyproject.toml", pyproject(table("kernels/add.py"), target='target = "gpu"'))
    result = launches_for_file(kernel, root)
    assert result.target is None and len(result.launches) == 1
    (error,) = result.errors
    assert error.line == 5 and "bad target 'gpu'" in error.message


def test_no_config_anywhere(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    result = launches_for_file(kernel, root)
    assert result.launches == [] and result.config_path is None and result.target is None


def test_files_in_config_lists_each_named_file_once(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    cfg = write(
        root / "ci.toml",
        table("kernels/add.py", header="[[launch]]") * 2 + table(str(root / "kernels" / "mul.py"), header="[[launch]]"),
    )
    assert files_in_config(cfg) == [kernel.resolve(), (root / "kernels" / "mul.py").resolve()]


def test_config_errors_report_missing_files_and_tables_without_file(tmp_path: Path):
    root, _ = workspace(tmp_path)
    cfg = write(root / "ci.toml", table("kernels/nope.py", header="[[launch]]") + '[[launch]]\nlaunch = "k[(1,)](1)"\n')
    errors = config_errors(cfg)
    assert [e.line for e in errors] == [2, 5]
    assert "kernels/nope.py does not exist" in errors[0].message
    assert errors[1].message == "a launch table needs `file`"


def test_inline_array_of_launch_tables_is_read_and_located(tmp_path: Path):
    root, kernel = workspace(tmp_path)
    write(
        root / "tilelens.toml",
        'launch = [\n  { file = "kernels/add.py", launch = "add_kernel[(1,)](fp32[4])" },\n'
        '  { file = "kernels/add.py", launch = "add_kernel[(2,)](Q)" },\n]\n',
    )
    result = launches_for_file(kernel, root)
    assert [(x.line, x.grid) for x in result.launches] == [(2, (1,))]
    (error,) = result.errors
    assert error.line == 3
    assert error.column == len('  { file = "kernels/add.py", launch = "add_kernel[(2,)](') + 1


def test_read_target_and_files_in_config_refuse_an_unusable_config(tmp_path: Path):
    good = write(tmp_path / "good.toml", 'target = "cuda:90"\n')
    assert read_target(good) == "cuda:90" and files_in_config(good) == []
    for text in ("launch = \n", 'target = "gpu"\n'):
        bad = write(tmp_path / "bad.toml", text)
        for fn in (read_target, files_in_config):
            with pytest.raises(ConfigError, match=r"bad\.toml:1: "):
                fn(bad)


# ---------------------------------------------------------------- `module =`: a kernel of an installed package


def installed_package(tmp_path: Path, monkeypatch) -> Path:
    """A package on sys.path (as site-packages would be) whose __init__ must never run to find it."""
    site = tmp_path / "site"
    write(site / "kpkg" / "__init__.py", "raise RuntimeError('finding a module must not import its package')\n")
    kernel = write(site / "kpkg" / "ops" / "add.py", "# kernel\n")
    write(site / "kpkg" / "ops" / "__init__.py", "")
    monkeypatch.syspath_prepend(str(site))
    return kernel


def module_table(module: str, header: str = "[[launch]]") -> str:
    return f'{header}\nmodule = "{module}"\nlet = "N = 4000"\nlaunch = "{ADD}"\n'


def test_module_key_names_an_installed_module_by_its_dotted_name(tmp_path: Path, monkeypatch):
    root, _ = workspace(tmp_path)
    kernel = installed_package(tmp_path, monkeypatch)
    write(root / "tilelens.toml", module_table("kpkg.ops.add"))
    result = launches_for_file(kernel, root)
    assert result.errors == [] and [x.kernel for x in result.launches] == ["add_kernel"]
    assert files_in_config(root / "tilelens.toml") == [kernel.resolve()]


def test_module_key_that_names_no_module_is_a_config_error_on_its_line(tmp_path: Path, monkeypatch):
    root, _ = workspace(tmp_path)
    installed_package(tmp_path, monkeypatch)
    cfg = write(root / "ci.toml", module_table("kpkg.ops.nope"))
    (error,) = config_errors(cfg)
    assert error.line == 2 and "no module named 'kpkg.ops.nope'" in error.message


def test_file_and_module_together_are_refused(tmp_path: Path, monkeypatch):
    root, kernel = workspace(tmp_path)
    write(
        root / "tilelens.toml",
        f'[[launch]]\nfile = "kernels/add.py"\nmodule = "kernels.add"\nlet = "N = 4000"\nlaunch = "{ADD}"\n',
    )
    (error,) = launches_for_file(kernel, root).errors
    assert error.line == 3 and "by `file` or by `module`, not both" in error.message


def test_module_key_is_resolved_in_the_workers_interpreter_when_it_is_another_one(tmp_path: Path):
    # every venv's python is a link to one binary: another path is another interpreter, asked by subprocess
    import sys

    from tilelens_lsp.launches.toml import module_file

    other = tmp_path / "bin" / "python"
    other.parent.mkdir()
    other.symlink_to(sys.executable)
    kernel = write(tmp_path / "proj" / "kpkg" / "ops" / "add.py", "# kernel\n")
    write(tmp_path / "proj" / "kpkg" / "__init__.py", "raise RuntimeError('never run')\n")
    write(tmp_path / "proj" / "kpkg" / "ops" / "__init__.py", "")
    assert module_file("kpkg.ops.add", tmp_path / "proj", str(other)) == kernel.resolve()
    assert module_file("kpkg.ops.nope", tmp_path / "proj", str(other)) is None


def test_a_workspace_whose_toml_names_an_installed_module_owns_that_file(tmp_path: Path, monkeypatch):
    from tilelens_lsp.launches.toml import declared_by_folder

    root, _ = workspace(tmp_path)
    kernel = installed_package(tmp_path, monkeypatch)
    assert not declared_by_folder(root, kernel)
    write(root / "tilelens.toml", module_table("kpkg.ops.add"))
    assert declared_by_folder(root, kernel)


def test_a_module_inside_a_namespace_package_is_found_without_importing_anything(tmp_path):
    # liger_kernel.ops.experimental has no __init__.py: importlib's PathFinder needs its parent
    # imported and raises KeyError otherwise (which crashed the worker); the lookup must not
    from tilelens_lsp.launches.toml import module_file

    pkg = tmp_path / "site" / "pkg"
    (pkg / "ops" / "experimental").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('never run')\n")
    (pkg / "ops" / "__init__.py").write_text("raise RuntimeError('never run')\n")
    (pkg / "ops" / "experimental" / "embedding.py").write_text("x = 1\n")
    found = module_file("pkg.ops.experimental.embedding", tmp_path / "site")
    assert found == (pkg / "ops" / "experimental" / "embedding.py").resolve()
    assert module_file("pkg.ops.missing", tmp_path / "site") is None


def test_a_config_read_again_after_an_edit_gives_the_edit_not_the_parse_kept_of_before(tmp_path: Path):
    """A toml's parse is kept for its text (a corpus toml is read once per file it declares): an
    edit of the same length within the same second is still seen."""
    root, kernel = workspace(tmp_path)
    toml = write(root / "tilelens.toml", table("kernels/add.py", header="[[launch]]"))
    first = launches_for_file(kernel, root).launches
    assert first and launches_for_file(kernel, root).launches == first
    toml.write_text(toml.read_text().replace("N = 4000", "N = 8000"))
    again = launches_for_file(kernel, root).launches
    assert again != first and again[0].grid != first[0].grid
    toml.write_text("[[launch]\n")
    assert launches_for_file(kernel, root).errors  # broken now: never the old parse


def test_a_module_written_after_the_toml_named_it_gets_its_launch(tmp_path: Path):
    # `module_file` keeps its answers for the process: a warm worker once kept "no such module" and
    # dropped the launch of a module written later (the editor showed it clean; `check` did not)
    root = tmp_path
    write(root / "tilelens.toml", module_table("latepkg.ops"))
    write(root / "latepkg" / "__init__.py", "")
    other = write(root / "latepkg" / "impl.py", "# kernel\n")
    assert launches_for_file(other, root).launches == []  # looks the module up: not there yet
    late = write(root / "latepkg" / "ops.py", "# kernel\n")
    assert [x.kernel for x in launches_for_file(late, root).launches] == ["add_kernel"]


def test_a_module_moved_after_its_first_lookup_is_followed(tmp_path: Path):
    root = tmp_path
    write(root / "tilelens.toml", module_table("movepkg.ops"))
    write(root / "movepkg" / "__init__.py", "")
    first = write(root / "movepkg" / "ops.py", "# kernel\n")
    assert [x.kernel for x in launches_for_file(first, root).launches] == ["add_kernel"]
    first.unlink()
    moved = write(root / "movepkg" / "ops" / "__init__.py", "# kernel\n")  # now a package
    assert [x.kernel for x in launches_for_file(moved, root).launches] == ["add_kernel"]


def test_may_launch_is_told_by_the_toml_alone_and_never_misses_a_launched_file(tmp_path: Path):
    from tilelens_lsp.launches.toml import may_launch

    root, kernel = workspace(tmp_path)
    assert not may_launch(kernel, root)  # no toml
    write(root / "tilelens.toml", f'[[launch]]\nfile = "kernels/add.py"\nlet = "N = 4000"\nlaunch = "{ADD}"\n')
    assert may_launch(kernel, root) and not may_launch(write(root / "kernels" / "other.py", ""), root)
    write(root / "tilelens.toml", module_table("somewhere.ops"))  # resolved by the worker, not here
    assert may_launch(write(root / "x" / "ops.py", ""), root)
    assert may_launch(write(root / "y" / "ops" / "__init__.py", ""), root)
    assert not may_launch(write(root / "x" / "util.py", ""), root)


def test_looking_one_module_up_again_keeps_every_other_answer(tmp_path: Path):
    # a moved module is looked up again; the other few hundred of a corpus toml are not (each may
    # cost a process in the package's interpreter): their kept answers stand, here even a stale one
    from tilelens_lsp.launches.toml import forget_module, module_file

    a, b = write(tmp_path / "keep_a.py", ""), write(tmp_path / "keep_b.py", "")
    assert module_file("keep_a", tmp_path) == a.resolve() and module_file("keep_b", tmp_path) == b.resolve()
    b.unlink()
    forget_module("keep_a", tmp_path)
    assert module_file("keep_b", tmp_path) == b.resolve()  # kept: not looked up again
    a.unlink()
    assert module_file("keep_a", tmp_path) is None  # looked up again
