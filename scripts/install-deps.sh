#!/bin/sh
# Installs what building, testing and the demo need on a fresh Debian machine. Does nothing when all is there.
# The second line of packages is for test_real_programs (tar, gzip, coreutils, findutils, sed, diffutils, mawk
# and perl-base are in the base system), test_terminal (python3-pyte, a terminal emulator) and test_html_report
# (chromium, a browser to load the HTML reports in).
set -e
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
for p in gcc libc6-dev make libcmocka-dev libunwind-dev libdw-dev libelf-dev libsqlite3-dev binutils python3 procps openmpi-bin libopenmpi-dev \
	sqlite3 git xz-utils bzip2 zstd zip unzip patch mount python3-pyte chromium; do
	have_pkg "$p" || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "profwrap: missing packages:$need (run as root: apt-get install$need)" >&2
	exit 1
fi
echo "profwrap: installing$need" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $need >/dev/null
