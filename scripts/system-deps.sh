#!/usr/bin/env bash
# Debian packages some tests drive for real (systemd-analyze, systemd-socket-activate; chromium
# for the console's browser tests, driven by Playwright).
# Installed when missing and we are root; otherwise those tests say what is missing.
set -uo pipefail
need=()
command -v systemd-socket-activate >/dev/null 2>&1 || need+=(systemd)
command -v git >/dev/null 2>&1 || need+=(git)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") >/dev/null 2>&1 \
    || echo "system-deps: could not install ${need[*]}" >&2
fi
exit 0
