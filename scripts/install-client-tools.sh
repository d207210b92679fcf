#!/usr/bin/env bash
# Installs the OData generators and clients that test/clients.test.ts runs against a server (SAP Cloud SDK's
# generator, SAP CAP's cds import and remote service, odata2ts, OASIS's odata-openapi), exactly as pinned in
# test/clients/package-lock.json, into ${RESO_CLIENTS_HOME:-$HOME/.cache/reso-clients}: outside the repository and
# its devDependencies, as they are large (some 190 MB) and only those tests use them. Prints the folder last.
# With the argument `cap`: SAP CAP with its SQLite service as test/cap/package-lock.json pins them, the generic
# OData v4 upstream of the pull tests (test/support/cap-upstream.ts), into ${RESO_CAP_HOME:-$HOME/.cache/reso-cap}.
# Idempotent: does nothing when that lockfile is already installed there. Needs node and the npm registry.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ${1:-} == cap ]]; then
  pins=$here/test/cap
  home=${RESO_CAP_HOME:-$HOME/.cache/reso-cap}
else
  pins=$here/test/clients
  home=${RESO_CLIENTS_HOME:-$HOME/.cache/reso-clients}
fi
stamp=$(cat "$pins/package.json" "$pins/package-lock.json" | sha256sum | cut -c1-16)

if [[ -f $home/.installed-$stamp && -d $home/node_modules ]]; then
  echo "already installed ($home, lock $stamp)" >&2
  echo "$home"
  exit 0
fi

echo "installing $pins/package-lock.json into $home" >&2
rm -rf "$home"
mkdir -p "$home"
cp "$pins/package.json" "$pins/package-lock.json" "$home/"
(cd "$home" && npm ci --no-audit --no-fund --loglevel=error >&2)
touch "$home/.installed-$stamp"
echo "$home"
