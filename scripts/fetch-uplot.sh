#!/usr/bin/env bash
# Provision uPlot, the chart library of the HTML report, into third_party/uplot/ (git-ignored):
#   uPlot.iife.min.js  uPlot.min.css  LICENSE  VERSION
# from the npm tarball (`npm pack`, private cache, nothing installed), checked against the pinned
# sha512 integrity. The build embeds these files into the inferbench binary (cmake/uplot.cmake), so the
# report needs nothing at run time. A later run with the same pin does nothing.
# Usage: scripts/fetch-uplot.sh [--force]
set -euo pipefail

UPLOT_VERSION=1.6.32
UPLOT_INTEGRITY=sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw==

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$root/third_party/uplot

die() { echo "fetch-uplot: error: $*" >&2; exit 1; }

force=0
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    *) die "unknown argument '$arg' (use --force)" ;;
  esac
done

want="uplot $UPLOT_VERSION $UPLOT_INTEGRITY"
if ((!force)) && [[ -f $dest/VERSION && -f $dest/uPlot.iife.min.js && -f $dest/uPlot.min.css && -f $dest/LICENSE ]] \
   && grep -qxF "npm: $want" "$dest/VERSION"; then
  exit 0   # already provisioned with this pin
fi

command -v npm >/dev/null || die "npm is needed (apt-get install npm)"
command -v openssl >/dev/null || die "openssl is needed for the integrity check (apt-get install openssl)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-uplot.XXXXXX")
stage=""
cleanup() { rm -rf "$tmp"; [[ -z $stage ]] || rm -rf "$stage"; }
trap cleanup EXIT

log=$tmp/npm.log
(cd "$tmp" && npm pack --loglevel=error --cache "$tmp/npm-cache" "uplot@$UPLOT_VERSION") >"$log" 2>&1 \
  || { cat "$log" >&2; die "npm pack uplot@$UPLOT_VERSION failed"; }
tgz=$tmp/uplot-$UPLOT_VERSION.tgz
[[ -f $tgz ]] || die "npm pack wrote no $(basename "$tgz")"

# npm's integrity string is "sha512-" + base64 of the tarball's SHA-512 digest.
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
[[ $got == "$UPLOT_INTEGRITY" ]] || die "uplot-$UPLOT_VERSION.tgz integrity $got does not match the pinned $UPLOT_INTEGRITY"

tar -xzf "$tgz" -C "$tmp" package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE \
  || die "uplot-$UPLOT_VERSION.tgz lacks dist/uPlot.iife.min.js, dist/uPlot.min.css or LICENSE"

mkdir -p "$root/third_party"
stage=$(mktemp -d "$root/third_party/.uplot.XXXXXX")
chmod 755 "$stage"
install -m 644 "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" "$stage/"
printf 'npm: %s\n' "$want" >"$stage/VERSION"

rm -rf "$dest"
mv "$stage" "$dest"
stage=""
echo "fetch-uplot: uplot $UPLOT_VERSION in $dest"
