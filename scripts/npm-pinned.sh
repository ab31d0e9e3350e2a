# Sourced by the fetch scripts: one npm package at a pinned version, packed into a folder and checked against its
# pinned digest before anything is unpacked. The sourcing script defines die().
#   npm_pack_checked DIR PACKAGE VERSION DIGEST    prints the tarball's path
# DIGEST is npm's dist.integrity ("sha512-" + base64 of the SHA-512 digest) or "sha256:" + the hex SHA-256.
npm_pack_checked() {
  local dir=$1 package=$2 version=$3 digest=$4 log=$1/npm.log
  (cd "$dir" && npm pack --loglevel=error --cache "$dir/npm-cache" "$package@$version") >"$log" 2>&1 \
    || { cat "$log" >&2; die "npm pack $package@$version failed (behind a proxy with its own CA: NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)"; }
  local name=${package#@}
  local tgz=$dir/${name//\//-}-$version.tgz
  [[ -f $tgz ]] || die "npm pack wrote no $(basename "$tgz")"
  local got
  case $digest in
    sha512-*) got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)" ;;
    sha256:*) got="sha256:$(sha256sum "$tgz" | cut -d' ' -f1)" ;;
    *) die "the pinned digest of $package is neither sha512-... nor sha256:...: $digest" ;;
  esac
  [[ $got == "$digest" ]] || die "$(basename "$tgz") has digest $got, not the pinned $digest"
  echo "$tgz"
}
