# Embedded in the package's postinst by scripts/make-deb.sh, hence POSIX sh (dash). The postinst
# defines before it what belongs in the runtime directory, as the shipped units and tmpfiles.d
# make it (all of them plain names):
#   run_dir      /run/geoattrd
#   run_sockets  the names systemd binds there (the socket units' ListenStream=)
#   run_files    the regular files tmpfiles.d makes there (the state file)
#   run_dirs     the directories tmpfiles.d makes there (the textfile directory)
# An older layout let clients write the directory: whatever else is there, or is there as the
# wrong kind of file or with the wrong owner, may be a client's, and the daemon would write
# through it or publish what it finds there.

# keep_only DIR UID FILES ENTRY...: removes from DIR each entry that is not one of ENTRY, nor a
# regular file named in FILES (a name a line, names with spaces included; none can hold a
# newline). Each ENTRY is KIND:NAME:
#   s:NAME  a socket owned by UID or by root (systemd binds sockets as root, then hands them to
#           SocketUser=): no client can make a file of either
#   f:NAME  a regular file owned by UID, with one name: a second name would be a link someone
#           made, and tmpfiles.d's owner and mode fixes or the daemon's writes would reach it
#   d:NAME  a directory owned by UID
# Nothing is followed: find looks at the entries themselves, rm removes a symbolic link and not
# its target and follows none inside a directory, and refuses an entry another file system is
# mounted on. Each removal is reported on stderr.
keep_only() {
    dir=$1 owner=$2 files=$3
    shift 3
    if [ -L "$dir" ] || ! [ -d "$dir" ]; then return 0; fi
    while IFS= read -r name; do
        if [ -n "$name" ]; then set -- "$@" "f:$name"; fi
    done <<EOF
$files
EOF
    # The ENTRY arguments become find's expression for what is kept.
    for entry do
        shift
        name=$(printf '%s' "${entry#?:}" | sed 's/[][*?\\]/\\&/g')
        case $entry in
        s:*) set -- "$@" -o \( -name "$name" -type s \( -user "$owner" -o -user 0 \) \) ;;
        f:*) set -- "$@" -o \( -name "$name" -type f -user "$owner" -links 1 \) ;;
        d:*) set -- "$@" -o \( -name "$name" -type d -user "$owner" \) ;;
        esac
    done
    find "$dir" -xdev -mindepth 1 -maxdepth 1 ! \( -false "$@" \) \
        -printf 'geoattrd: removing %p: not what geoattrd or systemd put there\n' \
        -exec rm -rf --one-file-system --preserve-root=all -- {} + >&2 ||
        echo "geoattrd: could not remove all of the above from $dir: remove them by hand, then start geoattrd" >&2
}

# output_names DIR SETTINGS: the names of the output files (outputs.env_file,
# outputs.prometheus_file) that SETTINGS, the "key = value" lines of geoattrd --check-config,
# put directly in DIR, one a line.
output_names() {
    printf '%s\n' "$2" | sed -n -e 's/^outputs\.env_file = //p' -e 's/^outputs\.prometheus_file = //p' |
        while IFS= read -r path; do
            if [ -n "$path" ] && [ "${path%/*}" = "$1" ]; then printf '%s\n' "${path##*/}"; fi
        done
}

# clean_run_dir UID SETTINGS: the runtime directory itself. Its sockets, its state file, its
# directories and the output files SETTINGS names there stay, each only as the right kind of file
# with the right owner; everything else goes.
clean_run_dir() {
    owner=$1 settings=$2
    set --
    for name in $run_sockets; do set -- "$@" "s:$name"; done
    for name in $run_files; do set -- "$@" "f:$name"; done
    for name in $run_dirs; do set -- "$@" "d:$name"; done
    keep_only "$run_dir" "$owner" "$(output_names "$run_dir" "$settings")" "$@"
}

# clean_run_subdirs UID SETTINGS: inside each of the runtime directory's own directories, only the
# output files SETTINGS names there.
clean_run_subdirs() {
    for subdir in $run_dirs; do
        keep_only "$run_dir/$subdir" "$1" "$(output_names "$run_dir/$subdir" "$2")"
    done
}
