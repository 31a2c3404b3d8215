#!/bin/sh
# toolhost's installer: downloads the release archive for this platform and its SHA-256,
# checks the one against the other, and puts the `toolhost` binary into ~/.local/bin. It never
# uses sudo. When that folder is not on PATH, it adds it in a marked block to the start-up
# files of the shells that exist (~/.profile, ~/.bashrc, ~/.zshrc); --no-modify-path or
# TOOLHOST_NO_MODIFY_PATH=1 leaves them alone. Published with each release as
# toolhost-installer.sh.
#
#   TOOLHOST_DOWNLOAD_URL  where the archives are (default: the latest release's downloads)
#   TOOLHOST_INSTALL_DIR   where the binary goes (default: ~/.local/bin)
#   TOOLHOST_NO_MODIFY_PATH=1, --no-modify-path   do not touch the shells' start-up files
set -eu

download_url="${TOOLHOST_DOWNLOAD_URL:-https://example.invalid/toolhost/releases/latest/download}"
install_dir="${TOOLHOST_INSTALL_DIR:-$HOME/.local/bin}"
modify_path=1
[ "${TOOLHOST_NO_MODIFY_PATH:-0}" = 1 ] && modify_path=0

for arg in "$@"; do
    case "$arg" in
        --no-modify-path) modify_path=0 ;;
        -h | --help)
            sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "toolhost installer: unknown option '$arg' (try --help)" >&2
            exit 2
            ;;
    esac
done

fail() {
    echo "toolhost installer: $*" >&2
    exit 1
}

# The release's name for this platform.
case "$(uname -s)" in
    Linux) os=unknown-linux-gnu ;;
    Darwin) os=apple-darwin ;;
    *) fail "no release for $(uname -s); build from source: cargo install --locked --path crates/cli" ;;
esac
case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) fail "no release for $(uname -m); build from source: cargo install --locked --path crates/cli" ;;
esac
target="$arch-$os"
archive="toolhost-$target.tar.gz"

fetch() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,http' --fail --silent --show-error --location --output "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget --quiet --output-document="$2" "$1"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256_of() { # FILE
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        fail "neither sha256sum nor shasum is installed: cannot check the download"
    fi
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

echo "toolhost installer: downloading $archive"
fetch "$download_url/$archive" "$work/$archive" || fail "cannot download $download_url/$archive"
fetch "$download_url/$archive.sha256" "$work/$archive.sha256" ||
    fail "cannot download $download_url/$archive.sha256"
expected="$(cut -d' ' -f1 < "$work/$archive.sha256")"
actual="$(sha256_of "$work/$archive")"
[ -n "$expected" ] && [ "$expected" = "$actual" ] ||
    fail "the archive's SHA-256 is $actual but the release says ${expected:-nothing}: refusing to install it (the download was damaged or tampered with)"

mkdir "$work/unpacked"
tar -xzf "$work/$archive" -C "$work/unpacked" || fail "cannot unpack $archive"
binary="$(find "$work/unpacked" -type f -name toolhost | head -n 1)"
[ -n "$binary" ] || fail "$archive holds no toolhost binary"

mkdir -p "$install_dir" || fail "cannot create $install_dir"
# Copied beside the old one, then renamed over it: a running toolhost keeps its file.
cp "$binary" "$install_dir/.toolhost.new" || fail "cannot write to $install_dir"
chmod 755 "$install_dir/.toolhost.new"
mv -f "$install_dir/.toolhost.new" "$install_dir/toolhost"
echo "toolhost installer: installed $install_dir/toolhost"

case ":${PATH:-}:" in
    *":$install_dir:"*) exit 0 ;;
esac
if [ "$modify_path" = 0 ]; then
    echo "toolhost installer: $install_dir is not on your PATH; add it yourself"
    exit 0
fi
begin="# >>> toolhost installer >>>"
# Written with $HOME unexpanded when the folder is under it, so that the block moves with it.
case "$install_dir" in
    "$HOME"/*) shown="\$HOME${install_dir#"$HOME"}" ;;
    *) shown="$install_dir" ;;
esac
block="$begin
export PATH=\"$shown:\$PATH\"
# <<< toolhost installer <<<"
written=""
for rc in "$HOME/.profile" "$HOME/.bashrc" "$HOME/.zshrc"; do
    # ~/.profile is made when no start-up file exists at all; the others only where they are.
    if [ ! -e "$rc" ] && { [ "$rc" != "$HOME/.profile" ] || [ -e "$HOME/.bashrc" ] || [ -e "$HOME/.zshrc" ]; }; then
        continue
    fi
    if [ -e "$rc" ] && grep -qF "$begin" "$rc"; then
        continue
    fi
    printf '\n%s\n' "$block" >> "$rc"
    written="$written $rc"
done
if [ -n "$written" ]; then
    echo "toolhost installer: added $install_dir to PATH in$written (open a new shell, or run: export PATH=\"$install_dir:\$PATH\")"
fi
