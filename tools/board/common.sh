# shellcheck shell=sh
# Shared by the boards' commands (board.sh, system.sh), sourced after their
# defaults: a value quoted for a shell, the ports in use, and the command
# line. Sourced, it reads and rewrites the caller's "$@": --dir DIR (or
# --state DIR) and --arch A may come before or after the command; the first
# other word is the command (in $command), the rest stay in "$@".

# A value quoted for the shell that evals the env output.
q() {
    printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

port_in_use() {
    hex=$(printf '%04X' "$1")
    grep -q "^ *[0-9]*: [0-9A-F]*:$hex " /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# A port below Linux's ephemeral range (32768-60999), where no outgoing
# connection can hold it first.
random_port() {
    echo $((20000 + $(od -An -tu2 -N2 /dev/urandom | tr -d ' ') % 12768))
}

command=
want=
for a in "$@"; do
    shift
    if [ -n "$want" ]; then
        eval "$want=\$a"
        want=
        continue
    fi
    case $a in
    --dir | --state) want=dir ;;
    --arch) want=arch ;;
    --dir=* | --state=*) dir=${a#*=} ;;
    --arch=*) arch=${a#*=} ;;
    *)
        if [ -z "$command" ]; then
            command=$a
        else
            set -- "$@" "$a"
        fi
        ;;
    esac
done
[ -z "$want" ] || usage
[ -n "$command" ] || usage
