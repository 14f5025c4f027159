"""The configs of one launch shared between workers: each config is answered by exactly one of them.

`check --jobs N` hands a launch whose configs run long to a second worker while the first is still
on it (worker/pool.py). Every worker on the launch binds all of its configs (cheap, and the same in
each, so all agree which configs repeat an earlier one's specialization) and answers a config only
where its claim, an exclusive create in a folder the parent made, succeeds. The folder is also what
the parent reads to decide whether another worker can still help: which configs are claimed, by
which part, since when, and whether a worker has gone past the launch's last config.
Nothing here analyses or imports anything; the worker side is `pipeline/file.py`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Claims:
    """One part's claims in `folder`; `token` names the part in every claim it makes."""

    folder: str
    token: str

    def claim(self, launch: int, config: int) -> bool:
        """Claim config `config` of launch `launch`: True for exactly one of the parts that ask. Where
        the folder cannot be written the config is answered anyway: an answer twice is merged, an
        answer never would be a launch silently half checked."""
        try:
            fd = os.open(os.path.join(self.folder, f"{launch}.{config}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        except OSError:
            return True
        try:
            os.write(fd, self.token.encode("utf-8"))
        finally:
            os.close(fd)
        return True

    def announce(self, launch: int, configs: int) -> None:
        """`launch` has `configs` configs (the parent lets that many helpers start on it at once)."""
        final = os.path.join(self.folder, f"{launch}.n")
        partial = f"{final}.{self.token}"
        try:
            with open(partial, "w", encoding="utf-8") as f:
                f.write(str(configs))
            os.replace(partial, final)  # whole or absent: a reader never sees half a number
        except OSError:
            pass  # helpers then join one at a time, as where the count is unknown

    def finish(self, launch: int) -> None:
        """This part went past the last config of `launch`: every config is claimed by someone now."""
        try:
            os.close(os.open(os.path.join(self.folder, f"{launch}.all"), os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError:
            pass  # the parent then lets a late helper run to the end (it claims nothing): slower, not wrong

    def to_json(self) -> dict[str, str]:
        return {"folder": self.folder, "token": self.token}

    @staticmethod
    def from_json(d: object) -> "Claims | None":
        if not isinstance(d, dict) or not isinstance(d.get("folder"), str) or not isinstance(d.get("token"), str):
            return None
        return Claims(d["folder"], d["token"])


@dataclass(frozen=True)
class LaunchClaims:
    """What the folder says of one launch: how many configs are claimed, when the newest and the oldest
    claims were, by whom ("" for a claim still being written), whether every config is claimed
    (`finished`), and how many configs the launch has (`total`, None until a worker has bound them)."""

    count: int
    newest: float
    tokens: frozenset[str]
    finished: bool
    total: int | None = None
    oldest: float = 0.0

    def left_seconds(self, now: float) -> float:
        """The seconds its unclaimed configs would take at the pace of those claimed so far (each
        claimed config taken as done by now: an estimate that errs short)."""
        if not self.count or not self.oldest:
            return 0.0
        return (now - self.oldest) / self.count * self.unclaimed()

    def unclaimed(self) -> int:
        """Configs no worker has claimed yet (at least one while the count is unknown or unfinished)."""
        if self.finished:
            return 0
        return max(1, self.total - self.count) if self.total is not None else 1


def read_claims(folder: str) -> dict[int, LaunchClaims]:
    """Every launch with a claim or a mark in `folder`, by launch index (one listing: the parent reads
    it a few times a second while workers are idle)."""
    found: dict[int, dict] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    for name in names:
        launch, _, rest = name.partition(".")
        if not launch.isdigit():
            continue
        seen = found.setdefault(
            int(launch), {"count": 0, "newest": 0.0, "oldest": 0.0, "tokens": set(), "finished": False, "total": None}
        )
        if rest == "all":
            seen["finished"] = True
        elif rest == "n":
            seen["total"] = _number(os.path.join(folder, name))
        elif rest.isdigit():
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as f:
                    seen["tokens"].add(f.read().decode("utf-8", "replace"))
                when = os.stat(path).st_mtime
                seen["newest"] = max(seen["newest"], when)
                seen["oldest"] = min(seen["oldest"] or when, when)
            except OSError:
                seen["tokens"].add("")
            seen["count"] += 1
    return {
        i: LaunchClaims(d["count"], d["newest"], frozenset(d["tokens"]), d["finished"], d["total"], d["oldest"])
        for i, d in found.items()
    }


def _number(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


NOTHING = LaunchClaims(0, 0.0, frozenset(), False)
