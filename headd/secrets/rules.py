"""The credential shapes the write door refuses, as pure functions over one text.

Each rule is a compiled pattern whose ``value`` group is the credential itself, plus an optional
check on that value (a placeholder such as ``<password>`` or ``${TOKEN}`` is no secret; a
generic key-like assignment needs the entropy of a random string). A finding names the rule's
kind and where the value starts (1-based line and column), never the value: it travels in error
messages and reports that end up in logs and terminals.

Why our own rules and not Yelp's ``detect-secrets`` at the door: docs/design.md, "Secrets at
the write door" (its keyword and entropy plugins refuse ordinary prose; our shapes are anchored
on each vendor's fixed prefix or on key-like context, and run in one regex pass per rule).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import NamedTuple

#: Values that stand for a secret without being one: documentation and templates.
_PLACEHOLDER = re.compile(
    r"""^(?:
        [<\[{(].*[>\]})]            # <password>, [token], {secret}, (key)
      | \$\{?[A-Za-z_][\w.]*\}?     # $TOKEN, ${API_KEY}
      | %\(?[A-Za-z_]\w*\)?s?%?     # %(password)s, %PASSWORD%
      | \*+ | x+ | X+ | \.+ | -+ | _+ | \#+ | •+
      | (?i:changeme|redacted|hidden|none|null|nil|true|false|undefined|example\w*
          |your[-_\w]*|my[-_]?(?:password|secret|token|key)|password|secret|token
          |dummy\w*|placeholder|test|tbd|todo|n/?a|env|\.\.\.)
    )$""",
    re.VERBOSE,
)


class Finding(NamedTuple):
    """One credential-shaped value: its kind and where it starts (1-based), never the value."""

    kind: str
    line: int
    column: int


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: a random token is high, a word or a path low."""
    if not value:
        return 0.0
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.match(value.strip("'\"`")) is not None


def _not_placeholder(value: str) -> bool:
    return not is_placeholder(value)


def _password_like(value: str) -> bool:
    """A value after ``password:`` that is a credential, not prose (``password: reset weekly``
    has a word after it; ``password: hunter2`` and ``password: "s3cr3t"`` do not)."""
    if is_placeholder(value) or len(value) < 4:
        return False
    bare = value.strip("'\"`")
    if bare != value:  # quoted: someone wrote a literal value
        return True
    return (
        any(c.isdigit() for c in bare)
        or any(not c.isalnum() for c in bare)
        or (any(c.isupper() for c in bare[1:]) and any(c.islower() for c in bare))
    )


def _random_token(value: str) -> bool:
    """A value in key-like context long and random enough to be a generated secret."""
    if is_placeholder(value) or len(value) < 20:
        return False
    if re.fullmatch(r"[0-9a-fA-F]+", value):
        return len(value) >= 32 and entropy(value) >= 3.0
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and entropy(value) >= 3.5


class Rule(NamedTuple):
    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    #: Literals of which every match holds one: the pattern runs only over a text holding one
    #: (Python's ``re`` tries a pattern with no literal prefix at every position: a 600-character
    #: memory cost 0.8 ms for the thirty patterns, most of an apply's door).
    needles: tuple[str, ...] = ()
    #: The needles are lower case and looked for in the text folded as ``(?i:...)`` folds it.
    folded: bool = False


#: The four characters beyond ASCII that Python's case-insensitive matching takes for an ASCII
#: letter (U+0130 and U+0131 for i, U+017F for s, U+212A for k); ``str.lower`` alone keeps two of
#: them, so a folded needle would miss ``ſecret`` which ``(?i:secret)`` matches.
_ASCII_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def fold(text: str) -> str:
    """``text`` as the folded needles are looked for in it."""
    return text.translate(_ASCII_FOLD).lower()


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


