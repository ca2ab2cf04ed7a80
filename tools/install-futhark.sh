#!/usr/bin/env bash
# Install the Futhark compiler 0.25.27 (Debian 13's package) into a private prefix, without
# touching the system: the .debs are unpacked with `dpkg -x` (never installed) and the binary is
# patchelf'd to the prefix's own loader and libraries.
#
# Usage: tools/install-futhark.sh PREFIX      (e.g. .toolchain)
# Result: PREFIX/bin/futhark. Idempotent: does nothing when that binary already reports 0.25.27.
set -euo pipefail
prefix=$(realpath -m "${1:-.toolchain}")
want="0.25.27"
if [ -x "$prefix/bin/futhark" ] && "$prefix/bin/futhark" --version 2>/dev/null | grep -q "$want"; then
  echo "futhark: up to date ($prefix/bin/futhark, $want)"; exit 0
fi
command -v patchelf >/dev/null || { echo "futhark: patchelf is missing (apt-get install patchelf, or make setup)" >&2; exit 1; }
root="$prefix/futhark-trixie"; debs="$prefix/debs"; apt_state="$prefix/apt-trixie"
mkdir -p "$root" "$debs" "$apt_state/lists/partial" "$prefix/bin"
echo "deb http://deb.debian.org/debian trixie main" > "$apt_state/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$apt_state/sources.list" -o Dir::Etc::sourceparts=/dev/null
          -o "Dir::State::Lists=$apt_state/lists" -o "Dir::Cache=$apt_state/cache")
pkgs=(futhark libc6 libgmp10 libcmark-gfm0.29.0.gfm.13 libcmark-gfm-extensions0.29.0.gfm.13)
if ! ls "$debs"/futhark_*.deb >/dev/null 2>&1; then
  echo "futhark: downloading ${pkgs[*]} from Debian 13 (trixie)"
  apt-get "${apt_opts[@]}" -qq update
  chown _apt "$debs" 2>/dev/null || true
  (cd "$debs" && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
fi
ls "$debs"/futhark_*.deb >/dev/null
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$root"; done
lib="$root/usr/lib/x86_64-linux-gnu"
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$root/usr/bin/futhark"
ln -sf "$root/usr/bin/futhark" "$prefix/bin/futhark"
"$prefix/bin/futhark" --version | head -1
echo "futhark: installed at $prefix/bin/futhark"
