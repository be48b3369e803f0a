# tests/tmux_lib.sh — what the tmux tests share (sourced by viz_tty.sh and
# viz_pause.sh after they set $sock): check/has, the tmux server T with a
# session that keeps it alive, and waiting for a screen that never gives up
# while the lab runs, however busy the machine.
check() {
    local what=$1
    shift
    if "$@"; then echo "PASS  $what"; else echo "FAIL  $what"; fails=$((fails + 1)); fi
}
has() { grep -qF -- "$2" <<<"$1"; }
T() { tmux -L "$sock" "$@"; }
trap 'T kill-server 2>/dev/null' EXIT
# a session that outlives the others: killing the last one would stop the
# server, and a new session started meanwhile finds it gone
T new-session -d -s keep "sleep 100000"
# start_t WIDTH HEIGHT COMMAND: a fresh session t running COMMAND; made
# again (up to 5 times) until the server has it, saying so on stderr (a
# session that was not there made every check of a step fail at once,
# "can't find pane: t", once in a CI run)
start_t() {
    local i
    for i in 1 2 3 4 5; do
        T kill-session -t t 2>/dev/null
        if T new-session -d -s t -x "$1" -y "$2" "$3" && T has-session -t t 2>/dev/null; then
            return 0
        fi
        echo "  (tmux: no session t after new-session, try $i; sessions: $(T ls 2>&1 | tr '\n' ' '))" >&2
        sleep 1
    done
    return 1
}
# The processes of the session led by $1: their CPU ticks, and 1 if a thread
# of theirs is runnable (running, or waiting for a CPU on a busy machine).
pane_activity() {
    local t=0 r=0 p f line rest
    for p in $(pgrep -s "$1" 2>/dev/null); do
        for f in /proc/"$p"/task/*/stat; do
            { read -r line <"$f"; } 2>/dev/null || continue
            rest=${line##*) }
            # shellcheck disable=SC2086
            set -- $rest # state, then utime and stime are the 12th and 13th
            [ "$1" = R ] && r=1
            t=$((t + ${12} + ${13}))
        done
    done
    echo "$t $r"
}
# wait_screen SESSION TEXT: until SESSION's screen shows TEXT; gives up
# only after 10 s in which the lab neither ran nor waited to run (it waits
# for a key, or has ended), or once the lab has spent 60 s of CPU time
# (its own clock: a busy machine slows it as much as its work) without the
# screen changing (a UI that only redraws a screen that will never show
# TEXT); a slow or busy machine never makes it give up; nor once the
# session is gone
wait_screen() {
    local sid idle=0 last="" now screen prev="" since=0 hz
    hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
    sid=$(T display -p -t "$1" '#{pane_pid}' 2>/dev/null)
    while [ $idle -lt 100 ]; do
        screen=$(T capture-pane -p -t "$1")
        has "$screen" "$2" && return 0
        T has-session -t "$1" 2>/dev/null || return 1
        sleep 0.1
        now=$(pane_activity "$sid")
        if [ "$screen" != "$prev" ]; then
            prev=$screen
            since=${now% *}
        elif [ $((${now% *} - since)) -gt $((60 * hz)) ]; then
            echo "wait_screen: '$2' not shown after 60 s of the lab's CPU time with the screen unchanged" >&2
            return 1
        fi
        if [ "${now#* }" = 1 ] || [ "${now% *}" != "${last% *}" ]; then idle=0; else idle=$((idle + 1)); fi
        last=$now
    done
    return 1
}
