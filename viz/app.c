/*
 * app.c — the terminal and the UI loop (see paralab/viz.h): ncurses on the
 * main thread only, a frame about every 33 ms (drain the rings, read the
 * keys, render the panes into the grid, copy the grid, one doupdate).
 *
 * The terminal is always given back: at the end, on q or Ctrl-C, and on a
 * crash (a handler for SIGSEGV, SIGBUS, SIGFPE and SIGABRT ends curses, then
 * lets the signal kill the process as it would have). What the program
 * writes to stderr while curses owns the screen goes to a temporary file
 * and is printed after the screen is restored.
 */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <term.h>
#include <time.h>
#include <unistd.h>

#include "paralab/clock.h"
#include "paralab/device.h"
#include "paralab/watchdog.h"
#include "vizint.h"

#define FRAME_MS 33

/* ---- the terminal ------------------------------------------------------------------------ */

int pl_viz_available(char *why, size_t cap)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(why, cap, "not a terminal: plain text");
        return 0;
    }
    const char *t = getenv("TERM");
    if (!t || !*t) {
        snprintf(why, cap,
                 "TERM is not set: plain text (set TERM, e.g. xterm-256color, for the UI)");
        return 0;
    }
    if (!strcmp(t, "dumb")) {
        snprintf(why, cap, "TERM=dumb: plain text");
        return 0;
    }
    int err = 0;
    if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
        snprintf(why, cap, "TERM=%s is unknown to terminfo: plain text", t);
        return 0;
    }
    del_curterm(cur_term);
    return 1;
}

static volatile sig_atomic_t quit_signal;
/* the watchdog's report (labrun.c), for the UI thread to act on */
static atomic_int stalled;
static char stall_report[1200];

void viz_stalled(const char *report)
{
    snprintf(stall_report, sizeof stall_report, "%s", report);
    atomic_store(&stalled, 1);
}
static int curses_on, saved_stderr = -1, saved_stdout = -1;
static FILE *captured, *captured_out, *term_out;
static SCREEN *screen;

static void on_quit_signal(int sig)
{
    (void)sig;
    quit_signal = 1;
}

/* Copies what a captured stream received to fd, from the start. */
static void replay_file(FILE *f, int fd)
{
    char buf[4096];
    ssize_t n;
    off_t off = 0;
    while ((n = pread(fileno(f), buf, sizeof buf, off)) > 0) {
        if (write(fd, buf, (size_t)n) != n) break;
        off += n;
    }
}

/* The narrated steps of a live run, each with where the lab's captured
 * output stood when it was shown: once the screen is restored they are
 * printed with that output, in order, as --no-viz prints them. */
static pthread_mutex_t narr_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct {
    off_t off;
    int step;
    char *text;
} narrated_step;
static narrated_step *narrated;
static size_t nnarrated, capnarrated;

/* The player's listener: on rank 0's thread, before the step's work. */
static void on_step_shown(void *ctx, int step, const char *text)
{
    (void)ctx;
    fflush(stdout);
    struct stat st;
    off_t off = captured_out && fstat(fileno(captured_out), &st) == 0 ? st.st_size : 0;
    char *copy = strdup(text);
    pthread_mutex_lock(&narr_lock);
    if (copy && nnarrated == capnarrated) {
        size_t cap = capnarrated ? capnarrated * 2 : 64;
        narrated_step *p = realloc(narrated, cap * sizeof *p);
        if (p) {
            narrated = p;
            capnarrated = cap;
        }
    }
    if (copy && nnarrated < capnarrated)
        narrated[nnarrated++] = (narrated_step){off, step, copy};
    else
        free(copy);
    pthread_mutex_unlock(&narr_lock);
}

/* Bytes [from, to) of a captured stream to fd (to < 0: to its end). */
static void copy_range(FILE *f, int fd, off_t from, off_t to)
{
    char buf[4096];
    while (to < 0 || from < to) {
        size_t want = to < 0 || to - from > (off_t)sizeof buf ? sizeof buf : (size_t)(to - from);
        ssize_t n = pread(fileno(f), buf, want, from);
        if (n <= 0 || write(fd, buf, (size_t)n) != n) break;
        from += n;
    }
}

/* The lab's captured output with the narrated steps where they came (the
 * world has ended: no lock, which a crash could leave held). */
static void replay_transcript(FILE *f, int fd)
{
    off_t pos = 0;
    for (size_t i = 0; i < nnarrated; i++) {
        copy_range(f, fd, pos, narrated[i].off);
        pos = narrated[i].off > pos ? narrated[i].off : pos;
        dprintf(fd, "[%d] %s\n", narrated[i].step, narrated[i].text);
    }
    copy_range(f, fd, pos, -1);
}

