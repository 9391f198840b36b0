"""A corpus of credentials in every shape the write door refuses, built from parts at run time
(so no literal token sits in the repository for a scanner upstream to trip on), with the kind
each must be named as, and ordinary memory text that must pass."""

from __future__ import annotations

import base64
import json

_A = "abcdefghijklmnopqrstuvwxyz"
_MIX = "Zq7Lm2Xv9Rt4Kp8Wn3Hc6Jd1Fg5Bs0Ye"


def _mixed(n: int) -> str:
    return (_MIX * (n // len(_MIX) + 1))[:n]


def _b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


_JWT = ".".join(
    (_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": "1234567890", "n": "x"}), _mixed(43))
)
_PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + _mixed(40) + "\n-----END"

#: (kind, text): the text holds one credential of that kind.
SECRETS: tuple[tuple[str, str], ...] = (
    ("private-key", f"The deploy key is:\n{_PEM} RSA PRIVATE KEY-----"),
    ("private-key", "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"),
    ("aws-access-key-id", "Use access key " + "AKIA" + "QX7ZL2M9RT4KP8WN for the backup bucket."),
    (
        "aws-secret-access-key",
        "aws_secret_access_key = " + _mixed(20) + "/" + _mixed(19),
    ),
    ("gcp-api-key", "Maps key: " + "AIza" + "Sy" + _mixed(33)),
    (
        "gcp-service-account-key",
        '{"type": "service_account", "private_key_id": "' + "a1b2c3d4e5" * 4 + '"}',
    ),
    (
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + _mixed(86) + "==",
    ),
    ("azure-client-secret", "client secret " + "Ab1" + "8Q~" + _mixed(34)),
    ("github-token", "token " + "ghp" + "_" + _mixed(36)),
    ("github-token", "github" + "_pat_" + "11ABCDEFG0" + _mixed(72)),
    ("gitlab-token", "GitLab: " + "glpat" + "-" + _mixed(20)),
    ("slack-token", "bot token " + "xoxb" + "-123456789012-1234567890123-" + _mixed(24)),
    (
        "slack-webhook",
        "hook https://hooks.slack.com/services/" + "T0123ABCD/B0123ABCD/" + _mixed(24),
    ),
    ("stripe-key", "Stripe " + "sk" + "_live_" + _mixed(24)),
    ("openai-key", "OPENAI=" + "sk-proj-" + _mixed(20) + "T3Blbk" + "FJ" + _mixed(20)),
    ("openai-key", "key " + "sk-proj-" + _mixed(64)),
    ("anthropic-key", "ANTHROPIC " + "sk-ant-" + "api03-" + _mixed(93) + "AA"),
    ("huggingface-token", "hf token " + "hf" + "_" + _mixed(34)),
    ("npm-token", "//registry.npmjs.org/:_authToken=" + "npm" + "_" + _mixed(36)),
    ("sendgrid-key", "SG" + "." + _mixed(22) + "." + _mixed(43)),
    ("jwt", "Authorization cookie " + _JWT),
    (
        "connection-string-password",
        "DATABASE_URL=postgres://app:" + "Tr0ub4dor3x" + "@db.internal:5432/app",
    ),
    (
        "connection-string-password",
        "Server=tcp:sql.example.net;User Id=sa;Password=" + "Pa55w0rd!x;",
    ),
    ("password-assignment", "The staging login is admin, password: " + "hunter22x"),
    ("password-assignment", 'db_password = "' + "correct horse"[:7] + '"'),
    ("secret-assignment", "client_secret: " + "q8Zr-" + _mixed(12)),
    ("bearer-token", "curl -H 'Authorization: Bearer " + _mixed(40) + "'"),
    ("high-entropy-key", "SERVICE_API_KEY=" + _mixed(32)),
    (
        "high-entropy-key",
        "signing_key: " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
)

#: Memory text that must pass the door: credentials talked about, never written down.
ORDINARY: tuple[str, ...] = (
    "The user prefers short answers and dislikes bullet lists.",
    "Rotate the database password every 90 days; it lives in the vault under prod/db.",
    "password: see 1Password entry 'Prod DB'",
    "Password: rotated quarterly by the platform team.",
    "The API key is read from $OPENAI_API_KEY, never from the config file.",
    "Set token=${GITHUB_TOKEN} in the workflow; the secret is stored in the repository settings.",
    "password = <your password>",
    "Connect with postgres://localhost:5432/app (no password locally).",
    "Use the URL https://user@example.com/path for the mirror.",
    "secret: the recipe uses brown butter",
    "Password reset links expire after 30 minutes.",
    "The commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b fixed the flaky test.",
    "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Tests pass: 42/42 after the fix; the token bucket refills at 10/s.",
    "Kubernetes secrets are base64, not encrypted; use sealed-secrets.",
    "The AWS region is eu-west-1 and the bucket is s3://team-backups/2024/.",
    "Bearer tokens are checked by the gateway before the request reaches the service.",
    "token: string, the session's id as the client sent it",
    "key = value pairs in the ini file are read case-insensitively",
    "IL-6 secretion increased 2.5-fold (p = 0.003) in treated mice.",
)
