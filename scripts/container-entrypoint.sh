#!/bin/sh
# The image's entrypoint: before the dashboard starts, check that the folder of its SQLite database
# (RISKGRID_DATABASE_URL, by default /data on the volume) can be written by this container's user;
# if not, say so and how to fix it, and exit 2 instead of serving a dashboard that cannot save.
# Other commands (and other databases, e.g. PostgreSQL) are run as they are.
set -eu

check_sqlite_folder() {
    case "${RISKGRID_DATABASE_URL:-}" in
        sqlite*:///*) ;;
        *) return 0 ;;  # another database, or SQLite in memory
    esac
    file=${RISKGRID_DATABASE_URL#*:///}
    file=${file%%\?*}
    folder=$(dirname -- "$file")
    user="this container's user (uid $(id -u))"
    if ! mkdir -p -- "$folder" 2>/dev/null || ! probe=$(mktemp -p "$folder" 2>/dev/null); then
        echo "riskgrid: cannot start: the data folder $folder cannot be written by $user" \
             "(it is read-only or belongs to another user), so no record could be saved." \
             "Mount a folder that uid $(id -u) may write (podman: -v DIR:$folder:U; docker:" \
             "chown $(id -u) DIR first) or a named volume." >&2
        exit 2
    fi
    rm -f -- "$probe"
    if [ -e "$file" ] && [ ! -w "$file" ]; then
        echo "riskgrid: cannot start: the database $file cannot be written by $user; give" \
             "the file to uid $(id -u) (podman: mount its folder with :U)." >&2
        exit 2
    fi
}

if [ "${1:-}" = riskgrid ] && [ "${2:-}" = dashboard ]; then
    check_sqlite_folder
fi
exec "$@"