_KEYWORD_SEPARATOR = r"""["']?\s{0,3}(?::=|=>|[:=])\s{0,3}"""

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        # The block's body too (up to its END line, or the base64 lines that follow when the
        # text is cut before it or its lines are joined), so ``redact`` drops the key itself.
        _r(
            r"(?P<value>-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]{0,16384}?-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[ \t]*\r?\n[A-Za-z0-9+/=]+(?=\s|$)|\s+[A-Za-z0-9+/=]{16,}(?=\s|$)){0,400}))"
        ),
        needles=("-----BEGIN",),
    ),
    Rule(
        "aws-access-key-id",
        _r(r"\b(?P<value>(?:AKIA|ASIA|ABIA|ACCA|AIDA)[0-9A-Z]{16})\b"),
        needles=("AKIA", "ASIA", "ABIA", "ACCA", "AIDA"),
    ),
    Rule(
        "aws-secret-access-key",
        _r(
            r"(?i:aws)[\w.-]{0,20}(?i:secret|key)[\w.-]{0,20}"
            + _KEYWORD_SEPARATOR
            + r"""["']?(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"""
        ),
        needles=("aws",),
        folded=True,
    ),
    Rule("gcp-api-key", _r(r"\b(?P<value>AIza[0-9A-Za-z_\-]{35})(?![\w-])"), needles=("AIza",)),
    Rule(
        "gcp-service-account-key",
        _r(r'"private_key_id"\s*:\s*"(?P<value>[0-9a-f]{40})"'),
        needles=('"private_key_id"',),
    ),
    Rule(
        "azure-storage-key",
        _r(r"(?i:AccountKey|SharedAccessKey)\s*=\s*(?P<value>[A-Za-z0-9+/]{40,}={0,2})"),
        needles=("accountkey", "sharedaccesskey"),
        folded=True,
    ),
    Rule(
        "azure-client-secret",
        _r(r"(?<![\w~.-])(?P<value>[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![\w~.-])"),
        needles=("Q~",),
    ),
    Rule(
        "azure-sas-token",
        _r(r"[?&]sig=(?P<value>[A-Za-z0-9%+/]{40,}(?:%3D|=){0,2})"),
        needles=("sig=",),
    ),
    Rule(
        "github-token",
        _r(r"\b(?P<value>gh[pousr]_[A-Za-z0-9]{36,255})\b"),
        needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    Rule(
        "github-token",
        _r(r"\b(?P<value>github_pat_[A-Za-z0-9_]{60,255})\b"),
        needles=("github_pat_",),
    ),
    Rule(
        "gitlab-token",
        _r(r"\b(?P<value>gl(?:pat|ptt|dt|rt|cbt|oas|soat)-[A-Za-z0-9_\-]{20,})"),
        needles=("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glsoat-"),
    ),
    Rule(
        "slack-token",
        _r(r"\b(?P<value>xox[abposrce]-(?:\d+-)?[A-Za-z0-9-]{10,})"),
        needles=("xox",),
    ),
    Rule(
        "slack-webhook",
        _r(r"(?P<value>https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,})"),
        needles=("https://hooks.slack.com/",),
    ),
    Rule(
        "stripe-key",
        _r(r"\b(?P<value>(?:sk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{16,})\b"),
        needles=("_live_", "_test_"),
    ),
    Rule(
        "anthropic-key",
        _r(r"\b(?P<value>sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{32,})"),
        needles=("sk-ant-",),
    ),
    Rule(
        "openai-key",
        _r(
            r"\b(?P<value>sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"
            r"T3BlbkFJ[A-Za-z0-9_\-]{16,})"
        ),
        needles=("T3BlbkFJ",),
    ),
    Rule(
        "openai-key",
        _r(r"\b(?P<value>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,})"),
        needles=("sk-proj-", "sk-svcacct-", "sk-admin-"),
    ),
    Rule("openai-key", _r(r"(?<![\w-])(?P<value>sk-[A-Za-z0-9]{48})\b"), needles=("sk-",)),
    Rule("huggingface-token", _r(r"\b(?P<value>hf_[A-Za-z0-9]{34,})\b"), needles=("hf_",)),
    Rule("npm-token", _r(r"\b(?P<value>npm_[A-Za-z0-9]{36})\b"), needles=("npm_",)),
    Rule(
        "pypi-token",
        _r(r"\b(?P<value>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})"),
        needles=("pypi-AgEIcHlwaS5vcmc",),
    ),
    Rule(
        "sendgrid-key",
        _r(r"\b(?P<value>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})"),
        needles=("SG.",),
    ),
    Rule("twilio-key", _r(r"\b(?P<value>SK[0-9a-f]{32})\b"), needles=("SK",)),
    Rule(
        "jwt",
        _r(r"\b(?P<value>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
        needles=("eyJ",),
    ),
    Rule(
        "connection-string-password",
        _r(
            r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'\"<>]{1,64}:"
            r"(?P<value>[^\s@/'\"<>]{1,128})@[^\s/@'\"<>]{2,}"
        ),
        _not_placeholder,
        needles=("://",),
    ),
    Rule(
        "connection-string-password",
        _r(r"(?i:\b(?:password|pwd)\s*=\s*)(?P<value>[^;\s'\"<>]{3,128})(?=;|\s|$)"),
        _not_placeholder,
        needles=("password", "pwd"),
        folded=True,
    ),
    Rule(
        "password-assignment",
        _r(
            r"(?i:(?:\b|(?<=_))(?:password|passwd|passphrase)\b)"
            + _KEYWORD_SEPARATOR
            + r"""(?P<value>"[^"\s]{4,128}"|'[^'\s]{4,128}'|[^\s"'<>,;]{4,128})"""
        ),
        _password_like,
        needles=("pass",),
        folded=True,
    ),
    Rule(
        "secret-assignment",
        _r(
            r"(?i:(?:\b|(?<=_))(?:secret|client[_-]?secret|secret[_-]?key|api[_-]?secret)\b)"
            + _KEYWORD_SEPARATOR
            + r"""(?P<value>"[^"\s]{6,256}"|'[^'\s]{6,256}'|[^\s"'<>,;]{6,256})"""
        ),
        _password_like,
        needles=("secret",),
        folded=True,
    ),
    Rule(
        "bearer-token",
        _r(r"(?i:\bbearer\s+)(?P<value>[A-Za-z0-9_\-.=+/~]{20,})"),
        _random_token,
        needles=("bearer",),
        folded=True,
    ),
    Rule(
        "high-entropy-key",
        _r(
            r"(?i:(?:api[_-]?key|apikey|access[_-]?key|auth[_-]?key|token|secret"
            r"|credential|private[_-]?key|signing[_-]?key|session[_-]?key)[\w.-]{0,20})"
            + _KEYWORD_SEPARATOR
            + r"""["']?(?P<value>[A-Za-z0-9+/_\-=.~]{20,512})"""
        ),
        _random_token,
        needles=("key", "token", "secret", "credential"),
        folded=True,
    ),
)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    return starts


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    """(line, column), both 1-based, of ``offset`` in the text ``starts`` indexes."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1, offset - starts[lo] + 1


def _hits(text: str) -> Iterator[tuple[int, int, str]]:
    folded: str | None = None
    for rule in RULES:
        if rule.needles:
            if rule.folded:
                if folded is None:
                    folded = fold(text)
                haystack = folded
            else:
                haystack = text
            if not any(needle in haystack for needle in rule.needles):
                continue
        for match in rule.pattern.finditer(text):
            value = match.group("value")
            if rule.accept is None or rule.accept(value):
                yield match.start("value"), match.end("value"), rule.kind


#: The shortest run of non-space characters any rule's value spans, keyword rules aside.
_SHORTEST_VALUE = 15


def may_hold(text: str) -> bool:
    """False only when no rule can match: a cheap gate in front of the thirty patterns.

    Every rule's value is a run of at least ``_SHORTEST_VALUE`` non-space characters, except
    the keyword rules (``password``, ``pwd``, ``secret``, a private key block, a URL's
    credentials), whose words are looked for instead. Ordinary prose has neither, and the
    gate (one ``split`` and four substring tests) costs a few percent of the patterns' pass.
    """
    if "://" in text:
        return True
    low = fold(text)
    if "pass" in low or "pwd" in low or "secret" in low or "private key" in low:
        return True
    return max(map(len, text.split()), default=0) >= _SHORTEST_VALUE


def _spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every value, in text order; where two rules match overlapping
    text, the first rule in ``RULES`` (the more specific shape) names it."""
    if not text or not may_hold(text):
        return []
    taken: list[tuple[int, int, str]] = []
    for start, end, kind in _hits(text):
        if any(start < t_end and t_start < end for t_start, t_end, _ in taken):
            continue
        taken.append((start, end, kind))
    return sorted(taken)


def scan(text: str) -> list[Finding]:
    """Every credential-shaped value in ``text``, in text order, one finding per value.

    A GitHub token after ``token=`` is a ``github-token``, not a generic one (``_spans``).
    """
    spans = _spans(text)
    if not spans:
        return []
    starts = _line_starts(text)
    return [Finding(kind, *_position(starts, start)) for start, _, kind in spans]


def redact(text: str) -> str:
    """``text`` with every credential-shaped value replaced by ``[redacted:<kind>]`` (a marker
    no rule matches again).

    For text headd keeps but did not write through the door, such as the prompts of agent
    transcripts in the transcript index: the prompt stays searchable, the value is gone.
    """
    spans = _spans(text)
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end, kind in spans:
        out.append(text[at:start])
        out.append(f"[redacted:{kind}]")
        at = end
    out.append(text[at:])
    return "".join(out)
