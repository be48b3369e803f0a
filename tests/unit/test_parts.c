/*
 * test_parts.c — a multi-process run's trace: the name of each process's
 * part (pl_trace_path_for_process), the header a part says itself with
 * (pl_trace_writer_open_part: run, process, processes, its ranks; a
 * process's own thread index written as its global rank), and the merge of
 * the parts into one timeline (viz_read_traces, paralab-viz): the exact
 * order of the merged events and every rank of the world, and the exact
 * refusal of parts of different runs or worlds, a part missing, twice, or
 * alone.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paralab/trace.h"
#include "paralab/viz.h"
#include "suites.h"
#include "../../viz/vizint.h"

static void test_part_names(void)
{
    char out[64];
    struct {
        const char *path;
        int p, n;
        const char *want;
    } cases[] = {
        {"run.json", 1, 2, "run.p1.json"},           {"out/run", 1, 2, "out/run.p1"},
        {"dir.d/run", 0, 3, "dir.d/run.p0"},         {"dir.d/.trace", 1, 2, "dir.d/.trace.p1"},
        {"a.b.json", 10, 12, "a.b.p10.json"},        {"run.json", 0, 1, "run.json"},
        {"/tmp/x/t.json", 3, 4, "/tmp/x/t.p3.json"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CU_ASSERT_EQUAL(
            pl_trace_path_for_process(cases[i].path, cases[i].p, cases[i].n, out, sizeof out), 0);
        CU_ASSERT_STRING_EQUAL(out, cases[i].want);
    }
    strcpy(out, "x");
    CU_ASSERT_EQUAL(pl_trace_path_for_process("run.json", 2, 2, out, sizeof out), -1);
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_EQUAL(pl_trace_path_for_process("run.json", -1, 2, out, sizeof out), -1);
    CU_ASSERT_EQUAL(pl_trace_path_for_process("run.json", 0, 0, out, sizeof out), -1);
    CU_ASSERT_EQUAL(pl_trace_path_for_process("run.json", 0, 65, out, sizeof out), -1);
    strcpy(out, "x");
    CU_ASSERT_EQUAL(pl_trace_path_for_process("run.json", 1, 2, out, 11), -1); /* 12 needed */
    CU_ASSERT_STRING_EQUAL(out, "");
    CU_ASSERT_EQUAL(pl_trace_path_for_process("run.json", 1, 2, out, 12), 0);
    CU_ASSERT_STRING_EQUAL(out, "run.p1.json");
}

static void test_run_id(void)
{
    char a[40], b[40], small[8];
    pl_trace_run_id(a, sizeof a);
    usleep(1000);
    pl_trace_run_id(b, sizeof b);
    CU_ASSERT(strlen(a) >= 1 && strlen(a) <= 39);
    CU_ASSERT_STRING_NOT_EQUAL(a, b); /* another moment: another run */
    char pid[24];
    snprintf(pid, sizeof pid, "-%ld-", (long)getpid());
    CU_ASSERT_PTR_NOT_NULL(strstr(a, pid));
    for (const char *c = a; *c; c++) CU_ASSERT(*c > 0x20 && *c < 0x7f && *c != '"' && *c != '\\');
    pl_trace_run_id(small, sizeof small);
    CU_ASSERT_EQUAL(strlen(small), 7);
}

static char dir[] = "/tmp/paralab-parts-XXXXXX";

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

typedef struct {
    int rank; /* as the process records it: its global rank or its thread index */
    double start_us;
    const char *label;
    int step; /* the narrated step it was recorded in (0: none) */
} ev_spec;

/* Writes process p's part of run `run` (world ranks in `processes`
 * processes, T = world / processes ranks each) into dir/name, with its
 * events (modeled clock, 1 us each) and, when `narrate`, steps 1 (at 0) and
 * 2 (at 4 us). 0, or -1. */