static void restore_terminal(void)
{
    if (curses_on) {
        endwin();
        curses_on = 0;
    }
    if (saved_stdout >= 0) { /* the lab's own output, now on the terminal */
        fflush(stdout);
        dup2(saved_stdout, STDOUT_FILENO);
        close(saved_stdout);
        saved_stdout = -1;
        if (captured_out) {
            replay_transcript(captured_out, STDOUT_FILENO);
            fclose(captured_out);
            captured_out = NULL;
        }
    }
    if (saved_stderr >= 0) {
        fflush(stderr);
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
        if (captured) { /* what was written meanwhile, now that it can be read */
            replay_file(captured, STDERR_FILENO);
            fclose(captured);
            captured = NULL;
        }
    }
}

static void on_fatal_signal(int sig)
{
    restore_terminal(); /* not async-signal-safe, but the process is dying anyway */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Colour pairs: pair k + 1 for colour k. */
static void init_colours(void)
{
    if (!has_colors() || getenv("NO_COLOR")) return;
    start_color();
    use_default_colors();
    int c256 = COLORS >= 256;
    static const short base[COL_COUNT] = {
        -1, COLOR_WHITE, COLOR_WHITE, COLOR_BLUE, COLOR_YELLOW, COLOR_RED, COLOR_GREEN, COLOR_GREEN,
        COLOR_BLUE, COLOR_MAGENTA, COLOR_YELLOW, COLOR_CYAN, COLOR_RED, COLOR_GREEN, COLOR_YELLOW,
        COLOR_BLUE, COLOR_MAGENTA, COLOR_CYAN, COLOR_WHITE, COLOR_RED, COLOR_YELLOW,
        /* the groups: TP, DP, PP */
        COLOR_YELLOW, COLOR_BLUE, COLOR_MAGENTA};
    static const short rich[COL_COUNT] = {-1,  244, 255, 67,  214, 196, 71,  78,
                                          75,  170, 221, 44,  203, 113, 221, 75,
                                          176, 80,  252, 209, 180, 214, 33,  207};
    for (int k = 0; k < COL_COUNT; k++) init_pair((short)(k + 1), c256 ? rich[k] : base[k], -1);
}

static int term_start(void)
{
    setlocale(LC_ALL, "");
    /* curses writes to its own copy of the terminal; what the lab prints
     * (stdout, stderr) goes to files, shown in the narration pane and
     * printed in full once the screen is restored */
    fflush(stdout);
    int tfd = dup(STDOUT_FILENO);
    term_out = tfd >= 0 ? fdopen(tfd, "w") : NULL;
    if (!term_out || !(screen = newterm(NULL, term_out, stdin))) {
        if (term_out) fclose(term_out);
        term_out = NULL;
        return -1;
    }
    curses_on = 1;
    captured_out = tmpfile();
    if (captured_out) {
        saved_stdout = dup(STDOUT_FILENO);
        dup2(fileno(captured_out), STDOUT_FILENO);
    }
    cbreak(); /* Ctrl-C still sends SIGINT: it quits like q */
    noecho();
    keypad(stdscr, TRUE);
    timeout(FRAME_MS);
    curs_set(0);
    init_colours();
    /* stderr to a file while the screen is ours */
    fflush(stderr);
    captured = tmpfile();
    if (captured) {
        saved_stderr = dup(STDERR_FILENO);
        dup2(fileno(captured), STDERR_FILENO);
    }
    static int registered;
    if (!registered++) atexit(restore_terminal); /* exit() from anywhere gives it back too */
    signal(SIGINT, on_quit_signal);
    signal(SIGTERM, on_quit_signal);
    signal(SIGSEGV, on_fatal_signal);
    signal(SIGBUS, on_fatal_signal);
    signal(SIGFPE, on_fatal_signal);
    signal(SIGABRT, on_fatal_signal);
    return 0;
}

static void term_stop(void)
{
    restore_terminal();
    pthread_mutex_lock(&narr_lock);
    for (size_t i = 0; i < nnarrated; i++) free(narrated[i].text);
    nnarrated = 0;
    pthread_mutex_unlock(&narr_lock);
    if (screen) {
        delscreen(screen);
        screen = NULL;
    }
    if (term_out) {
        fclose(term_out);
        term_out = NULL;
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGABRT, SIG_DFL);
}

static int colours_on(void) { return has_colors() && !getenv("NO_COLOR"); }

/* The grid onto the screen; ncurses sends only what changed. */
static void term_flush(const viz_grid *g)
{
    int colour = colours_on();
    for (int y = 0; y < g->h && y < LINES; y++)
        for (int x = 0; x < g->w && x < COLS; x++) {
            const viz_cell *c = &g->cells[y * g->w + x];
            wchar_t wc[2] = {(wchar_t)c->ch, 0};
            attr_t a = (c->attr & ATTR_BOLD ? A_BOLD : 0) |
                       (c->attr & ATTR_REVERSE ? A_REVERSE : 0) |
                       (c->attr & ATTR_UNDERLINE ? A_UNDERLINE : 0);
            if (!colour && (c->fg == COL_FOCUS || c->fg == COL_WARN)) a |= A_BOLD;
            cchar_t cc;
            setcchar(&cc, wc, a, colour ? (short)(c->fg + 1) : 0, NULL);
            mvadd_wch(y, x, &cc); /* the bottom-right cell returns ERR, but is drawn */
        }
    wnoutrefresh(stdscr);
    doupdate();
}

/* ---- the loop shared by live runs and replays ---------------------------------------------- */

typedef struct app {
    viz_model model;
    viz_view view;
    viz_grid grid;
    unsigned panes;
    char mode_text[48], status_text[160];
    int quit;
    int stopping; /* a quit was asked while the ranks run: they stop at their next step */
    /* live */
    pl_player *player;
    pl_trace *trace;
    pl_trace_writer *writer;
    pl_event *buf;
    volatile int world_done;
    int world_status;
    char world_err[1024];
    /* replay: the trace, its items in the order they are shown, the cursor */
    viz_trace tr;
    viz_item *items;
    size_t nitems, shown, *first;
    int nsteps;
    viz_cursor cur;
    int playing;
    double speed; /* steps a second */
    char intro[160];
    /* the lab's output (captured stdout), the last lines */
    char log[VIZ_LOG_LINES][160];
    int log_head, nlog;
    off_t log_off;
    viz_transcript ts; /* a live run's narrated steps and output, for the narration pane */
    size_t narr_done;  /* the narrated steps in it */
} app;

/* The panes shown, in focus order. */
static int visible(const app *a, const pl_layout *lay, int *order)
{
    int n = 0;
    for (int p = PL_PANE_NARRATION; p < PL_NUM_PANES; p++)
        if (lay->pane[p].w > 0) order[n++] = p;
    (void)a;
    return n;
}

static void clamp_view(app *a)
{
    viz_view *v = &a->view;
    int c = v->modeled;
    double lo = a->model.t_lo[c], hi = a->model.t_hi[c];
    if (hi < lo) return;
    /* Until the student zooms, the timeline shows everything so far — or,
     * in a long run, the newest ~60 events' worth of rank 0's compute, so
     * that single steps stay visible. */
    if (v->span <= 0 || !v->zoomed) {
        double all = hi - lo > 0 ? hi - lo : 1e-6, recent = 0;
        const viz_lane *L = &a->model.lanes[0][PL_LANE_COMPUTE];
        size_t k = L->n < 64 ? L->n : 64;
        for (size_t i = L->n - k; i < L->n; i++)
            recent += viz_ev_end(&L->ev[i], c) - viz_ev_start(&L->ev[i], c);
        recent = k ? recent / (double)k * 60 : all;
        v->span = recent > 0 && recent < all ? recent : all;
    }
    if (v->follow) v->t_end = hi;
    if (v->t_end > hi) v->t_end = hi;
    if (v->t_end < lo + v->span * 0.1) v->t_end = lo + v->span * 0.1;
}

/* The narration scrolled by d rows, within what it holds. */
static void scroll_narration(viz_view *v, const pl_layout *lay, int d)
{
    int lo, hi;
    viz_narration_range(v, lay->pane[PL_PANE_NARRATION], &lo, &hi);
    v->narr_scroll = v->narr_scroll + d < lo   ? lo
                     : v->narr_scroll + d > hi ? hi
                                               : v->narr_scroll + d;
}

/* The topology's list of links scrolled by d rows of it. */
static void scroll_links(app *a, const pl_layout *lay, int d)
{
    viz_view *v = &a->view;
    int cols, page, n = viz_topology_links(&a->model, v, lay->pane[PL_PANE_TOPOLOGY], &cols, &page);
    int last = n > page ? (n - page + cols - 1) / cols * cols : 0, s = v->link_scroll + d * cols;
    v->link_scroll = s < 0 ? 0 : s > last ? last : s;
}

/* One key; the player moves in live runs, the cursor in replays. */
static void key(app *a, int ch, const pl_layout *lay)
{
    viz_view *v = &a->view;
    int order[PL_NUM_PANES], nv = visible(a, lay, order);
    double speed = 1;
    pl_mode mode = a->player ? pl_player_mode(a->player, &speed) : PL_MODE_STEP;
    switch (ch) {
    case 'q':
    case 'Q':
        a->quit = 1;
        break;
    case ' ':
    case KEY_RIGHT:
        if (ch == KEY_RIGHT && v->focus == PL_PANE_TIMELINE) {
            v->follow = 0;
            v->zoomed = 1;
            v->t_end += v->span / 4;
        } else if (a->player)
            pl_player_advance(a->player);
        else /* replay: the next step, with all of its events */
            viz_replay_next(&a->cur, a->nsteps);
        break;
    case KEY_LEFT:
        v->follow = 0;
        v->zoomed = 1;
        v->t_end -= v->span / 4;
        break;
    case KEY_UP:
    case KEY_DOWN: /* the focused pane: the narration, the links, else the ranks */
        if (v->focus == PL_PANE_NARRATION && v->transcript)
            scroll_narration(v, lay, ch == KEY_UP ? -1 : 1);
        else if (v->focus == PL_PANE_TOPOLOGY)
            scroll_links(a, lay, ch == KEY_UP ? -1 : 1);
        else if (ch == KEY_UP && v->rank_scroll > 0)
            v->rank_scroll--;
        else if (ch == KEY_DOWN && v->rank_scroll < a->model.nranks - 1)
            v->rank_scroll++;
        break;
    case KEY_PPAGE:
    case KEY_NPAGE: {
        int page = lay->pane[PL_PANE_NARRATION].h - 3;
        scroll_narration(v, lay, (ch == KEY_PPAGE ? -1 : 1) * (page > 1 ? page : 1));
        break;
    }
    case KEY_HOME:
        scroll_narration(v, lay, -1000000);
        break;
    case KEY_END:
    case 'e': /* where End does not come through (a terminal that is not its TERM) */
        v->narr_scroll = 0;
        break;
    case 'n':
    case 'N':
        v->big_narration = !v->big_narration;
        break;
    case 'p':
    case 'P':
        if (a->player)
            pl_player_set_mode(a->player, mode == PL_MODE_PLAY ? PL_MODE_STEP : PL_MODE_PLAY, 0);
        else
            a->playing = !a->playing;
        break;
    case '+':
    case '=':
        if (a->player)
            pl_player_set_mode(a->player, mode, speed * 2 > 100 ? 100 : speed * 2);
        else
            a->speed = a->speed * 2 > 100 ? 100 : a->speed * 2;
        break;
    case '-':
    case '_':
        if (a->player)
            pl_player_set_mode(a->player, mode, speed / 2 < 0.1 ? 0.1 : speed / 2);
        else
            a->speed = a->speed / 2 < 0.1 ? 0.1 : a->speed / 2;
        break;
    case '\t':
        for (int i = 0; i < nv; i++)
            if (order[i] == v->focus) {
                v->focus = order[(i + 1) % nv];
                return;
            }
        v->focus = nv ? order[0] : 0;
        break;
    case 'z':
        v->span /= 2;
        v->zoomed = 1;
        break;
    case 'Z':
        v->span *= 2;
        v->zoomed = 1;
        break;
    case 'f':
        v->follow = 1;
        break;
    case 't':
        if (a->model.have_modeled) {
            v->modeled = !v->modeled;
            v->span = 0;
            v->zoomed = 0;
            v->follow = 1;
        }
        break;
    case '?':
        v->help = !v->help;
        break;
    default:
        if (ch >= '1' && ch <= '9' && ch - '1' < nv) v->focus = order[ch - '1'];
        break;
    }
}

/* What the lab printed: its newest lines, and the transcript. */
static void feed(app *a, const char *buf, ssize_t n)
{
    a->log_off += n;
    viz_transcript_output(&a->ts, buf, (size_t)n);
    for (ssize_t i = 0; i < n; i++) {
        char *line = a->log[a->log_head];
        if (buf[i] == '\n') {
            a->log_head = (a->log_head + 1) % VIZ_LOG_LINES;
            a->log[a->log_head][0] = '\0';
            if (a->nlog < VIZ_LOG_LINES - 1) a->nlog++;
        } else {
            size_t len = strlen(line);
            if (len + 1 < sizeof a->log[0]) {
                line[len] = buf[i];
                line[len + 1] = '\0';
            }
        }
    }
}

/* The lab's newest output lines, for the narration pane, and the
 * transcript: its output up to where each narrated step came, then the
 * step (which brings the narration back to it). */
static void read_log(app *a)
{
    if (!captured_out) return;
    fflush(stdout);
    char buf[4096];
    for (;;) {
        narrated_step next = {0, 0, NULL};
        pthread_mutex_lock(&narr_lock);
        if (a->narr_done < nnarrated) next = narrated[a->narr_done];
        pthread_mutex_unlock(&narr_lock);
        size_t want = !next.text                                  ? sizeof buf
                      : next.off - a->log_off < (off_t)sizeof buf ? (size_t)(next.off - a->log_off)
                                                                  : sizeof buf;
        ssize_t n = want ? pread(fileno(captured_out), buf, want, a->log_off) : 0;
        if (n > 0) {
            feed(a, buf, n);
            continue;
        }
        if (!next.text || a->log_off < next.off) break;
        viz_transcript_step(&a->ts, next.step, next.text);
        a->view.narr_scroll = 0;
        a->narr_done++;
    }
    /* oldest first, the line being written last */
    a->view.nlog = 0;
    for (int k = a->nlog; k >= 0; k--) {
        int idx = ((a->log_head - k) % VIZ_LOG_LINES + VIZ_LOG_LINES) % VIZ_LOG_LINES;
        if (k == 0 && !a->log[idx][0]) break;
        a->view.log[a->view.nlog++] = a->log[idx];
    }
}

/* Everything a frame shows, from the two places it comes from, here and
 * nowhere else:
 *   the trace (a live run): the ranks' events and the notes (each step,
 *     metric value and device memory sample, taken by core on the ranks'
 *     threads), into the model and the trace file (viz_model_take); the UI
 *     makes no CUDA call and asks no device anything;
 *   the lab's printed output (captured stdout) with the narrated steps where
 *     they came in it (read_log). It stays a byte stream read from its file:
 *     any code of the lab prints into it (printf, the CUDA runtime's
 *     messages), unframed, and it is printed again in full once the screen
 *     is restored; the player marks where each step's narration came in it
 *     (on_step_shown, at the moment it is shown, on rank 0's thread), which
 *     no clock in a trace note could give.
 * A replay has no trace (its events come from the file, replay_frame). */
static void drain(app *a)
{
    if (a->trace) viz_model_take(&a->model, a->trace, a->writer, a->buf, 4096);
    read_log(a);
}

/* A frame of a replay, `dt` wall seconds after the one before: the cursor
 * moves, the items it passed go into the model, the header and the
 * narration say where it is. */
static void replay_frame(app *a, double dt)
{
    viz_view *v = &a->view;
    if (a->playing) viz_replay_play(&a->cur, a->nsteps, dt, a->speed);
    size_t want = viz_replay_shown(a->first, a->nsteps, a->cur);
    for (; a->shown < want && a->shown < a->nitems; a->shown++) {
        viz_replay_apply(&a->model, &a->tr, &a->items[a->shown]);
    }
    int k = a->cur.step, done = viz_replay_done(a->cur, a->nsteps);
    if (a->tr.nmarks) {
        v->step = a->tr.marks[k - 1].step;
        /* "[k] text", as the live run's narration and its printed lines have it */
        snprintf(v->narration, sizeof v->narration, "[%d] %s", a->tr.marks[k - 1].step,
                 a->tr.marks[k - 1].text);
    } else
        v->step = k;
    if (done)
        snprintf(a->mode_text, sizeof a->mode_text, "replay done");
    else if (a->playing)
        snprintf(a->mode_text, sizeof a->mode_text, "replay x%.1f", a->speed);
    else
        snprintf(a->mode_text, sizeof a->mode_text, "replay paused (space: next)");
    snprintf(a->status_text, sizeof a->status_text, "%.159s",
             done ? "the replay is over: q quits" : a->intro);
}

/* Frames until the student quits; live: world_done says when the ranks end. */
static void loop(app *a)
{
    double last = pl_now();
    while (!a->quit) {
        if (quit_signal) a->quit = 2;           /* Ctrl-C or SIGTERM */
        if (atomic_load(&stalled)) a->quit = 3; /* no progress: the watchdog */
        if (a->stopping && __atomic_load_n(&a->world_done, __ATOMIC_ACQUIRE)) break;
        drain(a);
        viz_view *v = &a->view;
        if (a->player) {
            v->step = pl_player_current(a->player, v->narration, sizeof v->narration);
            double speed;
            pl_mode m = pl_player_mode(a->player, &speed);
            if (__atomic_load_n(&a->world_done, __ATOMIC_ACQUIRE)) {
                snprintf(a->mode_text, sizeof a->mode_text, "done");
                snprintf(a->status_text, sizeof a->status_text, "%s%.120s",
                         a->world_status ? "the run failed: " : "the run is over: q quits",
                         a->world_status ? a->world_err : "");
            } else if (m == PL_MODE_PLAY)
                snprintf(a->mode_text, sizeof a->mode_text, "play x%.1f", speed);
            else if (!strcmp(v->narration, PL_STEP_RUNNING))
                /* pl_step_begin: the step's work runs, its narration comes
                 * when it is done; a space now would skip it, unread */
                snprintf(a->mode_text, sizeof a->mode_text, "step (running...)");
            else
                snprintf(a->mode_text, sizeof a->mode_text, "step (space: next)");
        } else /* replay: the cursor moves at `speed` steps a second while playing */
            replay_frame(a, pl_now() - last);
        last = pl_now();
        v->mode = a->mode_text;
        v->status = a->status_text[0] ? a->status_text : NULL;
        clamp_view(a);
        if (a->grid.w != COLS || a->grid.h != LINES) viz_grid_resize(&a->grid, COLS, LINES);
        pl_layout lay; /* the narration grows for a step with more to say; n: all of it */
        pl_viz_layout_stages(
            COLS, LINES, v->ndev, a->model.pp.have_stage_rank ? a->model.pp.stages : 0,
            v->big_narration ? 0 : a->panes, viz_narration_rows(v, COLS - 2), &lay);
        viz_render(&a->grid, &lay, &a->model, v);
        term_flush(&a->grid);
        int ch = getch(); /* waits up to a frame */
        while (ch != ERR) {
            if (ch != KEY_RESIZE) key(a, ch, &lay);
            ch = getch();
            if (ch == ERR) break;
        }
        timeout(FRAME_MS);
    }
}

/* ---- live runs -------------------------------------------------------------------------- */

typedef struct {
    const pl_world_config *wc;
    pl_rank_fn fn;
    void *arg;
    int status;
    char err[1024];
    app *a;
} world_job;

static void *world_thread(void *p)
{
    world_job *j = p;
    j->status = pl_world_run_config(j->wc, j->fn, j->arg, j->err, sizeof j->err);
    j->a->world_status = j->status;
    snprintf(j->a->world_err, sizeof j->a->world_err, "%s", j->err);
    __atomic_store_n(&j->a->world_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The ranks cannot be stopped (a kernel never ends, or the student asked
 * twice): the terminal is given back, the trace file finished with what it
 * has, and the process ends here, since nothing can wait for those ranks.
 * Exit status: 130 after Ctrl-C, 0 after q, 1 when the watchdog stopped a
 * run nobody asked to stop. */
static _Noreturn void stop_now(app *a, int quit)
{
    drain(a);
    char werr[512];
    if (a->writer) pl_trace_writer_close(a->writer, werr, sizeof werr);
    term_stop();
    fflush(stdout);
    if (atomic_load(&stalled))
        fprintf(stderr, "  %s%s%s%s\n", quit ? "stopped by the student" : "the run is stopped: ",
                quit == 2 ? " (Ctrl-C): the ranks cannot reach their next step: "
                : quit    ? ": the ranks cannot reach their next step: "
                          : "",
                stall_report, quit ? "" : ": an endless loop? (--stall-timeout S allows longer)");
    else {
        char running[600] = "";
        pl_device_describe_running(running, sizeof running);
        fprintf(stderr, "  stopped by the student%s before the ranks reached their next step%s%s\n",
                quit == 2 ? " (Ctrl-C)" : "", *running ? ": " : "", running);
    }
    fflush(stderr);
    _exit(quit == 2 ? 130 : quit ? 0 : 1);
}

int pl_viz_run_world(const pl_viz_config *vc, const pl_world_config *wc, pl_rank_fn fn, void *arg,
                     pl_trace_writer *writer, int *quit, char *err, size_t err_size)
{
    app a;
    memset(&a, 0, sizeof a);
    *quit = 0;
    a.player = wc->player;
    a.trace = wc->trace;
    a.writer = writer;
    a.panes = vc->panes;
    a.buf = malloc(4096 * sizeof *a.buf);
    viz_model_init(&a.model, wc->n);
    for (int r = 0; r < wc->n && r < PL_MAX_RANKS; r++) a.model.roles[r] = vc->roles[r];
    a.model.stream_lanes = vc->stream_lanes;
    if (pl_viz_check_matrices(vc->matrices, vc->nmatrices, vc->tp, wc->n, err, err_size) ||
        viz_model_set_matrices(&a.model, vc->matrices, vc->nmatrices, vc->tp, err, err_size) ||
        pl_viz_check_pipeline(vc->pipeline, wc->n, err, err_size) ||
        viz_model_set_pipeline(&a.model, vc->pipeline, err, err_size) ||
        pl_viz_check_mesh(vc->mesh, wc->n, err, err_size) ||
        viz_model_set_mesh(&a.model, vc->mesh, err, err_size) ||
        pl_viz_check_zero(vc->zero, wc->n, err, err_size) ||
        viz_model_set_zero(&a.model, vc->zero, err, err_size)) {
        free(a.buf);
        viz_model_free(&a.model);
        return 1;
    }
    a.view = (viz_view){.title = vc->title,
                        .steps = vc->steps,
                        .clock = vc->clock,
                        .modeled = vc->modeled,
                        .follow = 1,
                        .ndev = wc->n,
                        .focus = PL_PANE_NARRATION};
    a.grid.utf8 = 0;
    if (!a.buf || !a.player || term_start() != 0) {
        free(a.buf);
        viz_model_free(&a.model);
        snprintf(err, err_size, "the terminal UI cannot start");
        return 1;
    }
    a.grid.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
    a.view.transcript = &a.ts;
    pl_player_set_listener(a.player, on_step_shown, NULL);
    pl_player_set_quiet(a.player, 1);
    pl_player_set_interactive(a.player, 1);
    pl_watchdog_ignore_thread(); /* drawing frames is not the ranks' work */
    world_job j = {wc, fn, arg, 0, "", &a};
    pthread_t t;
    if (pthread_create(&t, NULL, world_thread, &j) != 0) {
        term_stop();
        snprintf(err, err_size, "cannot start the world's thread");
        return 1;
    }
    for (;;) {
        loop(&a);
        if (__atomic_load_n(&a.world_done, __ATOMIC_ACQUIRE)) break;
        if (a.quit == 3 || a.stopping) stop_now(&a, a.quit == 3 ? *quit : a.quit);
        /* quit while the ranks run: stop them at their next step, and keep
         * the screen (and the keys) alive meanwhile; ranks that cannot get
         * there (a kernel in an endless loop) are caught by the watchdog,
         * now after 1 s of CPU time without progress, or by a second quit */
        *quit = a.quit;
        pl_player_quit(a.player);
        pl_watchdog_hurry(1.0);
        quit_signal = 0;
        a.quit = 0;
        a.stopping = 1;
        snprintf(a.status_text, sizeof a.status_text,
                 "stopping the ranks at their next step... (q or Ctrl-C again: stop now)");
    }
    pthread_join(t, NULL);
    pl_player_set_listener(a.player, NULL, NULL);
    drain(&a); /* the last events, for the trace file */
    term_stop();
    viz_transcript_free(&a.ts);
    free(a.buf);
    viz_grid_free(&a.grid);
    viz_model_free(&a.model);
    snprintf(err, err_size, "%s", j.err);
    if (*quit) return 0;
    return j.status;
}

/* ---- replay ----------------------------------------------------------------------------- */

int pl_viz_replay(const char *path, pl_mode mode, double speed, char *err, size_t err_size)
{
    return pl_viz_replay_traces(&path, 1, mode, speed, err, err_size);
}

int pl_viz_replay_traces(const char *const *paths, int n, pl_mode mode, double speed, char *err,
                         size_t err_size)
{
    app a;
    memset(&a, 0, sizeof a);
    if (viz_read_traces(paths, n, &a.tr, NULL, NULL, err, err_size)) return 2;
    const char *path = paths[0];
    viz_trace *t = &a.tr;
    char why[256];
    if (!pl_viz_available(why, sizeof why)) {
        snprintf(err, err_size, "%s: %zu events of %d rank%s read; %s, so nothing to show", path,
                 t->nev, t->nranks, t->nranks == 1 ? "" : "s", why);
        viz_trace_free(t);
        return 1;
    }
    a.nsteps = viz_replay_plan(t, &a.items, &a.nitems, &a.first);
    if (a.nsteps < 1) {
        snprintf(err, err_size, "%s: out of memory", path);
        viz_trace_free(t);
        return 1;
    }
    viz_model_init(&a.model, t->nranks);
    a.model.stream_lanes = t->stream_lanes;
    /* the file's matrices (checked as it was read) for the shards pane */
    char merr[256];
    if (viz_model_set_matrices(&a.model, t->matrices, t->nmatrices, t->tp, merr, sizeof merr))
        t->nmatrices = 0;
    /* and its pipeline (checked as it was read) for the pipeline pane */
    if (t->pipeline.stages > 0) viz_model_set_pipeline(&a.model, &t->pipeline, merr, sizeof merr);
    if (t->mesh.dp > 0) viz_model_set_mesh(&a.model, &t->mesh, merr, sizeof merr); /* mesh pane */
    if (t->zero.ranks > 0) viz_model_set_zero(&a.model, &t->zero, merr, sizeof merr); /* memory */
    /* the lab's panes (the shards only with the matrices: an older file
     * has none), else all the events fill */
    a.panes = t->panes ? t->panes & ~(t->nmatrices ? 0u : PL_PANE_BIT(PL_PANE_SHARDS))
                       : PL_PANE_BIT(PL_PANE_DEVICES) | PL_PANE_BIT(PL_PANE_TIMELINE) |
                             PL_PANE_BIT(PL_PANE_TOPOLOGY) | PL_PANE_BIT(PL_PANE_METRICS) |
                             (t->nmatrices ? PL_PANE_BIT(PL_PANE_SHARDS) : 0u);
    if (a.model.pp.stages > 0) a.panes |= PL_PANE_BIT(PL_PANE_PIPELINE);
    if (a.model.mesh.dp > 0) /* the mesh pane: with the file's mesh only */
        a.panes |= PL_PANE_BIT(PL_PANE_MESH);
    else
        a.panes &= ~PL_PANE_BIT(PL_PANE_MESH);
    if (a.model.zero.ranks > 0) /* the memory pane: with the file's ZeRO run only */
        a.panes |= PL_PANE_BIT(PL_PANE_MEMORY);
    else
        a.panes &= ~PL_PANE_BIT(PL_PANE_MEMORY);
    if (t->npictures) /* the picture pane: with the file's pictures (else as the lab said) */
        a.panes |= PL_PANE_BIT(PL_PANE_PICTURE);
    /* a pipeline: forward/backward events of a stage, as the pipeline pane
     * takes them (a layer and a micro-batch: Lab 07's per-layer backwards
     * have a layer and no micro-batch, and are no pipeline's; a ZeRO run's
     * are of its units: none) */
    for (size_t i = 0; i < t->nev && a.model.zero.ranks < 1; i++)
        if (viz_is_pipeline_op(&a.model, &t->ev[i])) {
            a.panes |= PL_PANE_BIT(PL_PANE_PIPELINE);
            break;
        }
    double span = 0;
    for (size_t i = 0; i < t->nev; i++)
        if (t->ev[i].end - t->ev[0].start > span) span = t->ev[i].end - t->ev[0].start;
    a.speed = speed < 0.1 ? 0.1 : speed > 100 ? 100 : speed; /* steps a second, as a lab plays */
    a.playing = mode == PL_MODE_PLAY;
    a.cur = (viz_cursor){1, 0};
    int steps = t->nmarks ? t->marks[t->nmarks - 1].step : a.nsteps;
    a.view = (viz_view){.title = t->title[0] ? t->title : path,
                        .recorded = 1,
                        .modeled = t->modeled,
                        .follow = 1,
                        .ndev = t->nranks,
                        .focus = PL_PANE_NARRATION,
                        .steps = t->steps > steps ? t->steps : steps,
                        .span = span > 0 ? span : 1e-3};
    snprintf(a.intro, sizeof a.intro,
             "replay of %s: %zu events, %d rank%s, %d step%s; p play/pause, space next step, "
             "+/- speed",
             path, t->nev, t->nranks, t->nranks == 1 ? "" : "s", a.nsteps,
             a.nsteps == 1 ? "" : "s");
    if (!t->nmarks)
        snprintf(a.view.narration, sizeof a.view.narration,
                 "This trace has no narration (an older paralab wrote it): it plays in %d parts "
                 "of its %zu events, a part a step.",
                 VIZ_REPLAY_PARTS, t->nev);
    if (term_start() != 0) {
        snprintf(err, err_size, "the terminal UI cannot start");
        free(a.items);
        free(a.first);
        viz_trace_free(t);
        viz_model_free(&a.model);
        return 1;
    }
    a.grid.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
    loop(&a);
    term_stop();
    viz_grid_free(&a.grid);
    viz_model_free(&a.model);
    free(a.items);
    free(a.first);
    viz_trace_free(t);
    return 0;
}
