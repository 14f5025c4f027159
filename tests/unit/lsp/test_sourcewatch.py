"""`SourceStamps`: a file counts as changed only when its stamp moved since the server last took it in."""

from __future__ import annotations

import os

from tilelens_lsp.lsp.sourcewatch import SourceStamps


def _touch(path, text: str, ns: int) -> str:
    path.write_text(text)
    os.utime(path, ns=(ns, ns))
    return str(path)


def test_a_rewrite_is_seen_once_and_a_taken_in_save_not_at_all(tmp_path):
    helper = _touch(tmp_path / "helper.py", "A = 1\n", 10**18)
    stamps = SourceStamps()
    stamps.took_in([helper])
    assert stamps.changed([helper]) == []
    _touch(tmp_path / "helper.py", "A = 2\n", 10**18 + 1)  # same size, another mtime
    assert stamps.changed([helper]) == [helper]
    assert stamps.changed([helper]) == []  # seen: not again
    _touch(tmp_path / "helper.py", "A = 3\n", 10**18 + 2)
    stamps.took_in([helper])  # a save the editor announced: handled there already
    assert stamps.changed([helper]) == []


def test_a_deleted_file_is_a_change_and_a_file_first_seen_is_not(tmp_path):
    helper = _touch(tmp_path / "helper.py", "A = 1\n", 10**18)
    other = _touch(tmp_path / "other.py", "B = 1\n", 10**18)
    stamps = SourceStamps()
    stamps.took_in([helper])
    os.unlink(helper)
    assert stamps.changed([helper, other]) == [helper]  # other.py: its first stamp, no change
    _touch(tmp_path / "other.py", "B = 22\n", 10**18 + 5)
    assert stamps.changed([other]) == [other]


def test_files_no_longer_followed_are_dropped(tmp_path):
    helper = _touch(tmp_path / "helper.py", "A = 1\n", 10**18)
    stamps = SourceStamps()
    stamps.took_in([helper])
    assert stamps.changed([]) == []  # no open document is made from it any more
    _touch(tmp_path / "helper.py", "A = 2\n", 10**18 + 1)
    assert stamps.changed([helper]) == []  # followed again from here: its stamp now is the first


def test_a_file_written_after_the_run_read_it_counts_as_changed(tmp_path):
    helper = _touch(tmp_path / "helper.py", "A = 1\n", 10**18 + 123)
    stamps = SourceStamps()
    stamps.took_in([helper], read_before_ns=10**18 + 122)  # the run began before this version was written
    assert stamps.changed([helper]) == [helper]
    stamps.took_in([helper], read_before_ns=10**18 + 124)  # the next run began after it
    assert stamps.changed([helper]) == []


def test_on_a_clock_of_whole_seconds_a_write_in_the_runs_own_second_counts_as_changed(tmp_path):
    # HFS+, FAT, network mounts: a helper saved 0.4 s after the run began shows the second before it
    helper = _touch(tmp_path / "helper.py", "A = 1\n", 10**18)
    stamps = SourceStamps()
    stamps.took_in([helper], read_before_ns=10**18 + 400_000_000)
    assert stamps.changed([helper]) == [helper]
    stamps.took_in([helper], read_before_ns=10**18 + 3_000_000_000)  # a run well after that tick
    assert stamps.changed([helper]) == []