static int write_part(const char *name, const char *run, int p, int processes, int world,
                      const ev_spec *ev, int n, int narrate)
{
    char path[256], err[512];
    path_of(path, sizeof path, name);
    int t = world / processes;
    pl_trace_part part = {
        .process = p, .processes = processes, .world = world, .first_rank = p * t, .nranks = t};
    snprintf(part.run, sizeof part.run, "%s", run);
    pl_trace_writer *w = pl_trace_writer_open_part(path, &part, 1, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(w);
    if (!w) return -1;
    pl_trace_writer_describe(w, "parts", 2, 0, 0);
    for (int i = 0; i < n; i++) {
        pl_event e = {
            .rank = ev[i].rank, .kind = PL_EV_KERNEL, .micro_batch = -1, .layer = -1, .peer = -1};
        e.modeled_start = ev[i].start_us * 1e-6;
        e.modeled_end = e.modeled_start + 1e-6;
        e.step = ev[i].step;
        snprintf(e.label, sizeof e.label, "%s", ev[i].label);
        pl_trace_writer_add(w, &e, 1);
    }
    if (narrate) {
        pl_note notes[2] = {{.kind = PL_NOTE_STEP, .step = 1, .text = "one"},
                            {.kind = PL_NOTE_STEP, .step = 2, .text = "two", .modeled_at = 4e-6}};
        pl_trace_writer_add_notes(w, notes, 2);
    }
    pl_note mem = {.kind = PL_NOTE_MEMORY,
                   .rank = 0,
                   .value = 100 + p,
                   .total = 1000,
                   .modeled_at = 1e-6}; /* thread 0's device: global rank p * t */
    pl_trace_writer_add_notes(w, &mem, 1);
    return pl_trace_writer_close(w, err, sizeof err);
}

/* The three parts of run "R" (6 ranks, 3 processes of 2): process 0 and 1
 * record global ranks, process 2 its threads' indices 0 and 1. */
static void write_run(const char *base, const char *run, int world)
{
    ev_spec p0[] = {{0, 1, "a", 0}, {1, 3, "b", 0}, {0, 5, "c", 0}};
    ev_spec p1[] = {{2, 1, "d", 0}, {3, 4, "e", 0}};
    ev_spec p2[] = {{0, 2, "f", 0}, {1, 5, "g", 0}};
    const ev_spec *ev[] = {p0, p1, p2};
    int n[] = {3, 2, 2};
    for (int p = 0; p < 3; p++) {
        char name[64];
        pl_trace_path_for_process(base, p, 3, name, sizeof name);
        CU_ASSERT_EQUAL(write_part(name, run, p, 3, world, ev[p], n[p], 1), 0);
    }
}

static int setup(void) { return mkdtemp(dir) ? 0 : -1; }

static int cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_part_header(void)
{
    write_run("hdr.json", "R", 6);
    char path[256];
    path_of(path, sizeof path, "hdr.p2.json");
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    json_t *o = json_object_get(root, "otherData");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "run")), "R");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "ranks")), 6);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "process")), 2);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "processes")), 3);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "first_rank")), 4);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "part_ranks")), 2);
    /* its own ranks' names only; thread indices 0 and 1 written as ranks 4 and 5 */
    size_t i;
    json_t *e;
    int names = 0, pids[2] = {-1, -1}, k = 0, mem_pid = -1;
    json_array_foreach(json_object_get(root, "traceEvents"), i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        int pid = (int)json_integer_value(json_object_get(e, "pid"));
        if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
            CU_ASSERT(pid == 4 + names);
            names++;
        }
        if (!strcmp(ph, "X") && k < 2) pids[k++] = pid;
        if (!strcmp(ph, "C")) mem_pid = pid;
    }
    CU_ASSERT_EQUAL(names, 2);
    CU_ASSERT_EQUAL(pids[0], 4);
    CU_ASSERT_EQUAL(pids[1], 5);
    CU_ASSERT_EQUAL(mem_pid, 4);
    json_decref(root);

    char err[512];
    path_of(path, sizeof path, "bad.json");
    pl_trace_part bad = {.run = "R", .process = 3, .processes = 3, .world = 6, .nranks = 2};
    CU_ASSERT_PTR_NULL(pl_trace_writer_open_part(path, &bad, 1, 0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "a trace part's process 3: allowed are 0..2 (processes 3)");
    bad = (pl_trace_part){
        .run = "R", .process = 2, .processes = 3, .world = 6, .first_rank = 5, .nranks = 2};
    CU_ASSERT_PTR_NULL(pl_trace_writer_open_part(path, &bad, 1, 0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "a trace part's ranks 5..6 (first_rank 5, nranks 2): allowed are "
                                "at least one, within the world's 0..5");
    bad = (pl_trace_part){.run = "a\"b", .processes = 1, .world = 1, .nranks = 1};
    CU_ASSERT_PTR_NULL(pl_trace_writer_open_part(path, &bad, 1, 0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "a trace part needs a run id of 1 to 39 printable ASCII bytes "
                                "without '\"' or '\\' (pl_trace_run_id makes one)");
}

/* Merged: every part's events by start, a tie to the lower process; the
 * world's six ranks; process 0's narration; every part's memory sample. */
static void test_merge_order(void)
{
    write_run("m.json", "R", 6);
    char p0[256], p1[256], p2[256], base[256], err[1024];
    path_of(p0, sizeof p0, "m.p0.json");
    path_of(p1, sizeof p1, "m.p1.json");
    path_of(p2, sizeof p2, "m.p2.json");
    path_of(base, sizeof base, "m.json");
    const char *want_label[] = {"a", "d", "f", "b", "e", "c", "g"};
    int want_rank[] = {0, 2, 4, 1, 3, 0, 5};
    double want_us[] = {1, 1, 2, 3, 4, 5, 5};
    const char *given[2][3] = {{p2, p0, p1}, {base}}; /* any order; or the --trace name */
    for (int g = 0; g < 2; g++) {
        viz_trace t;
        char **files = NULL;
        int nf = 0;
        CU_ASSERT_EQUAL_FATAL(
            viz_read_traces(given[g], g ? 1 : 3, &t, &files, &nf, err, sizeof err), 0);
        CU_ASSERT_EQUAL(nf, 3);
        if (nf == 3) {
            CU_ASSERT_STRING_EQUAL(files[0], g ? p0 : p2);
            CU_ASSERT_STRING_EQUAL(files[2], g ? p2 : p1);
        }
        viz_free_files(files, nf);
        CU_ASSERT_EQUAL(t.nranks, 6);
        CU_ASSERT_EQUAL(t.processes, 3);
        CU_ASSERT_STRING_EQUAL(t.run, "R");
        CU_ASSERT_EQUAL_FATAL(t.nev, 7);
        for (size_t i = 0; i < t.nev; i++) {
            CU_ASSERT_STRING_EQUAL(t.ev[i].label, want_label[i]);
            CU_ASSERT_EQUAL(t.ev[i].rank, want_rank[i]);
            CU_ASSERT_DOUBLE_EQUAL(t.ev[i].start, want_us[i] * 1e-6, 1e-12);
        }
        CU_ASSERT_EQUAL(t.nmarks, 2); /* process 0's narration, once */
        CU_ASSERT_STRING_EQUAL(t.title, "parts");
        CU_ASSERT_EQUAL_FATAL(t.nmemory, 3);
        for (int p = 0; p < 3; p++) {
            CU_ASSERT_EQUAL(t.memory[p].rank, 2 * p);
            CU_ASSERT_DOUBLE_EQUAL(t.memory[p].used, 100 + p, 0);
        }
        viz_trace_free(&t);
    }
    /* the public reader, and the check's summary */
    const char *three[] = {p0, p1, p2};
    pl_event *ev;
    size_t n;
    int nranks, modeled;
    CU_ASSERT_EQUAL(pl_viz_read_traces(three, 3, &ev, &n, &nranks, &modeled, err, sizeof err), 0);
    CU_ASSERT_EQUAL(n, 7);
    CU_ASSERT_EQUAL(nranks, 6);
    CU_ASSERT_EQUAL(modeled, 1);
    free(ev);
    char msg[2048], want[2048];
    CU_ASSERT_EQUAL(pl_viz_check_traces(three, 3, msg, sizeof msg), 0);
    snprintf(want, sizeof want,
             "%s (3 parts of run \"R\", merged: events of 6 of the world's 6 ranks): 7 slices on "
             "6 tracks of 6 ranks, every track's slices nested or apart; 2 narrated steps, 0 "
             "metric values, 0 pictures",
             p0);
    CU_ASSERT_STRING_EQUAL(msg, want);
}

/* Parts that do not belong together: refused, naming the files. */
static void test_merge_refusals(void)
{
    write_run("r.json", "R", 6);
    write_run("s.json", "S", 6);
    ev_spec one[] = {{0, 1, "a", 0}};
    CU_ASSERT_EQUAL(write_part("w.p1.json", "R", 1, 3, 9, (ev_spec[]){{3, 1, "x", 0}}, 1, 0), 0);
    CU_ASSERT_EQUAL(write_part("w.p0.json", "R", 0, 2, 4, one, 1, 0), 0);
    char r0[256], r1[256], r2[256], s1[256], w1[256], alone[256], msg[2048], want[2048];
    path_of(r0, sizeof r0, "r.p0.json");
    path_of(r1, sizeof r1, "r.p1.json");
    path_of(r2, sizeof r2, "r.p2.json");
    path_of(s1, sizeof s1, "s.p1.json");
    path_of(w1, sizeof w1, "w.p1.json");
    path_of(alone, sizeof alone, "alone.json");
    {
        pl_trace_writer *w = pl_trace_writer_open(alone, 1, 1, 0, msg, sizeof msg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_EQUAL(pl_trace_writer_close(w, msg, sizeof msg), 0);
    }
    struct {
        const char *files[3];
        int n;
        const char *fmt; /* %1$s.. the files */
    } cases[] = {
        {{r0, s1, r2},
         3,
         "%1$s is a part of run \"R\", %2$s of run \"S\": parts of different runs cannot be "
         "merged"},
        {{r0, w1, r2},
         3,
         "%1$s is a part of a world of 6 ranks in 3 processes, %2$s of 9 ranks in 3 processes: "
         "parts of different worlds cannot be merged"},
        {{r0, r2}, 2, "run \"R\" has 3 processes, 2 parts given: process 1's part is missing"},
        {{r0, r1, r1}, 3, "%2$s and %3$s are both process 1's part"},
        {{r1, alone},
         2,
         "%2$s: not a part of a multi-process run (no otherData.run): paralab-viz merges the "
         "parts one run wrote (FILE.p0.json FILE.p1.json ...), or shows one trace alone"},
        {{r1},
         1,
         "%1$s is process 1's part of a run of 3 processes: give every part (paralab-viz PART0 "
         "PART1 ...), or the name given to --trace"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pl_event *ev = NULL;
        size_t n;
        int nranks, modeled;
        CU_ASSERT_EQUAL(pl_viz_read_traces(cases[i].files, cases[i].n, &ev, &n, &nranks, &modeled,
                                           msg, sizeof msg),
                        -1);
        CU_ASSERT_PTR_NULL(ev);
        snprintf(want, sizeof want, cases[i].fmt, cases[i].files[0], cases[i].files[1],
                 cases[i].files[2]);
        CU_ASSERT_STRING_EQUAL(msg, want);
        CU_ASSERT_EQUAL(pl_viz_check_traces(cases[i].files, cases[i].n, msg, sizeof msg), 2);
        CU_ASSERT_STRING_EQUAL(msg, want);
    }
    /* a part with an event of a rank not its own (event 4: after two ranks' names, the
     * lab's, the track's) */
    char bad[256];
    CU_ASSERT_EQUAL(write_part("b.p1.json", "R", 1, 2, 4, (ev_spec[]){{5, 1, "x", 0}}, 1, 0), 0);
    path_of(bad, sizeof bad, "b.p1.json");
    pl_event *ev = NULL;
    size_t n;
    int nranks, modeled;
    const char *b1[] = {bad};
    CU_ASSERT_EQUAL(pl_viz_read_traces(b1, 1, &ev, &n, &nranks, &modeled, msg, sizeof msg), -1);
    snprintf(want, sizeof want,
             "%s: event 4: rank 5 is not one of this part's ranks 2..3 (process 1 of 2)", bad);
    CU_ASSERT_STRING_EQUAL(msg, want);
    /* a header that says a part but not all of it (no processes) */
    char half[256];
    path_of(half, sizeof half, "half.json");
    FILE *f = fopen(half, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"otherData\":{\"clock\":\"modeled\",\"ranks\":4,\"run\":\"R\",\"process\":0},"
          "\"traceEvents\":[]}",
          f);
    fclose(f);
    const char *h1[] = {half};
    CU_ASSERT_EQUAL(pl_viz_read_traces(h1, 1, &ev, &n, &nranks, &modeled, msg, sizeof msg), -1);
    snprintf(want, sizeof want,
             "%s: a part of a multi-process run needs in otherData: run (1 to 39 bytes), ranks "
             "(the world's, 1..64), processes (1..64), process (0..processes-1), first_rank and "
             "part_ranks (its ranks, within the world)",
             half);
    CU_ASSERT_STRING_EQUAL(msg, want);
}

/* Process 0's events say their step, process 1's do not: each of these
 * gets process 0's step at its start (step 1 from 0, step 2 from 4 us). */
static void test_merge_steps(void)
{
    ev_spec p0[] = {{0, 1, "a", 1}, {0, 5, "b", 2}};
    ev_spec p1[] = {{1, 2, "c", 0}, {1, 4, "d", 0}, {1, 6, "e", 0}};
    CU_ASSERT_EQUAL(write_part("st.p0.json", "T", 0, 2, 2, p0, 2, 1), 0);
    CU_ASSERT_EQUAL(write_part("st.p1.json", "T", 1, 2, 2, p1, 3, 0), 0);
    char base[256], err[1024];
    path_of(base, sizeof base, "st.json");
    const char *given[] = {base};
    viz_trace t;
    CU_ASSERT_EQUAL_FATAL(viz_read_traces(given, 1, &t, NULL, NULL, err, sizeof err), 0);
    const char *label[] = {"a", "c", "d", "b", "e"};
    int step[] = {1, 1, 2, 2, 2};
    CU_ASSERT_EQUAL_FATAL(t.nev, 5);
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_STRING_EQUAL(t.ev[i].label, label[i]);
        CU_ASSERT_EQUAL(t.ev[i].step, step[i]);
    }
    CU_ASSERT_EQUAL(t.nranks, 2);
    viz_trace_free(&t);
}

/* The panes' metadata (a matrix's name, the pipeline's schedule, the
 * mesh's order) read from one whole trace, and from merged parts, names
 * what the result owns: viz_read_traces copies the trace it read, and the
 * names pointed into the copy it freed (the replay lost the mesh pane). */
static void check_names(const viz_trace *t)
{
    CU_ASSERT_EQUAL_FATAL(t->nmatrices, 1);
    CU_ASSERT_PTR_EQUAL(t->matrices[0].name, t->matrix_names[0]);
    CU_ASSERT_STRING_EQUAL(t->matrices[0].name, "W1");
    CU_ASSERT_PTR_EQUAL(t->pipeline.schedule, t->pipeline_schedule);
    CU_ASSERT_STRING_EQUAL(t->pipeline.schedule, "1f1b");
    CU_ASSERT_PTR_EQUAL(t->mesh.order, t->mesh_order);
    CU_ASSERT_STRING_EQUAL(t->mesh.order, "picotron");
}

static void describe_all(pl_trace_writer *w)
{
    pl_trace_writer_describe(w, "names", 1, 0, 0);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_matrix(w, "W1", 4, 8, 'c', 0, 2), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_pipeline(w, 2, 4, 1, "1f1b", 0.25, 0.2, NULL), 0);
    CU_ASSERT_EQUAL(pl_trace_writer_describe_mesh(w, 2, 2, 2, "picotron"), 0);
}

static void test_pane_names_owned(void)
{
    char path[256], err[1024];
    path_of(path, sizeof path, "names.json");
    pl_trace_writer *w = pl_trace_writer_open(path, 8, 1, 0, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    describe_all(w);
    CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    const char *one[] = {path};
    viz_trace t;
    int rc = viz_read_traces(one, 1, &t, NULL, NULL, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    check_names(&t);
    viz_trace_free(&t);
    /* two parts: process 0's metadata */
    for (int p = 0; p < 2; p++) {
        char name[64];
        pl_trace_path_for_process("nm.json", p, 2, name, sizeof name);
        path_of(path, sizeof path, name);
        pl_trace_part part = {
            .process = p, .processes = 2, .world = 8, .first_rank = 4 * p, .nranks = 4};
        snprintf(part.run, sizeof part.run, "N");
        w = pl_trace_writer_open_part(path, &part, 1, 0, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        describe_all(w);
        CU_ASSERT_EQUAL(pl_trace_writer_close(w, err, sizeof err), 0);
    }
    path_of(path, sizeof path, "nm.json");
    rc = viz_read_traces(one, 1, &t, NULL, NULL, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    check_names(&t);
    viz_trace_free(&t);
}

int register_parts_suite(void)
{
    static const unit_test tests[] = {
        {"the file of each process's part", test_part_names},
        {"a run id: printable, the process's, another each time", test_run_id},
        {"a part's header: run, process, its ranks; thread indices as global ranks",
         test_part_header},
        {"parts merged: events by start, a tie to the lower process; every rank", test_merge_order},
        {"parts of other runs, worlds, missing, twice, alone: refused", test_merge_refusals},
        {"a part's events without steps: process 0's step at their start", test_merge_steps},
        {"the panes' names (matrix, schedule, mesh order) owned by what was read",
         test_pane_names_owned},
    };
    return UNIT_SUITE_SETUP("parts", setup, cleanup, tests);
}
