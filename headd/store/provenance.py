"""A session commit's transcript provenance, checked as it arrives (``session.commit``).

Each id goes into a file's head meta and a commit trailer, so it must be one printable line of
bounded length; a prompt or a turn means nothing without the session it belongs to. The checks
live here, beside the commit that stamps the ids, so every caller refuses the same values.
"""

from __future__ import annotations

from headd.errors import InvalidParams
from headd.store.commit import Provenance

PROVENANCE_MAX_CHARS = 200


def check_provenance_value(name: str, value: str | None) -> str | None:
    """A provenance id as it may go into a meta and a trailer: one line, printable, bounded."""
    if value is None:
        return None
    if (
        not value.strip()
        or len(value) > PROVENANCE_MAX_CHARS
        or any(ch in value for ch in "\r\n\t\x00")
        or not value.isprintable()
    ):
        raise InvalidParams(
            f"{name} must be one printable line of 1 to {PROVENANCE_MAX_CHARS} characters",
            {"field": name},
        )
    return value.strip()


def provenance_from(
    session_id: str | None, prompt_id: str | None, turn: str | None
) -> Provenance | None:
    """The commit's provenance, or None when no session id is given; InvalidParams for a bad
    id, or for a prompt or turn without a session id."""
    session_id = check_provenance_value("session_id", session_id)
    prompt_id = check_provenance_value("prompt_id", prompt_id)
    turn = check_provenance_value("turn", turn)
    if session_id is None:
        if prompt_id is not None or turn is not None:
            raise InvalidParams("prompt_id and turn need a session_id", {"field": "session_id"})
        return None
    return Provenance(session_id=session_id, prompt_id=prompt_id, turn=turn)
