#!/bin/sh
# Runs a command in a root that tools/py314.py made, in the caller's working folder, with
# the caller's environment. tools/py314.py starts it in a mount namespace of its own
# (`unshare --mount`), so every mount here ends with the command, however it ends.
#
#   py314_enter.sh ROOT [ro:PATH | rw:PATH | hide:PATH | ca:FILE]... -- COMMAND [ARG]...
#
# ro:PATH and rw:PATH bind this machine's folder at the same path in the root (read-only, or
# not); hide:PATH covers a folder there with an empty one; ca:FILE is the certificate bundle
# the root trusts. Always: /proc, an empty /tmp and /dev/shm, this machine's resolv.conf and
# hosts. Each command is exec'd, so COMMAND keeps the caller's process (a signal reaches it).
set -eu
inner_path=${PATH-}
PATH=/usr/sbin:/usr/bin:/sbin:/bin
wd=$(pwd -P)
root=$1
shift
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
# tools/py314.py made these plain files in the root, so a bind over them stays inside it.
for f in /etc/resolv.conf /etc/hosts; do
    if [ -f "$f" ]; then mount --bind -o ro "$f" "$root$f"; fi
done
while [ "$1" != -- ]; do
    path=${1#*:}
    case $1 in
    ro:* | rw:*)
        mkdir -p "$root$path"
        mount --bind "$path" "$root$path"
        case $1 in ro:*) mount -o remount,bind,ro "$root$path" ;; esac
        ;;
    hide:*)
        if [ -d "$root$path" ]; then mount -t tmpfs tmpfs "$root$path"; fi
        ;;
    ca:*)
        mount --bind -o ro "$path" "$root/etc/ssl/certs/ca-certificates.crt"
        ;;
    *)
        echo "py314_enter.sh: unknown mount $1" >&2
        exit 2
        ;;
    esac
    shift
done
shift
# shellcheck disable=SC2016 # "$0" and "$@" are the inner shell's: the folder, the command
exec chroot "$root" /usr/bin/env PATH="$inner_path" /bin/sh -c 'cd "$0" && exec "$@"' "$wd" "$@"
