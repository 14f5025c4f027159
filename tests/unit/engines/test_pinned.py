"""`pinned.shared_element`: the first element two programs evaluated at one declared value both store,
read from the runs the enumeration kept, whether the addresses came out as values or as one-element
bounds."""

from __future__ import annotations

import numpy as np

from tilelens_lsp.engines.pinned import shared_element
from tilelens_lsp.engines.values import ArgInfo, SiteResult

STORAGE = ArgInfo("out_ptr", 4, 0, 64)


def _a(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.int64)


def _exact_store(tagged: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> SiteResult:
    """A store every lane of which had a value for an address: no out-of-bounds lane, no bounds."""
    return SiteResult("store", "out_ptr", "loc", (), exact=True, tagged=tagged, bounds=[])


def test_exact_stores_of_two_programs_meet_at_their_first_common_element():
    site = _exact_store([(_a(0, 8), _a(4, 12), _a(0, 0)), (_a(10), _a(20), _a(1))])
    assert shared_element(site, STORAGE) == 10


def test_exact_stores_that_stay_apart_share_nothing():
    site = _exact_store([(_a(0), _a(8), _a(0)), (_a(8), _a(16), _a(1))])
    assert shared_element(site, STORAGE) is None


def test_a_common_element_outside_the_storage_is_not_a_meeting():
    site = _exact_store([(_a(64), _a(70), _a(0)), (_a(60), _a(70), _a(1))])
    assert shared_element(site, STORAGE) is None  # both store 64..69, past the storage's 64 elements


def test_bounds_wider_than_one_element_are_not_a_meeting():
    lanes = _a(0)
    wide = [(_a(0), _a(2), _a(0), lanes), (_a(1), _a(3), _a(1), lanes)]
    site = SiteResult("store", "out_ptr", "loc", (), exact=False, tagged=None, bounds=wide)
    assert shared_element(site, STORAGE) is None
    single = [(_a(5), _a(6), _a(0), lanes), (_a(5), _a(6), _a(1), lanes)]
    site = SiteResult("store", "out_ptr", "loc", (), exact=False, tagged=None, bounds=single)
    assert shared_element(site, STORAGE) == 5
