#!/usr/bin/env bash
# Builds the Go binaries the interop tests run (`npm run interop:install`): CometBFT's `cometbft` and
# `abci-cli` (and `cometbft-signer`, CometBFT's privval signer in a main of ours), go-ethereum's `geth`, and Tendermint's remote signer test harness `tm-signer-harness`
# (removed before CometBFT v0.37, so built from tendermint v0.34.24, the last release that has it; the
# privval protocol it checks is unchanged in v0.38), at the versions pinned in test/interop/versions.json, into
# test/interop/bin/ (git-ignored; COMETH_INTEROP_BIN=DIR puts them elsewhere, and the tests read the
# same variable). Nothing of their code is committed: `go install` builds each from its
# module, fetched through the Go module proxy, and the Go build cache makes a rebuild quick. A binary
# whose embedded module version (`go version -m`) already is the pinned one is not rebuilt.
#
#   bash test/interop/install.sh                    # all of them
#   bash test/interop/install.sh --only cometbft    # cometbft and abci-cli (geth takes minutes)
#   bash test/interop/install.sh --only geth
#   bash test/interop/install.sh --only tendermint  # tm-signer-harness
#
# Without Go it says so and exits 0 (the interop tests then skip); if the module proxy refuses a module
# it names the module and prints the proxy's error, and exits 1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${COMETH_INTEROP_BIN:-$here/bin}"

only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only)
      only="${2:-}"
      shift 2 || true
      ;;
    --only=*)
      only="${1#--only=}"
      shift
      ;;
    -h | --help)
      sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "interop:install: unknown argument \"$1\"; use --only cometbft, --only geth or --only tendermint" >&2
      exit 2
      ;;
  esac
done
case "$only" in
  "" | cometbft | geth | tendermint) ;;
  *)
    echo "interop:install: --only takes cometbft, geth or tendermint, not \"$only\"" >&2
    exit 2
    ;;
esac

go_cmd="$(command -v go || true)"
if [ -z "$go_cmd" ] && [ -x /usr/local/go/bin/go ]; then go_cmd=/usr/local/go/bin/go; fi
if [ -z "$go_cmd" ]; then
  echo "interop:install: Go is not installed (no \`go\` on PATH nor /usr/local/go/bin/go);" \
    "the CometBFT/geth binaries are not built and the interop tests (npm run test:interop) will skip."
  exit 0
fi
echo "interop:install: $("$go_cmd" version), GOPROXY=$("$go_cmd" env GOPROXY), build cache $("$go_cmd" env GOCACHE)"

# One line per binary: name, module, version, package path inside the module.
pins="$(node -e '
  const v = require(process.argv[1]);
  for (const [group, g] of Object.entries(v))
    for (const [name, pkg] of Object.entries(g.packages)) console.log([group, name, g.module, g.version, pkg].join(" "));
' "$here/versions.json")"

mkdir -p "$bin"
# The module version a binary was built from, read from its embedded build info ("" when unknown): the
# main module (go install) or a dependency (build_in_module below).
built_version() {
  "$go_cmd" version -m "$1" 2>/dev/null | awk -v m="$2" '($1 == "mod" || $1 == "dep") && $2 == m { print $3 }'
}

# `go install module/pkg@version` also asks the proxy for the module's version list (to report a
# deprecation); a proxy that serves the version but refuses the list fails it. This builds the same
# package from a throwaway main module that requires module@version instead.
build_in_module() {
  local module="$1" version="$2" pkg="$3" out="$4" tmp
  tmp="$(mktemp -d)"
  printf 'module cometh.interop/build\n\ngo 1.22\n\nrequire %s %s\n' "$module" "$version" >"$tmp/go.mod"
  (cd "$tmp" && GOFLAGS=-mod=mod "$go_cmd" build -o "$out" "$module/$pkg")
  local rc=$?
  rm -rf "$tmp"
  return $rc
}

# Fetches module@version through the proxy first, so a refusal is reported as such (not as a build error).
download() {
  local module="$1" version="$2" out
  if ! out="$(cd "$bin" && "$go_cmd" mod download -json "$module@$version" 2>&1)"; then
    local err
    err="$(printf '%s' "$out" | node -e '
      let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        try { console.log(JSON.parse(s).Error ?? s); } catch { console.log(s); }
      });')"
    echo "interop:install: the Go module proxy ($("$go_cmd" env GOPROXY)) refused $module@$version: $err" >&2
    exit 1
  fi
}

declare -A fetched=()
while read -r group name module version pkg; do
  if [ -n "$only" ] && [ "$only" != "$group" ]; then continue; fi
  target="$bin/$name"
  if [ -x "$target" ] && [ "$(built_version "$target" "$module")" = "$version" ]; then
    echo "interop:install: $name $version is already built ($target)"
    continue
  fi
  if [ -z "${fetched[$module@$version]:-}" ]; then
    download "$module" "$version"
    fetched[$module@$version]=1
  fi
  echo "interop:install: building $name from $module/$pkg@$version ..."
  start=$SECONDS
  if ! (cd "$bin" && GOBIN="$bin" "$go_cmd" install "$module/$pkg@$version"); then
    echo "interop:install: go install $module/$pkg@$version failed; building it in a temporary module ..."
    if ! build_in_module "$module" "$version" "$pkg" "$target"; then
      echo "interop:install: building $module/$pkg@$version failed (see above)" >&2
      exit 1
    fi
  fi
  got="$(built_version "$target" "$module")"
  if [ "$got" != "$version" ]; then
    echo "interop:install: $target reports module version \"$got\", expected $version" >&2
    exit 1
  fi
  echo "interop:install: built $name $version in $((SECONDS - start)) s"
done <<<"$pins"

# cometbft-signer: a remote signer made of CometBFT's privval code (test/interop/gosigner, our few
# lines around it; its go.mod pins the same cometbft version), for cometh-as-node interop tests.
if [ -z "$only" ] || [ "$only" = cometbft ]; then
  echo "interop:install: building cometbft-signer from test/interop/gosigner ..."
  if ! (cd "$here/gosigner" && "$go_cmd" build -o "$bin/cometbft-signer" .); then
    echo "interop:install: building test/interop/gosigner failed (see above)" >&2
    exit 1
  fi
fi

if [ -x "$bin/cometbft" ]; then echo "interop:install: cometbft version: $("$bin/cometbft" version)"; fi
if [ -x "$bin/abci-cli" ]; then echo "interop:install: abci-cli version: $("$bin/abci-cli" version)"; fi
if [ -x "$bin/geth" ]; then echo "interop:install: $("$bin/geth" version | head -n 2 | tr '\n' ' ')"; fi
if [ -x "$bin/tm-signer-harness" ]; then echo "interop:install: tm-signer-harness version: $("$bin/tm-signer-harness" version)"; fi
